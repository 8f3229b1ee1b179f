// --pod-resources: the GPUs the kubelet allocated to containers, added to each tick so a GPU
// allocated to a pod is charged to it whether or not its processes are seen.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon_modules.h"
#include "app/history/stored_tick.h"
#include "core/duration.h"
#include "identity/pod_resources.h"
#include "os/log.h"

namespace cgov {
namespace {

class PodResourcesModule : public DaemonModule {
 public:
  PodResourcesModule(DaemonContext* d, PodResourcesOptions options)
      : d_(*d), options_(std::move(options)) {}
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
  const PodResourcesOptions options_;
  std::unique_ptr<PodResourcesPoller> poller_;
  std::string error_;                             // its last error, as last said
  uint64_t allocations_generation_ = UINT64_MAX;  // of the snapshot allocations_ came from
  std::vector<GpuAllocation> allocations_;
};

Status PodResourcesModule::Open() {
  PodResourcesOptions o = options_;
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

class PodResourcesKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "pod_resources"; }
  void AddFlags(CLI::App* app) override {
    const std::string heading = "Kubelet pod-resources (--pod-resources)";
    app->add_flag("--pod-resources", on_,
                  "with --kubernetes: ask the kubelet's pod-resources API which GPUs each "
                  "container was given, and charge a GPU allocated to a pod to it (idle-held when "
                  "idle) whether or not its processes are seen")
        ->group(heading);
    app->add_option("--pod-resources-socket", options_.socket_path,
                    "with --pod-resources: the kubelet's socket")
        ->capture_default_str()
        ->group(heading);
  }
  Status Configure(const CLI::App& app, const DaemonOptions& /*core*/) override {
    const bool socket = app.count("--pod-resources-socket") > 0;
    if ((on_ || socket) && !FlagGiven(app, "--kubernetes")) {
      return InvalidArgument(
          "cgov daemon: --pod-resources and --pod-resources-socket go with --kubernetes (the "
          "kubelet names pods; their labels come from the API server)");
    }
    if (socket && !on_) {
      return InvalidArgument("cgov daemon: --pod-resources-socket goes with --pod-resources");
    }
    return Status::Ok();
  }
  bool enabled() const override { return on_; }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<PodResourcesModule>(context, std::move(options_));
  }

 private:
  bool on_ = false;
  PodResourcesOptions options_;
};

}  // namespace

std::unique_ptr<DaemonModuleKind> NewPodResourcesModuleKind() {
  return std::make_unique<PodResourcesKind>();
}

}  // namespace cgov
