#include <fmt/format.h>

#include "app/daemon/daemon_module.h"
#include "core/time_format.h"
#include "os/log.h"

namespace cgov {
namespace {

constexpr int64_t kLogEveryMs = 60'000;

}  // namespace

const std::vector<GpuInfo>& DaemonContext::gpus() const {
  static const std::vector<GpuInfo> kNone;
  return nvml_ ? nvml_->gpus() : kNone;
}

Result<ResolvedPrice> DaemonContext::PriceOf(const GpuInfo& gpu) const {
  std::optional<uint64_t> mib;
  if (gpu.memory_total_bytes) mib = *gpu.memory_total_bytes >> 20;
  return ResolveUnitPrice(options_.price, gpu.name, gpu.mig, options_.catalog, mib);
}

const IdentityRecord* DaemonContext::IdentityOf(uint32_t id) {
  auto it = identities_.find(id);
  if (it == identities_.end() && writer_) {
    if (auto all = writer_->store().Identities(); all.ok()) identities_ = std::move(all).value();
    it = identities_.find(id);
  }
  return it == identities_.end() ? nullptr : &it->second;
}

std::string DaemonContext::CommandOf(uint32_t id) {
  auto it = commands_.find(id);
  if (it == commands_.end() && writer_) {
    if (auto all = writer_->store().Commands(); all.ok()) commands_ = std::move(all).value();
    it = commands_.find(id);
  }
  return it == commands_.end() ? std::string() : it->second;
}

void DaemonContext::ReportFailure(int64_t now_ms, const std::string& message) {
  ++failures_unsaid_;
  if (now_ms - failure_logged_ms_ < kLogEveryMs) return;
  LogError("{}: {}{}", FormatRfc3339Utc(now_ms * 1'000'000), message,
           failures_unsaid_ > 1
               ? fmt::format(" ({} failures since the last message)", failures_unsaid_)
               : "");
  failure_logged_ms_ = now_ms;
  failures_unsaid_ = 0;
}

void DaemonTick::Clear() {
  built = written = false;
  xids.clear();
  policy_actions.clear();
  classified_ = false;
}

void DaemonTick::ClassifyGpus() {
  points_.resize(stored.gpus.size());
  phases_.resize(stored.gpus.size());
  for (size_t i = 0; i < stored.gpus.size(); ++i) {
    points_[i] = StoredGpuPoint(stored, i);
    phases_[i] = PhaseOf(points_[i], PhaseThresholds{});
  }
  classified_ = true;
}

const std::vector<GpuPoint>& DaemonTick::points() {
  if (!classified_) ClassifyGpus();
  return points_;
}

const std::vector<std::optional<Phase>>& DaemonTick::phases() {
  if (!classified_) ClassifyGpus();
  return phases_;
}

}  // namespace cgov
