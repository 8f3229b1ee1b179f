// What `cgov daemon` was asked to do, typed: its command line (src/cli/daemon.cc) with the files
// the flags name already read (daemon_config.h). The daemon's core and its modules read it.
#ifndef CGOV_APP_DAEMON_DAEMON_OPTIONS_H_
#define CGOV_APP_DAEMON_DAEMON_OPTIONS_H_

#include <chrono>
#include <optional>
#include <string>

#include "analysis/budget.h"
#include "analysis/pricing.h"
#include "analysis/slurm_accounting.h"
#include "export/http_server.h"
#include "identity/cloud_instance.h"
#include "identity/kube_pods.h"
#include "identity/kube_watch.h"
#include "identity/pod_resources.h"
#include "notify/notify_file.h"
#include "policy/policy_file.h"

namespace cgov {

// As `cgov run` allows: below it, a tick's own cost (~0.1-0.2 ms of CPU on the fake driver,
// milliseconds on a real one: docs/benchmarks.md) becomes a visible share of a core.
constexpr std::chrono::milliseconds kDaemonMinInterval{100};

struct DaemonOptions {
  std::string db;
  std::chrono::milliseconds interval{30'000};
  std::chrono::milliseconds retain{90LL * 24 * 3600 * 1000};
  std::chrono::milliseconds commit_every{10'000};  // docs/history-db.md: what a crash may lose
  std::string nvml_lib;
  std::string host_root = "/";
  std::string hostname;     // "" = the host's own
  std::string instance_id;  // --instance-id: what the cloud bills this host as
  // --detect-instance [PROVIDER]: the instance type and id from the cloud's metadata service at
  // start, where --instance-type and --instance-id did not give them.
  std::optional<CloudProvider> detect_instance;
  std::string metadata_endpoint = kDefaultMetadataEndpoint;
  std::string catalog_path;               // --price-catalog, re-read on SIGHUP
  std::optional<HttpServerOptions> http;  // --listen
  bool dcgm_names = false;                // --metrics-names dcgm
  bool process_series = false;            // --metrics-processes
  std::optional<KubeApiOptions> kube;     // --kubernetes
  KubeLabelMap kube_labels = DefaultKubeLabelMap();
  std::optional<PodResourcesOptions> pod_resources;  // --pod-resources
  PriceOptions price;
  PriceCatalog catalog;
  std::string budgets_path;  // --budgets, re-read on SIGHUP
  std::optional<BudgetFile> budgets;
  std::optional<NotifyFile> notify;   // --notify
  std::string notify_state;           // --notify-state
  std::optional<PolicyFile> policy;   // --policy
  std::string slurm_accounting_path;  // --slurm-accounting, re-read on SIGHUP
  std::optional<SlurmJobs> slurm_jobs;
  bool policy_dry_run = false;  // --policy-dry-run
  bool log_ticks = false;       // --log-ticks
  bool allow_no_gpus = false;   // --allow-no-gpus: no GPU is not a problem
};

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_OPTIONS_H_
