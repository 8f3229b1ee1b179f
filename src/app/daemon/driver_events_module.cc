// The driver's Xid events and each GPU's memory health, said in the log and kept in the
// history: each Xid once (kept as long as the ticks around it), the memory health when it
// changes (and once per daemon start), so a report finds each GPU's latest state however long
// ago it was read.
#include <fmt/format.h>

#include "app/daemon/daemon_modules.h"
#include "os/log.h"

namespace cgov {
namespace {

class DriverEventsModule : public DaemonModule {
 public:
  explicit DriverEventsModule(DaemonContext* d) : d_(*d) {}
  std::string_view name() const override { return "driver_events"; }
  Status AfterWrite(DaemonTick* tick) override;

 private:
  Status RecordXids();
  Status RecordMemoryHealth(const std::vector<GpuSlowSample>& slow, int64_t now_ms);

  DaemonContext& d_;
  std::vector<XidEvent> xids_;  // drained from the driver, not yet in the history
  std::vector<std::optional<MemoryHealth>> recorded_health_;  // per GPU, as last put in history
};

// Only once the tick is written: until then the events wait (the history may be away).
Status DriverEventsModule::AfterWrite(DaemonTick* tick) {
  xids_.insert(xids_.end(), tick->xids.begin(), tick->xids.end());
  if (!tick->written || d_.nvml() == nullptr) return Status::Ok();
  Status xids = RecordXids();
  Status health = RecordMemoryHealth(tick->sample.gpu_slow, tick->now_ms);
  return xids.ok() ? health : xids;
}

Status DriverEventsModule::RecordXids() {
  std::vector<XidEvent> xids;
  xids.swap(xids_);
  const std::vector<GpuInfo>& gpus = d_.gpus();
  const std::vector<uint32_t>& ids = d_.gpu_ids();
  Status first;
  for (const XidEvent& e : xids) {
    LogWarning(d_.env(), "GPU {}: Xid {} reported by the driver",
               e.gpu_index < gpus.size() ? gpus[e.gpu_index].Label() : "?", e.xid);
    if (e.gpu_index >= ids.size()) continue;
    Status put = d_.writer()->store().PutEvent({e.unix_ms, ids[e.gpu_index], "xid", e.xid});
    if (!put.ok() && first.ok()) first = put;
  }
  return first;
}

Status DriverEventsModule::RecordMemoryHealth(const std::vector<GpuSlowSample>& slow,
                                              int64_t now_ms) {
  const std::vector<uint32_t>& ids = d_.gpu_ids();
  recorded_health_.resize(ids.size());
  Status first;
  for (size_t i = 0; i < slow.size() && i < ids.size(); ++i) {
    const std::optional<MemoryHealth>& h = slow[i].memory_health;
    if (!h || h == recorded_health_[i]) continue;
    if (h->NeedsAction()) {
      LogWarning(d_.env(), "GPU {}: memory needs attention (see `cgov doctor`)",
                 d_.gpus()[i].Label());
    }
    Status put =
        d_.writer()->store().PutEvent({now_ms, ids[i], "memory_health", EncodeMemoryHealth(*h)});
    if (!put.ok()) {
      if (first.ok()) first = put;
      continue;
    }
    recorded_health_[i] = h;
  }
  return first;
}

// Always on, without a flag.
class DriverEventsKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "driver_events"; }
  bool enabled() const override { return true; }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<DriverEventsModule>(context);
  }
};

}  // namespace

std::unique_ptr<DaemonModuleKind> NewDriverEventsModuleKind() {
  return std::make_unique<DriverEventsKind>();
}

}  // namespace cgov
