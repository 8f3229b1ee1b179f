// --kubernetes: this node's pods, watched on the API server, in the directory the process
// attributor names pods from (context->pods).
#include <cstdlib>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon_modules.h"
#include "core/text.h"
#include "identity/kube_watch.h"
#include "os/env.h"
#include "os/log.h"
#include "telemetry/host_reader.h"

namespace cgov {
namespace {

constexpr char kKubernetesHeading[] = "Kubernetes (--kubernetes)";

// --kubernetes: the node's name (given, the host's name, or its hostname file) and the API
// server's URL checked.
Status CompleteKube(const DaemonOptions& core, KubeApiOptions* api) {
  KubeApiOptions& kube = *api;
  if (kube.node_name.empty()) kube.node_name = core.hostname;
  if (kube.node_name.empty()) {
    kube.node_name = ReadHostInfo(*Env::Default()->NewFileReader(core.host_root)).hostname;
  }
  // A node name is a DNS subdomain: it goes into the API's URL as it is.
  const bool dns = !kube.node_name.empty() && kube.node_name.size() <= 253 &&
                   kube.node_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") ==
                       std::string::npos;
  if (!dns) {
    return InvalidArgument(
        fmt::format("cgov daemon: --node-name \"{}\": not a Kubernetes node name (lower-case "
                    "letters, digits, '-' and '.')",
                    SafeText(kube.node_name)));
  }
  if (kube.api_url.empty()) {
    return InvalidArgument(
        "cgov daemon: --kubernetes: KUBERNETES_SERVICE_HOST is not set (not in a pod?); give the "
        "API server with --kube-api URL");
  }
  if (!kube.api_url.starts_with("https://") && !kube.api_url.starts_with("http://")) {
    return InvalidArgument(fmt::format("cgov daemon: --kube-api {}: expected an https:// URL",
                                       SafeText(kube.api_url)));
  }
  while (kube.api_url.ends_with('/')) kube.api_url.pop_back();
  return Status::Ok();
}

class KubernetesModule : public DaemonModule {
 public:
  // The directory exists before the history opens (the attributor reads it); the watch that
  // fills it only once the database opened: a wrong --db asks the API server nothing.
  KubernetesModule(DaemonContext* d, KubeApiOptions api)
      : d_(*d),
        api_(std::move(api)),
        pods_(std::make_unique<KubePodDirectory>(d->options().kube_labels)) {
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
  const KubeApiOptions api_;
  std::unique_ptr<KubePodDirectory> pods_;
  std::unique_ptr<KubePodWatch> watch_;
  std::string error_;  // the watch's last error, as last said
};

Status KubernetesModule::Open() {
  KubeApiOptions kube = api_;
  kube.env = &d_.env();
  Result<std::unique_ptr<KubePodWatch>> watch = KubePodWatch::Start(std::move(kube), pods_.get());
  if (!watch.ok()) return watch.status().WithContext("--kubernetes");
  watch_ = std::move(watch).value();
  return Status::Ok();
}

// The first ticks should name their pods: the list usually takes well under a second.
Status KubernetesModule::Start() {
  if (watch_->WaitSynced(std::chrono::seconds(10))) {
    LogInfo(d_.env(), "--kubernetes: {} pod(s) on node {}", pods_->size(), api_.node_name);
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

class KubernetesKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "kubernetes"; }
  void AddFlags(CLI::App* app) override;
  Status Configure(const CLI::App& app, const DaemonOptions& core) override;
  bool enabled() const override { return on_; }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<KubernetesModule>(context, std::move(api_));
  }

 private:
  bool on_ = false;
  KubeApiOptions api_ = InClusterKubeApi();
};

void KubernetesKind::AddFlags(CLI::App* app) {
  const std::string heading = kKubernetesHeading;
  if (const char* node = std::getenv("NODE_NAME")) api_.node_name = node;
  app->add_flag("--kubernetes", on_,
                "name pods: watch this node's pods on the Kubernetes API server (in-cluster "
                "service account by default) for each GPU process's namespace, pod, container "
                "and labels (docs/kubernetes.md)")
      ->group(heading);
  app->add_option("--node-name", api_.node_name,
                  "with --kubernetes: this node's name (also env NODE_NAME; default: --hostname)")
      ->group(heading);
  app->add_option("--kube-api", api_.api_url,
                  "with --kubernetes: the API server's URL (default: "
                  "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
      ->group(heading);
  app->add_option("--kube-token-file", api_.token_file,
                  "with --kubernetes: a bearer token, re-read at every connection (\"\": none)")
      ->capture_default_str()
      ->group(heading);
  app->add_option("--kube-ca-file", api_.ca_file,
                  "with --kubernetes: the API server's CA (\"\": the system's)")
      ->capture_default_str()
      ->group(heading);
}

Status KubernetesKind::Configure(const CLI::App& app, const DaemonOptions& core) {
  if (!on_) {
    if (app.count("--node-name") + app.count("--kube-api") + app.count("--kube-token-file") +
            app.count("--kube-ca-file") >
        0) {
      return InvalidArgument(
          "cgov daemon: --node-name, --kube-api, --kube-token-file and --kube-ca-file go with "
          "--kubernetes");
    }
    return Status::Ok();
  }
  return CompleteKube(core, &api_);
}

}  // namespace

std::unique_ptr<DaemonModuleKind> NewKubernetesModuleKind() {
  return std::make_unique<KubernetesKind>();
}

}  // namespace cgov
