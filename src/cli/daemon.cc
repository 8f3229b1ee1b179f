#include "cli/daemon.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <tuple>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analysis/budget.h"
#include "analysis/phases.h"
#include "cli/command_table.h"
#include "app/history/stored_tick.h"
#include "cli/usage_exit.h"
#include "app/history/history_writer.h"
#include "app/history/history_load.h"
#include "app/price_flags.h"
#include "core/duration.h"
#include "core/text.h"
#include "core/time_format.h"
#include "export/daemon_metrics.h"
#include "export/http_server.h"
#include "identity/kube_pods.h"
#include "identity/kube_watch.h"
#include "identity/pod_resources.h"
#include "notify/notifier.h"
#include "notify/notify_engine.h"
#include "policy/policy_executor.h"
#include "policy/process_credentials.h"
#include "telemetry/procfs_pid.h"
#include "os/clock.h"
#include "os/file_reader.h"
#include "os/input_file.h"
#include "os/process_exit_watch.h"
#include "telemetry/environ_access.h"
#include "telemetry/host_reader.h"
#include "telemetry/nvml_source.h"

namespace cgov::cli {
namespace {

// As `cgov run` allows: below it, a tick's own cost (~0.1-0.2 ms of CPU on the fake driver,
// milliseconds on a real one: docs/benchmarks.md) becomes a visible share of a core.
constexpr std::chrono::milliseconds kMinInterval{100};
constexpr int64_t kLogEveryMs = 60'000;
// How often the GPU energy counter behind DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is read.
constexpr std::chrono::milliseconds kEnergyPeriod{10'000};
// How often /proc/meminfo is read: the host memory it gives (mem_used_pct_x10) is kept for the
// record, and no report reads it per tick; /proc/stat (CPU, iowait) is read every tick, since the
// findings set host CPU and iowait against each tick's GPU utilization.
constexpr std::chrono::milliseconds kHostMemoryPeriod{60'000};

struct DaemonOptions {
  std::string db;
  std::chrono::milliseconds interval{30'000};
  std::chrono::milliseconds retain{90LL * 24 * 3600 * 1000};
  std::chrono::milliseconds commit_every{10'000};  // docs/history-db.md: what a crash may lose
  std::string nvml_lib;
  std::string host_root = "/";
  std::string hostname;  // "" = the host's own
  std::string instance_id;  // --instance-id: what the cloud bills this host as
  std::string catalog_path;  // --price-catalog, re-read on SIGHUP
  std::optional<HttpServerOptions> http;  // --listen
  bool dcgm_names = false;                // --metrics-names dcgm
  bool process_series = false;            // --metrics-processes
  std::optional<KubeApiOptions> kube;     // --kubernetes
  KubeLabelMap kube_labels = DefaultKubeLabelMap();
  std::optional<PodResourcesOptions> pod_resources;  // --pod-resources
  PriceOptions price;
  PriceCatalog catalog;
  std::string budgets_path;            // --budgets, re-read on SIGHUP
  std::optional<BudgetFile> budgets;
  std::optional<NotifyFile> notify;    // --notify
  std::string notify_state;            // --notify-state
  std::optional<PolicyFile> policy;    // --policy
  bool policy_dry_run = false;         // --policy-dry-run
};

// Not dcgm-exporter's 9400: both run on GPU nodes (docs/metrics.md, "Beside dcgm-exporter").
constexpr char kDefaultListen[] = "127.0.0.1:9474";

// Reads a whole small file (a key, a certificate, a password) or says which one failed: a
// regular file of at most 1 MiB (a FIFO, a device or a directory is refused, never read).
Result<std::string> ReadSmallFile(const std::string& path, std::string_view flag) {
  Result<std::string> text = ReadInputFile(path, 1 << 20, flag);
  if (!text.ok()) return text.status().WithContext("cgov daemon");
  return text;
}

Result<BudgetFile> ReadBudgets(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, "--budgets"));
  Result<BudgetFile> file = ParseBudgets(text, path);
  if (!file.ok()) return file.status().WithContext("cgov daemon: --budgets");
  return file;
}

Result<NotifyFile> ReadNotify(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, "--notify"));
  Result<NotifyFile> file = ParseNotifyFile(text, path);
  if (!file.ok()) return file.status().WithContext("cgov daemon: --notify");
  if (Status s = ReadSinkUrls(&*file); !s.ok()) return s.WithContext("cgov daemon: --notify");
  return file;
}

// --basic-auth-file: one line "user:password" (a file, so the password is not in `ps`), which
// only its owner may read: a password in plain text readable by others is refused.
Status ReadBasicAuth(const std::string& path, HttpServerOptions* http) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, "--basic-auth-file"));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return InvalidArgument(fmt::format(
        "cgov daemon: --basic-auth-file {}: a password in plain text readable by its group or "
        "others (mode {:04o}); `chmod 600 {}`, or keep a bcrypt hash in --web-config instead",
        path, st.st_mode & 07777, path));
  }
  Result<std::pair<std::string, std::string>> credentials = ParseBasicAuthFile(text);
  if (!credentials.ok()) {
    return credentials.status().WithContext(fmt::format("cgov daemon: --basic-auth-file {}", path));
  }
  auto [user, password] = std::move(credentials).value();
  http->users.push_back({std::move(user), std::move(password), false});
  return Status::Ok();
}

// Logs a failure at once, then at most once a minute with the count in between.
class RateLimitedLog {
 public:
  void Report(int64_t now_ms, const std::string& message) {
    ++suppressed_;
    if (now_ms - last_ms_ < kLogEveryMs) return;
    fmt::print(stderr, "cgov daemon: {}: {}{}\n", FormatRfc3339Utc(now_ms * 1'000'000), message,
               suppressed_ > 1 ? fmt::format(" ({} failures since the last message)", suppressed_)
                               : "");
    last_ms_ = now_ms;
    suppressed_ = 0;
  }

 private:
  int64_t last_ms_ = INT64_MIN / 2;
  int64_t suppressed_ = 0;
};

Result<DaemonOptions> ParseDaemonOptions(int argc, char** argv, int* help_exit) {
  DaemonOptions o;
  if (const char* lib = std::getenv("CGOV_NVML_LIB")) o.nvml_lib = lib;
  std::string interval = "30s", retain = "90d", commit_every = "10s";
  std::string listen, auth_file, tls_cert, tls_key, price_text, catalog_path;
  std::string metrics_names = "cgov", web_config, budgets, notify, policy;
  bool kubernetes = false;
  KubeApiOptions kube = InClusterKubeApi();
  if (const char* node = std::getenv("NODE_NAME")) kube.node_name = node;
  std::string kube_labels;
  bool pod_resources = false;
  PodResourcesOptions pod_resources_options;
  if (const char* catalog = std::getenv("CGOV_PRICE_CATALOG")) catalog_path = catalog;
  CLI::App app{"Record every GPU and GPU process of this host into a SQLite history until "
               "SIGINT/SIGTERM (SIGHUP reloads the price catalog and reopens the database); with "
               "--listen, serve Prometheus /metrics too.\nReports: cgov report --db "
               "PATH (safe while the daemon writes), cgov report --prometheus URL (the fleet).",
               "cgov daemon"};
  app.add_option("--db", o.db, "history database (created if missing)")->required();
  app.add_option("--interval", interval, "time between samples, 100ms to 1h")->capture_default_str();
  app.add_option("--retain", retain,
                 "keep raw samples this long; hourly rollups are kept forever")
      ->capture_default_str();
  app.add_option("--commit-every", commit_every, "write samples to the database in one "
                 "transaction at most this often (0s: every tick); a crash of the daemon loses at "
                 "most this much, never a committed sample; SIGTERM, SIGINT and SIGHUP commit "
                 "first")->capture_default_str();
  app.add_option("--nvml-lib", o.nvml_lib, "NVML library to load (env CGOV_NVML_LIB)");
  app.add_option("--host-root", o.host_root, "read /proc and /etc under this directory, e.g. a "
                 "host mounted at /host in a container (env CGOV_HOST_ROOT)")
      ->envname("CGOV_HOST_ROOT")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  app.add_option("--hostname", o.hostname, "the name this host is reported under (default: its "
                 "own; in Kubernetes pass the node name)");
  app.add_option("--instance-id", o.instance_id, "the id the cloud bills this host as (AWS "
                 "i-0abc…, a GCP instance id, an Azure resource id): recorded with the data and "
                 "on /metrics, so `cgov report --billing` finds this host's lines without a map")
      ->check([](const std::string& id) {
        return !id.empty() && id.size() <= 512 && IsSafeText(id) &&
                       id.find_first_of(" ,\"") == std::string::npos
                   ? std::string()
                   : std::string("expected an id without spaces, commas or quotes");
      });
  app.add_option("--listen", listen, fmt::format("off unless given: serve Prometheus "
                 "/metrics and /health on HOST:PORT (alone: {}; another address only when named; "
                 "docs/metrics.md)", kDefaultListen))
      ->expected(0, 1)->default_str(kDefaultListen);
  app.add_option("--metrics-names", metrics_names, "cgov: GPU readings under cgov's own names "
                 "only, safe beside dcgm-exporter; dcgm: under dcgm-exporter's DCGM_FI_* names "
                 "too, for a node without dcgm-exporter whose dashboards expect them "
                 "(docs/metrics.md)")
      ->check(CLI::IsMember({"cgov", "dcgm"}))
      ->capture_default_str();
  app.add_flag("--metrics-processes", o.process_series, "also serve one series per GPU process "
               "(its pid a label: a new series with every process; off by default, "
               "docs/metrics.md \"Series budget\")");
  app.add_option("--basic-auth-file", auth_file, "require HTTP basic auth: a file with one line "
                 "USER:PASSWORD");
  app.add_option("--web-config", web_config, "a Prometheus web configuration file (the "
                 "exporters' format): basic_auth_users with bcrypt hashes, tls_server_config's "
                 "cert_file and key_file (docs/metrics.md)");
  app.add_option("--tls-cert", tls_cert, "serve HTTPS with this PEM certificate (with --tls-key)");
  app.add_option("--tls-key", tls_key, "the PEM private key of --tls-cert");
  app.add_flag("--kubernetes", kubernetes, "name pods: watch this node's pods on the Kubernetes "
               "API server (in-cluster service account by default) for each GPU process's "
               "namespace, pod, container and labels (docs/kubernetes.md)");
  app.add_option("--node-name", kube.node_name, "with --kubernetes: this node's name (env "
                 "NODE_NAME; default: --hostname)");
  app.add_option("--kube-api", kube.api_url, "with --kubernetes: the API server's URL (default: "
                 "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)");
  app.add_option("--kube-token-file", kube.token_file, "with --kubernetes: a bearer token, "
                 "re-read at every connection (\"\": none)")->capture_default_str();
  app.add_option("--kube-ca-file", kube.ca_file, "with --kubernetes: the API server's CA (\"\": "
                 "the system's)")->capture_default_str();
  app.add_option("--kube-labels", kube_labels, "with --kubernetes: which pod labels give the "
                 "project, team and user, first present wins (default: project=project-id,"
                 "app.kubernetes.io/part-of,app.kubernetes.io/name;team=team-id;user=user-id)");
  app.add_flag("--pod-resources", pod_resources, "with --kubernetes: ask the kubelet's "
               "pod-resources API which GPUs each container was given, and charge a GPU allocated "
               "to a pod to it (idle-held when idle) whether or not its processes are seen");
  app.add_option("--pod-resources-socket", pod_resources_options.socket_path, "with "
                 "--pod-resources: the kubelet's socket")->capture_default_str();
  app.add_option("--budgets", budgets, "a budgets file (TOML, docs/budgets.md): each budget's "
                 "spend on this host in its current period, for --notify's budget rules and, with "
                 "--listen, served as cgov_budget_*; re-read on SIGHUP");
  app.add_option("--notify", notify, "a notifications file (TOML, docs/notifications.md): "
                 "rules (idle-held process, idle GPU, low utilization, memory nearly full, Xid, "
                 "budget thresholds, policy steps) and the webhooks, Slack or Teams channels or "
                 "users' terminals their notices go to");
  app.add_option("--notify-state", o.notify_state, "with --notify: where undelivered notices "
                 "and open incidents are kept across restarts (default: the --db path with "
                 "\".notify\" appended)");
  app.add_option("--policy", policy, "a policy file (TOML, docs/policy.md): stop processes that "
                 "have held idle GPUs too long (SIGTERM, then SIGKILL after a grace), for the "
                 "users and groups it names; every action is kept in the history database");
  app.add_flag("--policy-dry-run", o.policy_dry_run, "with --policy: decide and record what it "
               "would do (action would_stop), signal nothing");
  app.add_option("--price-per-gpu-hour", price_text, "USD per GPU-hour for the cost counters "
                 "(overrides the catalog)");
  app.add_option("--instance-type", o.price.instance_type, "price GPUs as this instance type");
  app.add_option("--price-catalog", catalog_path, "your own price catalog (env "
                 "CGOV_PRICE_CATALOG; format of data/prices.json)");
  app.add_flag("--spot", o.price.spot, "price at the catalog's spot rate");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *help_exit = UsageExit(app, e);
    return InvalidArgument("");
  }
  Result<std::chrono::milliseconds> every = ParseDuration(interval);
  if (!every.ok()) return every.status().WithContext("cgov daemon: --interval");
  // At most an hour: the tick schedule counts in nanoseconds (110000d overflowed it into a busy
  // loop), and a sample an hour says little of a GPU anyway.
  if (*every < kMinInterval || *every > std::chrono::hours(1)) {
    return InvalidArgument(fmt::format("cgov daemon: --interval {}: must be between 100ms and 1h",
                                       interval));
  }
  o.interval = *every;
  Result<std::chrono::milliseconds> kept = ParseDuration(retain);
  if (!kept.ok()) return kept.status().WithContext("cgov daemon: --retain");
  if (*kept < std::chrono::hours(1) || *kept > std::chrono::hours(24 * 36500)) {
    return InvalidArgument("cgov daemon: --retain must be between 1h (raw samples are rolled "
                           "up hourly) and 36500d");
  }
  o.retain = *kept;
  Result<std::chrono::milliseconds> commit = ParseDuration(commit_every);
  if (!commit.ok()) return commit.status().WithContext("cgov daemon: --commit-every");
  if (*commit > std::chrono::minutes(10)) {
    return InvalidArgument(fmt::format("cgov daemon: --commit-every {}: must be between 0s and "
                                       "10m", commit_every));
  }
  o.commit_every = *commit;
  if (Status s = ApplyPriceFlags(catalog_path, price_text, &o.price, &o.catalog); !s.ok()) {
    return s.WithContext("cgov daemon");
  }
  o.catalog_path = catalog_path;
  const bool kube_flags = app.count("--node-name") + app.count("--kube-api") +
                              app.count("--kube-token-file") + app.count("--kube-ca-file") +
                              app.count("--kube-labels") > 0;
  if (kube_flags && !kubernetes) {
    return InvalidArgument("cgov daemon: --node-name, --kube-api, --kube-token-file, "
                           "--kube-ca-file and --kube-labels go with --kubernetes");
  }
  if (kubernetes) {
    if (kube.node_name.empty()) kube.node_name = o.hostname;
    if (kube.node_name.empty()) {
      RootedFileReader host_files(o.host_root);
      kube.node_name = ReadHostInfo(host_files).hostname;
    }
    // A node name is a DNS subdomain: it goes into the API's URL as it is.
    const bool dns = !kube.node_name.empty() && kube.node_name.size() <= 253 &&
                     kube.node_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") ==
                         std::string::npos;
    if (!dns) {
      return InvalidArgument(fmt::format("cgov daemon: --node-name \"{}\": not a Kubernetes node "
                                         "name (lower-case letters, digits, '-' and '.')",
                                         SafeText(kube.node_name)));
    }
    if (kube.api_url.empty()) {
      return InvalidArgument("cgov daemon: --kubernetes: KUBERNETES_SERVICE_HOST is not set (not "
                             "in a pod?); give the API server with --kube-api URL");
    }
    if (!kube.api_url.starts_with("https://") && !kube.api_url.starts_with("http://")) {
      return InvalidArgument(fmt::format("cgov daemon: --kube-api {}: expected an https:// URL",
                                         SafeText(kube.api_url)));
    }
    while (kube.api_url.ends_with('/')) kube.api_url.pop_back();
    if (!kube_labels.empty()) {
      Result<KubeLabelMap> map = ParseKubeLabelMap(kube_labels);
      if (!map.ok()) return map.status().WithContext("cgov daemon");
      o.kube_labels = std::move(map).value();
    }
    o.kube = std::move(kube);
  }
  if ((pod_resources || app.count("--pod-resources-socket") > 0) && !kubernetes) {
    return InvalidArgument("cgov daemon: --pod-resources and --pod-resources-socket go with "
                           "--kubernetes (the kubelet names pods; their labels come from the "
                           "API server)");
  }
  if (app.count("--pod-resources-socket") > 0 && !pod_resources) {
    return InvalidArgument("cgov daemon: --pod-resources-socket goes with --pod-resources");
  }
  if (pod_resources) o.pod_resources = std::move(pod_resources_options);
  if (app.count("--listen") > 0) {
    HttpServerOptions http;
    CGOV_ASSIGN_OR_RETURN(http.address, ParseListenAddress(listen.empty() ? kDefaultListen
                                                                          : listen));
    if (!auth_file.empty()) CGOV_RETURN_IF_ERROR(ReadBasicAuth(auth_file, &http));
    if (!web_config.empty()) {
      if (!auth_file.empty()) {
        return InvalidArgument("cgov daemon: --web-config and --basic-auth-file: give the users "
                               "in one of them");
      }
      CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(web_config, "--web-config"));
      Result<WebConfig> config = ParseWebConfig(text, web_config);
      if (!config.ok()) return config.status().WithContext("cgov daemon: --web-config");
      if (!config->tls_cert_file.empty()) {
        if (!tls_cert.empty()) {
          return InvalidArgument(fmt::format("cgov daemon: --tls-cert and --web-config {}'s "
                                             "tls_server_config: give the certificate in one of "
                                             "them", web_config));
        }
        tls_cert = config->tls_cert_file;
        tls_key = config->tls_key_file;
      }
      http.users = std::move(config->users);
    }
    if (tls_cert.empty() != tls_key.empty()) {
      return InvalidArgument("cgov daemon: --tls-cert and --tls-key go together");
    }
    if (!tls_cert.empty()) {
      // Fail closed: a TLS setup that cannot work must not become plain HTTP (basic-auth
      // passwords in clear).
      CGOV_ASSIGN_OR_RETURN(http.tls_cert_pem, ReadSmallFile(tls_cert, "--tls-cert"));
      CGOV_ASSIGN_OR_RETURN(http.tls_key_pem, ReadSmallFile(tls_key, "--tls-key"));
      for (const auto& [flag, path, pem] :
           {std::tuple{"--tls-cert", tls_cert, http.tls_cert_pem},
            std::tuple{"--tls-key", tls_key, http.tls_key_pem}}) {
        if (pem.find("-----BEGIN ") == std::string::npos) {
          return InvalidArgument(fmt::format("cgov daemon: {} {}: {}; refusing to serve without "
                                             "TLS", flag, path,
                                             pem.empty() ? "empty" : "no PEM block in it"));
        }
      }
      Result<CertificateInfo> cert = ReadCertificateInfo(http.tls_cert_pem);
      if (!cert.ok()) {
        return InvalidArgument(fmt::format("cgov daemon: --tls-cert {}: {}; refusing to serve "
                                           "without TLS", tls_cert, cert.status().message()));
      }
      // Served all the same (the operator may be renewing it), but every client will refuse it.
      const int64_t now_s = std::time(nullptr);
      if (now_s > cert->not_after_s || now_s < cert->not_before_s) {
        fmt::print(stderr, "cgov daemon: warning: --tls-cert {} ({}) {} {}: clients that check "
                   "certificates will refuse the connection\n", tls_cert, cert->subject,
                   now_s > cert->not_after_s ? "expired on" : "is not valid before",
                   FormatRfc3339Utc((now_s > cert->not_after_s ? cert->not_after_s
                                                               : cert->not_before_s) *
                                    1'000'000'000));
      }
      http.tls = true;
    }
    http.open_paths = {"/health", "/healthz"};  // probes send no credentials; says no secret
    o.http = std::move(http);
    o.dcgm_names = metrics_names == "dcgm";
  } else if (!auth_file.empty() || !tls_cert.empty() || !tls_key.empty() ||
             !web_config.empty() || app.count("--metrics-names") > 0 || o.process_series) {
    return InvalidArgument("cgov daemon: --basic-auth-file, --web-config, --tls-cert, --tls-key, "
                           "--metrics-names and --metrics-processes need --listen");
  }
  if (!budgets.empty() && !o.http && notify.empty()) {
    return InvalidArgument("cgov daemon: --budgets does something with --listen (cgov_budget_* "
                           "on /metrics) or --notify (budget rules); give one of them (a report "
                           "reads budgets from the database with `cgov report --budgets`)");
  }
  if (!budgets.empty()) {
    CGOV_ASSIGN_OR_RETURN(o.budgets, ReadBudgets(budgets));
    o.budgets_path = budgets;
  }
  if (o.policy_dry_run && policy.empty()) {
    return InvalidArgument("cgov daemon: --policy-dry-run goes with --policy");
  }
  if (!policy.empty()) {
    CGOV_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(policy, "--policy"));
    Result<PolicyFile> file = ParsePolicyFile(text, policy);
    if (!file.ok()) return file.status().WithContext("cgov daemon: --policy");
    o.policy = std::move(file).value();
  }
  if (!o.notify_state.empty() && notify.empty()) {
    return InvalidArgument("cgov daemon: --notify-state goes with --notify");
  }
  if (!notify.empty()) {
    CGOV_ASSIGN_OR_RETURN(o.notify, ReadNotify(notify));
    for (const NotifyRule& r : o.notify->rules) {
      if (r.kind == NotifyRuleKind::kBudget && !o.budgets) {
        return InvalidArgument(fmt::format("cgov daemon: --notify {}:{}: a budget rule needs "
                                           "--budgets FILE", notify, r.line));
      }
      if (r.kind == NotifyRuleKind::kPolicy && !o.policy) {
        return InvalidArgument(fmt::format("cgov daemon: --notify {}:{}: a policy rule needs "
                                           "--policy FILE", notify, r.line));
      }
    }
    if (o.notify_state.empty()) o.notify_state = o.db + ".notify";
  }
  return o;
}

}  // namespace

namespace {

// Waits until `deadline` (CLOCK_MONOTONIC ns) or one of `signals`; the signal, or 0 at the
// deadline. A signal that arrived during a tick counts even when the tick overran its interval
// (a slow driver): it was ignored then, and a daemon whose every tick overran could not be
// stopped.
int WaitForSignal(const sigset_t& signals, int64_t deadline_ns, Clock& clock) {
  for (;;) {
    const int64_t left = std::max<int64_t>(0, deadline_ns - clock.MonotonicNs());
    timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
    const int sig = sigtimedwait(&signals, nullptr, &ts);
    if (sig > 0) return sig;
    // A poll (left 0) or a wait that timed out: nothing came by the deadline. Only an
    // interrupted wait (EINTR) waits on; polling after every timeout cost each tick a syscall.
    if (left == 0 || errno == EAGAIN) return 0;
  }
}

class Daemon {
 public:
  // The host files whose fields a tick keeps (BuildStoredTick) and /metrics serves (host_ok).
  explicit Daemon(DaemonOptions o)
      : o_(std::move(o)), files_(o_.host_root), host_(&files_, &clock_, kHostCpu | kHostMemory) {
    host_.set_memory_period_ns(kHostMemoryPeriod.count() * 1'000'000);
  }
  int Run(const sigset_t& stop);

 private:
  Status OpenWriter();
  Status StartRun();
  // The price this daemon prices `gpu` at (the one /metrics and the database carry).
  Result<ResolvedPrice> PriceOf(const GpuInfo& gpu) const;
  void Tick(TickSample* sample);
  void TickFailed(int64_t now_ms, const std::string& why);
  // Discards the writer after a failure; the ticks its rolled-back batch lost become failures.
  void DropWriter();
  void RecordXidEvents();
  void RecordMemoryHealth(const std::vector<GpuSlowSample>& slow, int64_t now_ms);
  Status StartServer();
  // Each budget's spend in its period, from the history, handed to /metrics; the ticks
  // credited after that carry it on.
  Status SeedBudgets();
  std::vector<MetricsGpu> MetricsGpus();
  void Reload();
  void HookCredits();
  // From the pod-resources poller's latest answer (when it changed), said when its error does.
  void UpdateAllocations();
  void Publish(const TickSample& sample, const StoredTick& stored, bool written);
  const IdentityRecord* IdentityOf(uint32_t id);
  std::string CommandOf(uint32_t id);
  ServedResponse Serve(const ServedRequest& request);
  Status StartNotifier();
  // This tick as the notification rules see it, and the notices it brings handed over.
  void Notify(const TickSample& sample, const std::vector<XidEvent>& xids);
  void PublishNotifications();  // the notifier's counts to /metrics
  // This tick's GPUs as the analysis sees them (gpu_points_, gpu_phases_), once for the
  // notification rules and the policy alike.
  void ClassifyGpus();
  void StartPolicy();
  // This tick's GPU processes as the policy sees them, its decisions carried out.
  void EnforcePolicy(int64_t now_ms);
  PolicyProcess PolicyProcessOf(const StoredProcess& p);

  DaemonOptions o_;
  SystemClock clock_;
  RootedFileReader files_;
  HostReader host_;
  std::unique_ptr<NvmlSource> nvml_;
  std::unique_ptr<HistoryWriter> writer_;
  std::unique_ptr<ProcessAttributor> attributor_;
  std::unique_ptr<KubePodDirectory> kube_pods_;  // with --kubernetes
  std::unique_ptr<KubePodWatch> kube_watch_;
  std::string kube_error_;  // the watch's last error, as last said
  int64_t kube_expired_ms_ = 0;
  std::unique_ptr<PodResourcesPoller> pod_resources_;  // with --pod-resources
  std::string pod_resources_error_;                    // its last error, as last said
  uint64_t allocations_generation_ = UINT64_MAX;       // of the snapshot allocations_ came from
  std::vector<GpuAllocation> allocations_;
  StoredTick stored_;  // this tick's, rebuilt in place each tick
  std::vector<uint32_t> gpu_ids_;
  RunRecord run_;
  RateLimitedLog failures_;
  int64_t ticks_ = 0, failed_ = 0, last_hours_ = 0;
  int64_t failed_in_a_row_ = 0, failing_since_ms_ = 0;  // for the message when writing recovers
  std::string db_problem_;  // the history file was removed or replaced: said until restart
  std::string hostname_;
  std::unique_ptr<DaemonMetrics> metrics_;   // with --listen
  std::unique_ptr<HttpServer> server_;
  std::map<uint32_t, IdentityRecord> identities_;  // dictionary cache for the metrics' labels
  std::map<uint32_t, std::string> commands_;
  std::vector<std::optional<MemoryHealth>> recorded_health_;  // per GPU, as last put in history
  std::vector<XidEvent> xids_;  // drained from the driver, not yet in the history
  std::unique_ptr<Notifier> notifier_;  // with --notify
  std::unique_ptr<NotifyEngine> notify_engine_;
  NotifyInput notify_input_;  // rebuilt in place each tick
  std::unique_ptr<PolicyEngine> policy_engine_;  // with --policy
  std::unique_ptr<PolicyExecutor> policy_executor_;
  std::map<uint32_t, std::optional<ProcessCredentials>> credentials_;  // by pid, while on a GPU
  std::map<uint32_t, std::string> group_names_;  // the host's /etc/group
  std::map<uint32_t, std::string> user_names_;   // the host's /etc/passwd
  std::map<uint32_t, ProcessExecutable> executables_;  // by pid, read with its credentials
  std::vector<PolicyActionRecord> policy_done_;  // recorded this tick, for --notify
  std::vector<GpuPoint> gpu_points_;                // by GPU position, this tick (ClassifyGpus)
  std::vector<std::optional<Phase>> gpu_phases_;
  std::vector<double> gpu_usd_per_hour_;  // each GPU's price as /metrics has it (0: unknown)
  std::map<uint32_t, MicroUsd> gpu_price_by_id_;  // the same, by GPU id, for the budgets
  std::shared_ptr<SharedBudgets> budgets_;  // --budgets: credited each tick, read by /metrics
  EnvironAccess environ_access_;          // whether other users' projects and teams are readable
};

Status Daemon::OpenWriter() {
  CGOV_ASSIGN_OR_RETURN(writer_, HistoryWriter::Open(o_.db));
  writer_->set_commit_policy({.max_ticks = 0, .max_age_ms = o_.commit_every.count()});
  attributor_ = std::make_unique<ProcessAttributor>(&files_, &writer_->store());
  attributor_->SetPods(kube_pods_.get());
  // PID reuse is told by pidfds, which name this PID namespace's processes: only when /proc is
  // this process's own (another mount's pids could name other processes here).
  if (o_.host_root == "/" || o_.host_root.empty()) attributor_->SetExitWatch(NewPidfdExitWatch());
  if (metrics_ || budgets_) HookCredits();
  return Status::Ok();
}

// Only ticks appended from now on reach the counters: what a writer's replay on open re-credits
// was counted already (or belongs to an earlier process, whose counters Prometheus saw reset).
// The budgets first: the metrics' Credit marks the exposition changed, so a scrape after it
// sees both.
void Daemon::HookCredits() {
  writer_->set_credit_sink([this](const TickCredit& credit) {
    if (budgets_) {
      for (const TickCredit::Identity& id : credit.identities) {
        const IdentityRecord* record = IdentityOf(id.identity_id);
        auto price = gpu_price_by_id_.find(id.gpu_id);
        if (record == nullptr || price == gpu_price_by_id_.end()) continue;
        budgets_->Credit(credit.ts_ms, *record, hostname_, price->second, id.attributed_ms);
      }
    }
    if (metrics_) metrics_->Credit(credit, [this](uint32_t id) { return IdentityOf(id); });
  });
}

Status Daemon::StartRun() {
  CGOV_ASSIGN_OR_RETURN(gpu_ids_, RegisterGpus(nvml_ ? nvml_->gpus() : std::vector<GpuInfo>{},
                                               &writer_->store()));
  // Priced once here (at start, and after SIGHUP re-read the catalog), not every tick.
  gpu_usd_per_hour_.clear();
  gpu_price_by_id_.clear();
  const std::vector<GpuInfo> infos = nvml_ ? nvml_->gpus() : std::vector<GpuInfo>{};
  for (size_t i = 0; i < infos.size(); ++i) {
    Result<ResolvedPrice> price = PriceOf(infos[i]);
    const bool priced = price.ok() && price->per_gpu_hour;
    gpu_usd_per_hour_.push_back(
        priced ? static_cast<double>(*price->per_gpu_hour) / kMicroPerUsd : 0);
    if (priced && i < gpu_ids_.size()) gpu_price_by_id_[gpu_ids_[i]] = *price->per_gpu_hour;
  }
  if (hostname_.empty()) {
    hostname_ = o_.hostname.empty() ? ReadHostInfo(files_).hostname : SafeText(o_.hostname);
  }
  last_hours_ = writer_->hours_written();
  // Reopened after a failed write: the same run goes on (one run row per daemon process), unless
  // the file is a different one now.
  if (run_.id != 0) {
    CGOV_ASSIGN_OR_RETURN(auto runs, writer_->store().Runs());
    if (auto it = runs.find(run_.id); it != runs.end() && it->second.source == run_.source &&
                                      it->second.started_ms == run_.started_ms) {
      return Status::Ok();
    }
  }
  CGOV_ASSIGN_OR_RETURN(run_, writer_->BeginRun("daemon", clock_.WallNs() / 1'000'000,
                                                o_.interval.count(), hostname_));
  // Said at start, kept with the run (every report over its window says it) and in /health.
  std::string status;
  environ_access_ = files_.Read("/proc/self/status", &status).ok() ? EnvironAccessOf(status)
                                                                    : EnvironAccess{};
  if (!environ_access_.others_readable) {
    fmt::print(stderr, "cgov daemon: warning: {}\n", environ_access_.warning);
    CGOV_RETURN_IF_ERROR(writer_->store().SetMeta(EnvironMetaKey(run_.id), environ_access_.warning));
  }
  if (!o_.instance_id.empty()) {
    CGOV_RETURN_IF_ERROR(writer_->store().SetMeta("instance_id", o_.instance_id));
  }
  // The price of each GPU, recorded with the data: a report on this database prices it as
  // /metrics does, whatever flags the report is run with (docs/history-db.md).
  for (size_t i = 0; i < infos.size() && i < gpu_ids_.size(); ++i) {
    CGOV_ASSIGN_OR_RETURN(ResolvedPrice price, PriceOf(infos[i]));
    CGOV_RETURN_IF_ERROR(
        writer_->store().PutPrice(gpu_ids_[i], run_.started_ms, RecordOfPrice(price)));
  }
  return Status::Ok();
}

Result<ResolvedPrice> Daemon::PriceOf(const GpuInfo& gpu) const {
  std::optional<uint64_t> mib;
  if (gpu.memory_total_bytes) mib = *gpu.memory_total_bytes >> 20;
  return ResolveUnitPrice(o_.price, gpu.name, gpu.mig, o_.catalog, mib);
}

// A tick that could not be written: counted as /metrics counts it, said at most once a minute.
void Daemon::TickFailed(int64_t now_ms, const std::string& why) {
  ++failed_;
  if (failing_since_ms_ == 0) failing_since_ms_ = now_ms;
  ++failed_in_a_row_;
  failures_.Report(now_ms, why);
}

void Daemon::DropWriter() {
  if (!writer_) return;
  const int64_t lost = writer_->abandoned_ticks();
  ticks_ -= lost;
  failed_ += lost;
  if (metrics_ && lost > 0) metrics_->CountLostTicks(lost);
  writer_.reset();
}

void Daemon::Tick(TickSample* sample) {
  const int64_t now_ms = clock_.WallNs() / 1'000'000;
  if (kube_watch_ && metrics_) metrics_->SetKubernetesOk(kube_watch_->healthy());
  if (kube_watch_ && now_ms - kube_expired_ms_ >= 60'000) {
    kube_expired_ms_ = now_ms;
    kube_pods_->Expire(now_ms);
    // Said when it changes, not every minute.
    if (std::string error = kube_watch_->LastError(); error != kube_error_) {
      if (!error.empty()) fmt::print(stderr, "cgov daemon: warning: --kubernetes: {}\n", error);
      kube_error_ = std::move(error);
    }
  }
  // Checked as each batch of ticks begins: a path lookup every tick cost more than the rest of
  // the file work, and a batch written to a replaced file is lost whichever tick finds it.
  if (writer_ && writer_->uncommitted_ticks() == 0) {
    // Someone removed or replaced the file (cgov demo --force, rm, a restore): what was written
    // since it was opened went with the old file. Said until the daemon restarts; from now on
    // the ticks go to whatever the path names (a new database if nothing).
    if (std::string change = writer_->store().FileChange(); !change.empty()) {
      const std::string problem = fmt::format(
          "the history database {} {} at {} while the daemon wrote to it; the ticks before "
          "went with the old file. Writing to {} again; restart the daemon once this is "
          "understood", o_.db, change, FormatRfc3339Utc(now_ms * 1'000'000), o_.db);
      fmt::print(stderr, "cgov daemon: warning: {}\n", problem);
      // /health answers without credentials: it names no path.
      if (metrics_) {
        metrics_->SetHistoryDbProblem(fmt::format(
            "the history database {} at {}; see the daemon's log", change,
            FormatRfc3339Utc(now_ms * 1'000'000)));
      }
      db_problem_ = problem;
      DropWriter();
    }
  }
  if (!writer_) {
    Status reopened = OpenWriter();
    if (reopened.ok()) reopened = StartRun();
    if (!reopened.ok()) {
      DropWriter();
      TickFailed(now_ms, reopened.message());
      if (metrics_) {
        metrics_->SetHistoryDbOk(false);
        metrics_->CountTick(/*failed=*/true);
      }
      return;
    }
  }
  Sampler sampler(nvml_.get(), nullptr, &host_, &clock_);
  sampler.Tick(sample);
  // The daemon has no job to keep out of the way of: process lists are read on the tick.
  if (nvml_) nvml_->ReadSlow(&sample->gpu_slow);
  Status built = BuildStoredTick(*sample, gpu_ids_, attributor_.get(), &stored_);
  if (built.ok() && pod_resources_) {
    UpdateAllocations();
    built = AddAllocations(allocations_, attributor_.get(), &stored_);
  }
  Status status = built;
  if (built.ok()) status = writer_->Append(sample->wall_ns / 1'000'000, run_, stored_).status();
  if (metrics_) {
    if (built.ok()) Publish(*sample, stored_, status.ok());
    else Publish(*sample, StoredTick{}, status.ok());
  }
  if (built.ok() && (policy_engine_ || notify_engine_)) ClassifyGpus();
  // The policy first: what it does this tick is noticed this tick.
  if (built.ok() && policy_engine_ && writer_) EnforcePolicy(sample->wall_ns / 1'000'000);
  if (nvml_) {
    std::vector<XidEvent> drained = nvml_->DrainXidEvents();
    if (built.ok() && notify_engine_) Notify(*sample, drained);
    xids_.insert(xids_.end(), drained.begin(), drained.end());
  } else if (built.ok() && notify_engine_) {
    Notify(*sample, {});
  }
  policy_done_.clear();
  PublishNotifications();
  if (!status.ok()) {
    TickFailed(now_ms, status.message());
    DropWriter();  // reopen: replays what was committed, so the rollups stay exact
    return;
  }
  ++ticks_;
  if (failed_in_a_row_ > 0) {
    fmt::print(stderr, "cgov daemon: {}: writing to {} again, after {} tick(s) not written since "
               "{}\n", FormatRfc3339Utc(now_ms * 1'000'000), o_.db, failed_in_a_row_,
               FormatRfc3339Utc(failing_since_ms_ * 1'000'000));
    failed_in_a_row_ = 0;
    failing_since_ms_ = 0;
  }
  if (nvml_) {
    RecordXidEvents();
    RecordMemoryHealth(sample->gpu_slow, now_ms);
  }
  if (writer_->hours_written() != last_hours_) {
    last_hours_ = writer_->hours_written();
    if (auto pruned = writer_->Prune(now_ms - o_.retain.count()); !pruned.ok()) {
      failures_.Report(now_ms, pruned.status().message());
    }
  }
}

void Daemon::UpdateAllocations() {
  if (metrics_) metrics_->SetPodResourcesOk(pod_resources_->healthy());
  if (std::string error = pod_resources_->LastError(); error != pod_resources_error_) {
    if (!error.empty()) fmt::print(stderr, "cgov daemon: warning: --pod-resources: {}\n", error);
    else fmt::print(stderr, "cgov daemon: --pod-resources: the kubelet answers again\n");
    pod_resources_error_ = std::move(error);
  }
  std::shared_ptr<const PodResourcesPoller::Snapshot> now = pod_resources_->Current();
  if (now->generation == allocations_generation_) return;
  allocations_generation_ = now->generation;
  allocations_ = AllocatedGpus(now->devices, nvml_ ? nvml_->gpus() : std::vector<GpuInfo>{});
}

// Each Xid once in the log and once in the history (kept as long as the ticks around it).
void Daemon::RecordXidEvents() {
  std::vector<XidEvent> xids;
  xids.swap(xids_);
  for (const XidEvent& e : xids) {
    const std::vector<GpuInfo>& gpus = nvml_->gpus();
    fmt::print(stderr, "cgov daemon: GPU {}: Xid {} reported by the driver\n",
               e.gpu_index < gpus.size() ? gpus[e.gpu_index].Label() : "?", e.xid);
    if (e.gpu_index >= gpu_ids_.size()) continue;
    Status put = writer_->store().PutEvent({e.unix_ms, gpu_ids_[e.gpu_index], "xid", e.xid});
    if (!put.ok()) failures_.Report(e.unix_ms, put.message());
  }
}

// Memory health is a state: recorded when it changes (and once per daemon start), so a report
// finds each GPU's latest state however long ago it was read.
void Daemon::RecordMemoryHealth(const std::vector<GpuSlowSample>& slow, int64_t now_ms) {
  recorded_health_.resize(gpu_ids_.size());
  for (size_t i = 0; i < slow.size() && i < gpu_ids_.size(); ++i) {
    const std::optional<MemoryHealth>& h = slow[i].memory_health;
    if (!h || h == recorded_health_[i]) continue;
    if (h->NeedsAction()) {
      fmt::print(stderr, "cgov daemon: GPU {}: memory needs attention (see `cgov doctor`)\n",
                 nvml_->gpus()[i].Label());
    }
    Status put = writer_->store().PutEvent(
        {now_ms, gpu_ids_[i], "memory_health", EncodeMemoryHealth(*h)});
    if (!put.ok()) {
      failures_.Report(now_ms, put.message());
      continue;
    }
    recorded_health_[i] = h;
  }
}

const IdentityRecord* Daemon::IdentityOf(uint32_t id) {
  auto it = identities_.find(id);
  if (it == identities_.end() && writer_) {
    if (auto all = writer_->store().Identities(); all.ok()) identities_ = std::move(all).value();
    it = identities_.find(id);
  }
  return it == identities_.end() ? nullptr : &it->second;
}

std::string Daemon::CommandOf(uint32_t id) {
  auto it = commands_.find(id);
  if (it == commands_.end() && writer_) {
    if (auto all = writer_->store().Commands(); all.ok()) commands_ = std::move(all).value();
    it = commands_.find(id);
  }
  return it == commands_.end() ? std::string() : it->second;
}

// Hands the tick to /metrics: readings, processes with their users, collector health.
void Daemon::Publish(const TickSample& sample, const StoredTick& stored, bool written) {
  MetricsTick t;
  t.wall_ms = sample.wall_ns / 1'000'000;
  t.gpus = sample.gpu_fast;
  for (const GpuSlowSample& g : sample.gpu_slow) {
    t.gpm.push_back(g.gpm);
    t.memory_health.push_back(g.memory_health);
  }
  t.nvml_ok = nvml_ != nullptr;
  for (const GpuFastSample& g : sample.gpu_fast) t.nvml_ok = t.nvml_ok && !g.lost;
  t.processes_ok = nvml_ != nullptr;
  for (const GpuSlowSample& g : sample.gpu_slow) t.processes_ok = t.processes_ok && g.processes_known;
  t.host_ok = host_.errors().empty();
  for (const StoredProcess& p : stored.processes) {
    MetricsProcess& m = t.processes.emplace_back();
    m.gpu_pos = p.gpu_pos;
    m.pid = p.pid;
    m.compute = p.compute;
    if (p.mem_used_mib) m.used_memory_bytes = uint64_t{*p.mem_used_mib} << 20;
    if (const IdentityRecord* id = IdentityOf(p.identity_id)) m.user = id->user;
    m.command = CommandOf(p.command_id);
  }
  metrics_->RecordTick(std::move(t));
  metrics_->SetHistoryDbOk(written);
  metrics_->CountTick(!written);
}

ServedResponse Daemon::Serve(const ServedRequest& request) {
  ServedResponse r;
  const int64_t now_ms = clock_.WallNs() / 1'000'000;
  if (request.path == "/metrics") {
    const ExpositionFormat format = NegotiateFormat(request.accept);
    r.content_type = ContentTypeOf(format);
    r.body = metrics_->Render(format, now_ms);
  } else if (request.path == "/health" || request.path == "/healthz") {
    // Healthy while sampling keeps up and the history is safe; a stuck or failing sampler, or a
    // database file removed under the daemon, shows as 503.
    const bool fresh = metrics_->SamplerFresh(now_ms);
    const std::string problem = metrics_->HistoryDbProblem();
    r.status = fresh && problem.empty() ? 200 : 503;
    r.body = !problem.empty() ? problem + "\n"
             : fresh          ? "ok\n"
                              : "stale: no sample within the staleness limit\n";
    // Healthy, but recording less than it could: said on a line of its own.
    if (!environ_access_.others_readable) r.body += "warning: " + environ_access_.warning + "\n";
  } else if (request.path == "/") {
    r.content_type = "text/html; charset=utf-8";
    r.body = "<!doctype html><title>cgov daemon</title><h1>cgov daemon</h1>"
             "<p><a href=\"/metrics\">/metrics</a> &middot; <a href=\"/health\">/health</a></p>\n";
  } else {
    r.status = 404;
    r.body = "not found: try /metrics or /health\n";
  }
  return r;
}

// The GPUs as /metrics labels and prices them.
std::vector<MetricsGpu> Daemon::MetricsGpus() {
  std::vector<MetricsGpu> gpus;
  const std::vector<GpuInfo> infos = nvml_ ? nvml_->gpus() : std::vector<GpuInfo>{};
  for (size_t i = 0; i < infos.size() && i < gpu_ids_.size(); ++i) {
    MetricsGpu& g = gpus.emplace_back();
    g.gpu_id = gpu_ids_[i];
    g.index = infos[i].index;
    g.uuid = infos[i].uuid.empty() ? fmt::format("index:{}", infos[i].index) : infos[i].uuid;
    g.name = infos[i].name;
    if (const std::optional<MigInstance>& mig = infos[i].mig) {  // labelled as dcgm-exporter does
      if (!mig->parent_uuid.empty()) g.uuid = mig->parent_uuid;
      if (!mig->parent_name.empty()) g.name = mig->parent_name;
      g.gpu_instance_id = mig->gpu_instance_id;
      g.mig_profile = mig->profile;
    }
    g.pci_bus_id = infos[i].pci_bus_id;
    g.memory_reserved_bytes = infos[i].memory_reserved_bytes;
    if (Result<ResolvedPrice> price = PriceOf(infos[i]); price.ok()) {
      g.price_per_gpu_hour = price->per_gpu_hour;
      g.price_source = price->Label();  // the history and `cgov prices` keep the whole story
    }
  }
  return gpus;
}

// SIGHUP, as daemons take it: re-read the price catalog (--price-catalog), reopen the database
// (moved by a restore or a rotation), and price the GPUs again from now on, in /metrics and in
// the database. A catalog that no longer parses is reported and the one in use kept.
void Daemon::Reload() {
  const int64_t now_ms = clock_.WallNs() / 1'000'000;
  std::string what = "database reopened";
  if (!o_.catalog_path.empty()) {
    PriceCatalog catalog;
    PriceOptions price = o_.price;
    if (Status s = ApplyPriceFlags(o_.catalog_path, "", &price, &catalog); !s.ok()) {
      fmt::print(stderr, "cgov daemon: SIGHUP: keeping the price catalog in use: {}\n",
                 s.message());
    } else {
      o_.catalog = std::move(catalog);
      what += ", price catalog " + o_.catalog_path + " re-read";
    }
  }
  if (writer_) {
    if (Status s = writer_->Commit(); !s.ok()) fmt::print(stderr, "cgov daemon: {}\n", s.message());
    DropWriter();
  }
  Status reopened = OpenWriter();
  if (reopened.ok()) reopened = StartRun();
  if (!reopened.ok()) {
    DropWriter();  // the next tick tries again, and counts a failure if it cannot
    fmt::print(stderr, "cgov daemon: SIGHUP: {}\n", reopened.message());
  } else {
    const std::vector<GpuInfo> infos = nvml_ ? nvml_->gpus() : std::vector<GpuInfo>{};
    for (size_t i = 0; i < infos.size() && i < gpu_ids_.size(); ++i) {
      Result<ResolvedPrice> price = PriceOf(infos[i]);
      if (!price.ok()) continue;
      if (Status s = writer_->store().PutPrice(gpu_ids_[i], now_ms, RecordOfPrice(*price));
          !s.ok()) {
        fmt::print(stderr, "cgov daemon: SIGHUP: {}\n", s.message());
      }
    }
  }
  if (metrics_) metrics_->SetGpus(MetricsGpus());
  if (budgets_ && writer_) {
    Result<BudgetFile> budgets = ReadBudgets(o_.budgets_path);
    if (!budgets.ok()) {
      fmt::print(stderr, "cgov daemon: SIGHUP: keeping the budgets in use: {}\n",
                 budgets.status().message());
    } else {
      o_.budgets = std::move(budgets).value();
      what += ", budgets " + o_.budgets_path + " re-read";
    }
    // From the history, committed above: every credit so far is in it.
    if (Status s = SeedBudgets(); !s.ok()) {
      fmt::print(stderr, "cgov daemon: SIGHUP: budgets: {}\n", s.message());
    }
  }
  fmt::print(stderr, "cgov daemon: SIGHUP: {}\n", what);
}

Status Daemon::StartNotifier() {
  std::vector<Incident> open;
  int64_t waiting = 0;
  CGOV_ASSIGN_OR_RETURN(notifier_, Notifier::Start(*o_.notify, o_.notify_state, &open, &waiting));
  std::vector<std::string> sinks;
  for (const NotifySink& s : o_.notify->sinks) sinks.push_back(s.name);
  notify_engine_ = std::make_unique<NotifyEngine>(o_.notify->rules, std::move(sinks), hostname_);
  for (const Incident& i : notify_engine_->Restore(std::move(open))) {
    fmt::print(stderr, "cgov daemon: --notify: rule {:?} is no longer in {}: its open incident "
               "{} is dropped without a resolved notice\n", i.rule, o_.notify->path, i.key);
  }
  fmt::print(stderr, "cgov daemon: --notify: {} rule(s), {} sink(s) from {}; state in {} ({} "
             "open incident(s), {} notice(s) waiting)\n", o_.notify->rules.size(),
             o_.notify->sinks.size(), o_.notify->path, o_.notify_state,
             notify_engine_->incidents().size(), waiting);
  return Status::Ok();
}

void Daemon::ClassifyGpus() {
  gpu_points_.resize(stored_.gpus.size());
  gpu_phases_.resize(stored_.gpus.size());
  for (size_t i = 0; i < stored_.gpus.size(); ++i) {
    gpu_points_[i] = StoredGpuPoint(stored_, i);
    const GpuPoint& p = gpu_points_[i];
    gpu_phases_[i].reset();
    if (p.util_pct) {
      gpu_phases_[i] = Classify(*p.util_pct, p.compute_memory_bytes, PhaseThresholds{}, p.allocated);
    }
  }
}

void Daemon::Notify(const TickSample& sample, const std::vector<XidEvent>& xids) {
  NotifyInput& in = notify_input_;
  in.now_ms = sample.wall_ns / 1'000'000;
  static const std::vector<GpuInfo> kNone;
  const std::vector<GpuInfo>& infos = nvml_ ? nvml_->gpus() : kNone;
  in.gpus.resize(std::min(stored_.gpus.size(), infos.size()));
  for (size_t i = 0; i < in.gpus.size(); ++i) {
    NotifyGpu& g = in.gpus[i];
    g.id = {infos[i].index, infos[i].uuid.empty() ? fmt::format("index:{}", infos[i].index)
                                                  : infos[i].uuid, infos[i].name};
    g.util_pct = gpu_points_[i].util_pct;
    g.phase = gpu_phases_[i];
    g.memory_pct.reset();
    if (i < sample.gpu_fast.size() && !stored_.gpus[i].lost && sample.gpu_fast[i].mem_used_bytes &&
        infos[i].memory_total_bytes.value_or(0) > 0) {
      g.memory_pct = 100.0 * static_cast<double>(*sample.gpu_fast[i].mem_used_bytes) /
                     static_cast<double>(*infos[i].memory_total_bytes);
    }
    g.usd_per_hour = i < gpu_usd_per_hour_.size() ? gpu_usd_per_hour_[i] : 0;
  }
  in.processes.clear();
  for (const StoredProcess& p : stored_.processes) {
    NotifyProcess& n = in.processes.emplace_back();
    n.gpu_pos = p.gpu_pos;
    n.pid = p.pid;
    n.compute = p.compute;
    n.mem_mib = p.mem_used_mib.value_or(0);
    const IdentityRecord* id = IdentityOf(p.identity_id);
    n.user = id != nullptr ? id->user : "";
    n.command = CommandOf(p.command_id);
  }
  in.xids.clear();
  for (const XidEvent& x : xids) in.xids.push_back({x.gpu_index, x.xid, x.unix_ms});
  in.policy_actions.clear();
  for (const PolicyActionRecord& r : policy_done_) {
    NotifyPolicyAction& a = in.policy_actions.emplace_back();
    a.record = r;
    auto at = std::find(gpu_ids_.begin(), gpu_ids_.end(), r.gpu_id);
    if (at != gpu_ids_.end()) a.gpu_pos = static_cast<size_t>(at - gpu_ids_.begin());
  }
  in.budgets.clear();
  if (budgets_) {
    budgets_->Read(in.now_ms, [&](const std::vector<BudgetTracker::Row>& rows) {
      for (const BudgetTracker::Row& r : rows) {
        const std::string scope(HistoryByName(r.budget->scope));
        const std::string period(BudgetPeriodName(r.budget->period));
        in.budgets.push_back({fmt::format("{} {}, {}ly", scope, r.budget->name, period),
                              fmt::format("{}/{}/{}", scope, r.budget->name, period),
                              static_cast<double>(r.budget->amount) / kMicroPerUsd,
                              static_cast<double>(r.spent) / kMicroPerUsd,
                              r.budget->alert_pcts});
      }
    });
  }
  std::vector<Notice> notices = notify_engine_->Evaluate(in);
  if (notices.empty()) return;
  for (const Notice& n : notices) {
    fmt::print(stderr, "cgov daemon: notice ({}): {}\n", NoticeEventName(n.event), n.summary);
  }
  std::vector<Incident> open;
  for (const auto& [key, incident] : notify_engine_->incidents()) open.push_back(incident);
  notifier_->Submit(std::move(notices), std::move(open));
}

void Daemon::PublishNotifications() {
  if (!metrics_ || !notifier_) return;
  const Notifier::Counts c = notifier_->counts();
  metrics_->SetNotifications({c.sent, c.failed, c.dropped, c.given_up, c.queued});
}

void Daemon::StartPolicy() {
  std::string groups;
  if (Status s = files_.Read("/etc/group", &groups); !s.ok()) {
    fmt::print(stderr, "cgov daemon: warning: --policy: {}; policies scoped by group match no "
               "one\n", s.message());
  }
  group_names_ = ParseGroupFile(groups);
  std::string users;
  if (Status s = files_.Read("/etc/passwd", &users); !s.ok()) {
    fmt::print(stderr, "cgov daemon: warning: --policy: {}; policies scoped by user match no "
               "one\n", s.message());
  }
  user_names_ = ParsePasswd(users);
  policy_engine_ = std::make_unique<PolicyEngine>(*o_.policy);
  policy_executor_ = std::make_unique<PolicyExecutor>(
      o_.policy_dry_run, [this](const PolicyActionRecord& r) {
        if (notify_engine_) policy_done_.push_back(r);
        if (!writer_) return;
        if (Status s = writer_->store().PutPolicyAction(r); !s.ok()) {
          failures_.Report(r.ts_ms, s.message());
        }
      });
  fmt::print(stderr, "cgov daemon: --policy: {} polic{} from {}; {}\n", o_.policy->rules.size(),
             o_.policy->rules.size() == 1 ? "y" : "ies", o_.policy->path,
             o_.policy_dry_run ? "dry run: it records what it would do and signals nothing"
                               : "enabled: it sends SIGTERM, then SIGKILL after each grace");
}

PolicyProcess Daemon::PolicyProcessOf(const StoredProcess& sp) {
  PolicyProcess p;
  p.pid = sp.pid;
  p.gpu_id = sp.gpu_pos < gpu_ids_.size() ? gpu_ids_[sp.gpu_pos] : 0;
  auto [it, fresh] = credentials_.try_emplace(sp.pid);
  if (fresh) {
    Result<ProcessCredentials> read = ReadCredentials(files_, sp.pid);
    if (read.ok()) it->second = *read;
    const bool host = o_.host_root.empty() || o_.host_root == "/";
    executables_[sp.pid] = ReadExecutable(host ? "/proc" : o_.host_root + "/proc", sp.pid);
  }
  if (it->second) {
    const ProcessCredentials& c = *it->second;
    p.start_ticks = c.start_ticks;
    p.uid = c.uid;
    p.euid = c.euid;
    p.suid = c.suid;
    p.loginuid = c.loginuid;
    // Scope is by the owner, the real uid: not the login user (carol logged in as alice is
    // still carol), whom the reports name.
    if (auto u = user_names_.find(c.uid); u != user_names_.end()) p.user = u->second;
    for (uint32_t gid : c.gids) {
      if (auto g = group_names_.find(gid); g != group_names_.end()) p.groups.push_back(g->second);
    }
  }
  if (auto e = executables_.find(sp.pid); e != executables_.end()) {
    p.exe = e->second.path;
    p.exe_trusted = e->second.trusted;
  }
  p.command = CommandOf(sp.command_id);
  p.idle_held = true;
  return p;
}

void Daemon::EnforcePolicy(int64_t now_ms) {
  // A pid whose process exited may name another now: its credentials are read again.
  if (attributor_) {
    for (uint32_t pid : attributor_->exited()) {
      credentials_.erase(pid);
      executables_.erase(pid);
    }
  }
  std::map<uint32_t, PolicyProcess> by_pid;
  std::set<uint32_t> computing;  // held compute memory somewhere
  for (const StoredProcess& sp : stored_.processes) {
    if (sp.gpu_pos >= gpu_points_.size()) continue;
    const GpuPoint& g = gpu_points_[sp.gpu_pos];
    auto it = by_pid.find(sp.pid);
    if (it == by_pid.end()) it = by_pid.emplace(sp.pid, PolicyProcessOf(sp)).first;
    PolicyProcess& p = it->second;
    // Unknown utilization counts as use: a guard that cannot be checked holds.
    p.used_gpu = p.used_gpu || g.util_pct.value_or(1) > 0 || sp.sm_util_pct.value_or(0) > 0;
    if (!sp.compute) continue;
    computing.insert(sp.pid);
    p.idle_held = p.idle_held && gpu_phases_[sp.gpu_pos] == Phase::kIdleHeld;
  }
  std::vector<PolicyProcess> processes;
  std::set<uint32_t> used;
  for (auto& [pid, p] : by_pid) {
    p.idle_held = p.idle_held && computing.count(pid) > 0;
    if (p.used_gpu) used.insert(pid);
    processes.push_back(std::move(p));
  }
  for (const PolicyDecision& d : policy_engine_->Evaluate(now_ms, processes)) {
    policy_executor_->Act(d, now_ms);
  }
  policy_executor_->Tick(now_ms, used);
  for (auto it = credentials_.begin(); it != credentials_.end();) {
    it = by_pid.count(it->first) > 0 ? std::next(it) : credentials_.erase(it);
  }
  for (auto it = executables_.begin(); it != executables_.end();) {
    it = credentials_.count(it->first) > 0 ? std::next(it) : executables_.erase(it);
  }
}

Status Daemon::StartServer() {
  MetricsOptions mo;
  mo.hostname = hostname_;
  mo.instance_id = o_.instance_id;
  mo.interval_ms = o_.interval.count();
  mo.dcgm_names = o_.dcgm_names;
  mo.process_series = o_.process_series;
  metrics_ = std::make_unique<DaemonMetrics>(mo);
  metrics_->SetGpus(MetricsGpus());
  if (budgets_) metrics_->SetBudgets(budgets_);
  CGOV_ASSIGN_OR_RETURN(server_, HttpServer::Start(*o_.http, [this](const ServedRequest& request) {
                          return Serve(request);
                        }));
  HookCredits();  // the writer was opened before the metrics existed
  const ListenAddress& a = o_.http->address;
  // An IPv6 address in a URL is bracketed, the port after the bracket: http://[::1]:9400.
  fmt::print(stderr, "cgov daemon: serving /metrics on {}://{}{}{}:{}\n",
             o_.http->tls_cert_pem.empty() ? "http" : "https", a.ipv6 ? "[" : "", a.host,
             a.ipv6 ? "]" : "", server_->port());
  if (!a.IsLoopback() && o_.http->users.empty()) {
    fmt::print(stderr, "cgov daemon: warning: /metrics is open to the network without "
               "authentication (--web-config or --basic-auth-file); it names users, projects "
               "and processes\n");
  }
  return Status::Ok();
}

Status Daemon::SeedBudgets() {
  const int64_t started_ns = clock_.MonotonicNs();
  // Up to the last tick written, which the writer, just opened, credits when the next tick
  // comes (for its interval, or the time to the next tick of the same run), as a report reads
  // it; up to now in a history without ticks.
  CGOV_ASSIGN_OR_RETURN(auto range, writer_->store().TickRange());
  const int64_t as_of_ms = range ? range->second : clock_.WallNs() / 1'000'000;
  CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                        LoadHistory(writer_->store(), BudgetDataStartMs(*o_.budgets, as_of_ms),
                                    as_of_ms, PhaseThresholds{}));
  HistoryOptions options;  // priced as the cost counters are
  options.price = o_.price;
  options.catalog = &o_.catalog;
  CGOV_ASSIGN_OR_RETURN(auto prices, GpuHourlyPrices(in, options));
  budgets_->Set(BudgetTracker(EvaluateBudgets(*o_.budgets, in, prices, as_of_ms), as_of_ms));
  fmt::print(stderr, "cgov daemon: --budgets: {} budget(s) from {}; their spend so far read from "
             "the history in {:.2f} s\n", o_.budgets->budgets.size(), o_.budgets_path,
             static_cast<double>(clock_.MonotonicNs() - started_ns) / 1e9);
  return Status::Ok();
}

int Daemon::Run(const sigset_t& stop) {
  // The directory before the writer (its attributor reads it); the watch that fills it only
  // once the database opened: a wrong --db asks the API server nothing.
  if (o_.kube) kube_pods_ = std::make_unique<KubePodDirectory>(o_.kube_labels);
  // The database first: a wrong --db fails at once, before the driver is loaded.
  if (Status s = OpenWriter(); !s.ok()) {
    fmt::print(stderr, "cgov daemon: {}\n", s.message());
    return kExitFailure;
  }
  if (o_.kube) {
    Result<std::unique_ptr<KubePodWatch>> watch = KubePodWatch::Start(*o_.kube, kube_pods_.get());
    if (!watch.ok()) {
      fmt::print(stderr, "cgov daemon: --kubernetes: {}\n", watch.status().message());
      return kExitFailure;
    }
    kube_watch_ = std::move(watch).value();
  }
  if (o_.pod_resources) {
    Result<std::unique_ptr<PodResourcesPoller>> poller = PodResourcesPoller::Start(*o_.pod_resources);
    if (!poller.ok()) {
      fmt::print(stderr, "cgov daemon: --pod-resources: {}\n", poller.status().message());
      return kExitFailure;
    }
    pod_resources_ = std::move(poller).value();
    if (std::string error = pod_resources_->LastError(); !error.empty()) {
      fmt::print(stderr, "cgov daemon: warning: --pod-resources: {}; retrying every {}\n", error,
                 FormatDuration(o_.pod_resources->interval));
      pod_resources_error_ = std::move(error);
    } else {
      fmt::print(stderr, "cgov daemon: --pod-resources: {} device(s) allocated to containers\n",
                 pod_resources_->Current()->devices.size());
    }
  }
  if (!writer_->store().fully_checked()) {
    fmt::print(stderr, "cgov daemon: {}: SQLite's quick_check did not finish within {} s; the "
               "database was only partly checked before writing (`sqlite3 {} 'PRAGMA "
               "quick_check'` checks it all)\n", o_.db,
               HistoryStore::kWriterCheckBudget.count() / 1000, o_.db);
  }
  if (auto opened = NvmlSource::Open(o_.nvml_lib); opened.ok()) {
    nvml_ = std::move(opened).value();
    nvml_->StartEventWatch();
    // The energy counter serves /metrics alone, and one read costs milliseconds of CPU on a real
    // driver: read it at most every kEnergyPeriod (a counter: a scrape sees it that much late).
    if (o_.http) nvml_->SetEnergyPeriod(kEnergyPeriod.count() * 1'000'000);
  } else {
    fmt::print(stderr, "cgov daemon: no GPU data: {}; recording host samples only\n",
               opened.status().message());
  }
  if (Status s = StartRun(); !s.ok()) {
    fmt::print(stderr, "cgov daemon: {}\n", s.message());
    return kExitFailure;
  }
  if (o_.budgets) {  // before the server and the notices, which read them
    budgets_ = std::make_shared<SharedBudgets>();
    if (Status s = SeedBudgets(); !s.ok()) {
      fmt::print(stderr, "cgov daemon: {}\n", s.message());
      return kExitFailure;
    }
    HookCredits();
  }
  if (o_.http) {
    if (Status s = StartServer(); !s.ok()) {
      fmt::print(stderr, "cgov daemon: {}\n", s.message());
      return kExitFailure;
    }
  }
  if (o_.policy) StartPolicy();
  if (o_.notify) {
    if (Status s = StartNotifier(); !s.ok()) {
      fmt::print(stderr, "cgov daemon: --notify: {}\n", s.message());
      return kExitFailure;
    }
  }
  if (kube_watch_) {
    // The first ticks should name their pods: the list usually takes well under a second.
    if (kube_watch_->WaitSynced(std::chrono::seconds(10))) {
      fmt::print(stderr, "cgov daemon: --kubernetes: {} pod(s) on node {}\n", kube_pods_->size(),
                 o_.kube->node_name);
    } else {
      kube_error_ = kube_watch_->LastError();
      fmt::print(stderr, "cgov daemon: warning: --kubernetes: no pod list yet ({}); recording pod "
                 "UIDs until it comes\n", kube_error_.empty() ? "no answer in 10 s" : kube_error_);
    }
  }
  fmt::print(stderr, "cgov daemon: recording {} GPU(s) every {} into {} (pid {}); stop with "
             "SIGINT or SIGTERM, reload with SIGHUP\n", gpu_ids_.size(),
             FormatDuration(o_.interval), o_.db, getpid());
  TickSample sample;
  int64_t next = clock_.MonotonicNs();
  for (;;) {
    Tick(&sample);
    // A late tick is taken late, never twice to catch up.
    next = std::max(next + o_.interval.count() * 1'000'000, clock_.MonotonicNs());
    int sig = 0;
    while ((sig = WaitForSignal(stop, next, clock_)) == SIGHUP) Reload();
    if (sig != 0) break;
  }
  server_.reset();  // no scrape reads the state while it goes away
  kube_watch_.reset();
  notifier_.reset();  // what the last ticks brought is written before it goes
  Status committed = writer_ ? writer_->Commit() : Status::Ok();
  DropWriter();
  // The same counts as cgov_ticks_total and cgov_tick_failures_total.
  fmt::print(stderr, "cgov daemon: stopped after {} tick(s){}\n", ticks_ + failed_,
             failed_ > 0 ? fmt::format(", {} not written", failed_) : "");
  if (!db_problem_.empty()) fmt::print(stderr, "cgov daemon: warning: {}\n", db_problem_);
  if (!committed.ok()) fmt::print(stderr, "cgov daemon: {}\n", committed.message());
  return kExitOk;
}

}  // namespace

int RunDaemon(int argc, char** argv) {
  int help_exit = -1;
  Result<DaemonOptions> options = ParseDaemonOptions(argc, argv, &help_exit);
  if (help_exit >= 0) return help_exit;
  if (!options.ok()) {
    fmt::print(stderr, "{}\n", options.status().message());
    return kExitUsage;
  }
  // Blocked before any thread exists (NVML may start some): signals are taken only between
  // ticks, so a tick always finishes.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);  // reload, not death (Daemon::Reload)
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  // A file-size limit (ulimit -f) reached is a failed write, as a full disk is, not death: the
  // daemon counts the tick, says so, and writes again when it can.
  signal(SIGXFSZ, SIG_IGN);
  Daemon daemon(std::move(options).value());
  return daemon.Run(stop);
}

}  // namespace cgov::cli
