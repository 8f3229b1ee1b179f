// What `cgov daemon`'s core was asked to do, typed: its part of the command line
// (src/cli/daemon.cc) with the files its flags name already read (daemon_config.h). The core
// and the modules read it; each module's own flags are its kind's (daemon_module.h).
#ifndef CGOV_APP_DAEMON_DAEMON_OPTIONS_H_
#define CGOV_APP_DAEMON_DAEMON_OPTIONS_H_

#include <chrono>
#include <optional>
#include <string>

#include "analysis/pricing.h"
#include "identity/cloud_instance.h"
#include "identity/kube_pods.h"

namespace cgov {

// As `cgov run` allows: below it, a tick's own cost (~0.1-0.2 ms of CPU on the fake driver,
// milliseconds on a real one: docs/benchmarks.md) becomes a visible share of a core.
constexpr std::chrono::milliseconds kDaemonMinInterval{100};

// The core's options alone: what it samples, where it writes, how it prices. A module's own
// flags and configuration live with the module (DaemonModuleKind, daemon_module.h).
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
  std::string catalog_path;  // --price-catalog, re-read on SIGHUP
  // --kube-labels: which pod and Docker container labels name the project, team and user.
  KubeLabelMap kube_labels = DefaultKubeLabelMap();
  PriceOptions price;
  PriceCatalog catalog;
  bool allow_no_gpus = false;  // --allow-no-gpus: no GPU is not a problem
};

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_OPTIONS_H_
