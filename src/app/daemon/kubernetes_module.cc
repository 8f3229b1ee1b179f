// --kubernetes: this node's pods, watched on the API server, in the directory the process
// attributor names pods from (context->pods).
#include <fmt/format.h>

#include "app/daemon/daemon_modules.h"
#include "identity/kube_watch.h"
#include "os/log.h"

namespace cgov {
namespace {

class KubernetesModule : public DaemonModule {
 public:
  // The directory exists before the history opens (the attributor reads it); the watch that
  // fills it only once the database opened: a wrong --db asks the API server nothing.
  explicit KubernetesModule(DaemonContext* d)
      : d_(*d), pods_(std::make_unique<KubePodDirectory>(d->options().kube_labels)) {
    d_.pods = pods_.get();
  }
  std::string_view name() const override { return "kubernetes"; }
  Status Open() override;
  Status Start() override;
  // Deleted pods' entries expire, and a changed watch error is said, once a minute.
  std::chrono::milliseconds period() const override { return std::chrono::minutes(1); }
  void Periodic(int64_t now_ms) override;
  Status BeforeWrite(DaemonTick* /*tick*/) override {
    if (d_.metrics != nullptr) d_.metrics->SetCollectorSuccess("kubernetes", watch_->healthy());
    return Status::Ok();
  }
  void Stop() override { watch_.reset(); }

 private:
  DaemonContext& d_;
  std::unique_ptr<KubePodDirectory> pods_;
  std::unique_ptr<KubePodWatch> watch_;
  std::string error_;  // the watch's last error, as last said
};

Status KubernetesModule::Open() {
  KubeApiOptions kube = *d_.options().kube;
  kube.env = &d_.env();
  Result<std::unique_ptr<KubePodWatch>> watch = KubePodWatch::Start(std::move(kube), pods_.get());
  if (!watch.ok()) return watch.status().WithContext("--kubernetes");
  watch_ = std::move(watch).value();
  return Status::Ok();
}

// The first ticks should name their pods: the list usually takes well under a second.
Status KubernetesModule::Start() {
  if (watch_->WaitSynced(std::chrono::seconds(10))) {
    LogInfo(d_.env(), "--kubernetes: {} pod(s) on node {}", pods_->size(),
            d_.options().kube->node_name);
  } else {
    error_ = watch_->LastError();
    LogWarning(d_.env(), "--kubernetes: no pod list yet ({}); recording pod UIDs until it comes",
               error_.empty() ? "no answer in 10 s" : error_);
  }
  return Status::Ok();
}

void KubernetesModule::Periodic(int64_t now_ms) {
  pods_->Expire(now_ms);
  // Said when it changes, not every minute.
  if (std::string error = watch_->LastError(); error != error_) {
    if (!error.empty()) LogWarning(d_.env(), "--kubernetes: {}", error);
    error_ = std::move(error);
  }
}

}  // namespace

std::unique_ptr<DaemonModule> NewKubernetesModule(DaemonContext* context) {
  return std::make_unique<KubernetesModule>(context);
}

}  // namespace cgov
