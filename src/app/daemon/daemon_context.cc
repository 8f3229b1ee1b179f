#include <fmt/format.h>

#include "analysis/history_aggregator.h"
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

// A driver that does not work looks like an idle host: not ready, unless the host has no GPU on
// purpose (--allow-no-gpus; docs/daemon.md, "No GPU").
void DaemonContext::OpenDriver() {
  std::string no_gpu, why;  // the log's reason; /health's, which names no path
  if (auto opened = NvmlSource::Open(options_.nvml_lib, clock_); opened.ok()) {
    nvml_ = std::move(opened).value();
    nvml_->StartEventWatch();
    // The history's energy is power x time corrected by the driver's counter (issue 62): read
    // once a minute (a read costs ~2.9 ms of CPU on driver 580: 8 GPUs, 0.04 % of a core).
    nvml_->SetEnergyPeriod(int64_t{60} * 1'000'000'000);
    if (nvml_->gpus().empty()) no_gpu = why = "the NVIDIA driver loaded but shows no GPU";
  } else {
    no_gpu = std::string(opened.status().message());
    why = "the NVIDIA driver (NVML) did not load";
  }
  if (no_gpu.empty()) return;
  if (!options_.allow_no_gpus) {
    no_gpu_problem_ = "not ready: no GPU is recorded: " + why +
                      "; see the daemon's log (--allow-no-gpus on a host without GPUs)";
  }
  LogWarning(*env_, "no GPU data: {}; recording host samples only{}", no_gpu,
             options_.allow_no_gpus ? ""
                                    : "; /health answers 503 until a daemon starts with a working "
                                      "driver (--allow-no-gpus on a host without GPUs)");
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
  LogError(*env_, "{}: {}{}", FormatRfc3339Utc(now_ms * 1'000'000), message,
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
  by_gpu_.Index(stored);
  for (size_t i = 0; i < stored.gpus.size(); ++i) {
    points_[i] = StoredGpuPoint(stored, by_gpu_, i);
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
