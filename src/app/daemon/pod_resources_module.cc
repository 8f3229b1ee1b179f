// --pod-resources: the GPUs the kubelet allocated to containers, added to each tick so a GPU
// allocated to a pod is charged to it whether or not its processes are seen.
#include <fmt/format.h>

#include "app/daemon/daemon_modules.h"
#include "app/history/stored_tick.h"
#include "core/duration.h"
#include "os/log.h"

namespace cgov {
namespace {

class PodResourcesModule : public DaemonModule {
 public:
  explicit PodResourcesModule(DaemonContext* d) : d_(*d) {}
  std::string_view name() const override { return "pod_resources"; }
  Status Open() override;
  // An error fails the tick: the allocations could not be put in the history's dictionary.
  Status BeforeWrite(DaemonTick* tick) override {
    UpdateAllocations();
    return AddAllocations(allocations_, d_.attributor(), &tick->stored);
  }

 private:
  // From the poller's latest answer (when it changed), said when its error does.
  void UpdateAllocations();

  DaemonContext& d_;
  std::unique_ptr<PodResourcesPoller> poller_;
  std::string error_;                             // its last error, as last said
  uint64_t allocations_generation_ = UINT64_MAX;  // of the snapshot allocations_ came from
  std::vector<GpuAllocation> allocations_;
};

Status PodResourcesModule::Open() {
  PodResourcesOptions o = *d_.options().pod_resources;
  o.env = &d_.env();
  Result<std::unique_ptr<PodResourcesPoller>> poller = PodResourcesPoller::Start(o);
  if (!poller.ok()) return poller.status().WithContext("--pod-resources");
  poller_ = std::move(poller).value();
  if (std::string error = poller_->LastError(); !error.empty()) {
    LogWarning(d_.env(), "--pod-resources: {}; retrying every {}", error,
               FormatDuration(o.interval));
    error_ = std::move(error);
  } else {
    LogInfo(d_.env(), "--pod-resources: {} device(s) allocated to containers",
            poller_->Current()->devices.size());
  }
  return Status::Ok();
}

void PodResourcesModule::UpdateAllocations() {
  if (d_.metrics != nullptr) d_.metrics->SetCollectorSuccess("pod_resources", poller_->healthy());
  if (std::string error = poller_->LastError(); error != error_) {
    if (!error.empty())
      LogWarning(d_.env(), "--pod-resources: {}", error);
    else
      LogInfo(d_.env(), "--pod-resources: the kubelet answers again");
    error_ = std::move(error);
  }
  std::shared_ptr<const PodResourcesPoller::Snapshot> now = poller_->Current();
  if (now->generation == allocations_generation_) return;
  allocations_generation_ = now->generation;
  allocations_ = AllocatedGpus(now->devices, d_.gpus());
}

}  // namespace

std::unique_ptr<DaemonModule> NewPodResourcesModule(DaemonContext* context) {
  return std::make_unique<PodResourcesModule>(context);
}

}  // namespace cgov
