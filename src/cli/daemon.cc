// `cgov daemon`: its flags into typed options (the files they name read by
// src/app/daemon/daemon_config.h), then the daemon (src/app/daemon/) until a signal.
#include "cli/daemon.h"

#include <signal.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon.h"
#include "app/daemon/daemon_config.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "core/duration.h"
#include "core/text.h"
#include "os/log.h"
#include "store/state_directory.h"

namespace cgov::cli {
namespace {

// Not dcgm-exporter's 9400: both run on GPU nodes (docs/metrics.md, "Beside dcgm-exporter").
constexpr char kDefaultListen[] = "127.0.0.1:9474";

// The command line as given, before it is checked and typed.
struct Flags {
  DaemonOptions o;
  DaemonFiles files;
  std::string interval = "30s", retain = "90d", commit_every = "10s";
  std::string listen, metrics_names = "cgov";
  std::string log_level = "info", log_format = "text", detect_instance;
  bool kubernetes = false, pod_resources = false;
  KubeApiOptions kube = InClusterKubeApi();
  PodResourcesOptions pod_resources_options;
};

void AddRecordingFlags(CLI::App& app, Flags& f) {
  DaemonOptions& o = f.o;
  app.add_option(
      "--db", o.db,
      fmt::format(
          "history database, created if missing (default: {}/{}, or under $STATE_DIRECTORY, "
          "systemd's StateDirectory=; that directory is created when missing)",
          kDefaultStateDirectory, kHistoryDbName));
  app.add_option("--interval", f.interval, "time between samples, 100ms to 1h")
      ->capture_default_str();
  app.add_option("--retain", f.retain,
                 "keep raw samples this long; hourly rollups are kept forever")
      ->capture_default_str();
  app.add_option("--commit-every", f.commit_every,
                 "write samples to the database in one transaction at most this often (0s: every "
                 "tick); a crash of the daemon loses at most this much, never a committed sample; "
                 "SIGTERM, SIGINT and SIGHUP commit first")
      ->capture_default_str();
  app.add_option("--nvml-lib", o.nvml_lib, "NVML library to load");
  app.add_flag("--allow-no-gpus", o.allow_no_gpus,
               "a host without NVIDIA GPUs on purpose: record host samples and answer /health 200 "
               "(without it, a daemon whose driver does not load or shows no GPU runs on but "
               "answers /health 503 with the reason, so that a readiness probe sees it)");
  app.add_option(
         "--host-root", o.host_root,
         "read /proc and /etc under this directory, e.g. a host mounted at /host in a container")
      ->check(CLI::ExistingDirectory)
      ->capture_default_str();
  app.add_option(
      "--hostname", o.hostname,
      "the name this host is reported under (default: its own; in Kubernetes pass the node name)");
  app.add_option("--instance-id", o.instance_id,
                 "the id the cloud bills this host as (AWS i-0abc…, a GCP instance id, an Azure "
                 "resource id): recorded with the data and on /metrics, so `cgov report --billing` "
                 "finds this host's lines without a map")
      ->check([](const std::string& id) {
        return !id.empty() && id.size() <= 512 && IsSafeText(id) &&
                       id.find_first_of(" ,\"") == std::string::npos
                   ? std::string()
                   : std::string("expected an id without spaces, commas or quotes");
      });
}

void AddListenFlags(CLI::App& app, Flags& f) {
  app.add_option("--listen,--web.listen-address", f.listen,
                 fmt::format("off unless given: serve Prometheus /metrics and /health on HOST:PORT "
                             "(alone: {}; another address only when named; docs/metrics.md)",
                             kDefaultListen))
      ->expected(0, 1)
      ->default_str(kDefaultListen);
  app.add_option("--metrics-names", f.metrics_names,
                 "cgov: GPU readings under cgov's own names only, safe beside dcgm-exporter; dcgm: "
                 "under dcgm-exporter's DCGM_FI_* names too, for a node without dcgm-exporter "
                 "whose dashboards expect them (docs/metrics.md)")
      ->check(CLI::IsMember({"cgov", "dcgm"}))
      ->capture_default_str();
  app.add_flag("--metrics-processes", f.o.process_series,
               "also serve one series per GPU process (its pid a label: a new series with every "
               "process; off by default, docs/metrics.md \"Series budget\")");
  app.add_option("--basic-auth-file", f.files.basic_auth,
                 "require HTTP basic auth: a file with one line USER:PASSWORD");
  app.add_option(
      "--web-config,--web.config.file", f.files.web_config,
      "a Prometheus web configuration file (the exporters' format): basic_auth_users with bcrypt "
      "hashes, tls_server_config's cert_file and key_file (docs/metrics.md)");
  app.add_option("--tls-cert", f.files.tls_cert,
                 "serve HTTPS with this PEM certificate (with --tls-key)");
  app.add_option("--tls-key", f.files.tls_key, "the PEM private key of --tls-cert");
}

void AddKubernetesFlags(CLI::App& app, Flags& f) {
  app.add_flag("--kubernetes", f.kubernetes,
               "name pods: watch this node's pods on the Kubernetes API server (in-cluster service "
               "account by default) for each GPU process's namespace, pod, container and labels "
               "(docs/kubernetes.md)");
  app.add_option("--node-name", f.kube.node_name,
                 "with --kubernetes: this node's name (also env NODE_NAME; default: --hostname)");
  app.add_option("--kube-api", f.kube.api_url,
                 "with --kubernetes: the API server's URL (default: "
                 "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)");
  app.add_option("--kube-token-file", f.kube.token_file,
                 "with --kubernetes: a bearer token, re-read at every connection (\"\": none)")
      ->capture_default_str();
  app.add_option("--kube-ca-file", f.kube.ca_file,
                 "with --kubernetes: the API server's CA (\"\": the system's)")
      ->capture_default_str();
  app.add_option("--kube-labels", f.files.kube_labels,
                 "which pod (and Docker container) labels give the project, team and user, first "
                 "present wins (default: "
                 "project=project-id,app.kubernetes.io/part-of,app.kubernetes.io/"
                 "name;team=team-id;user=user-id)");
  app.add_flag("--pod-resources", f.pod_resources,
               "with --kubernetes: ask the kubelet's pod-resources API which GPUs each container "
               "was given, and charge a GPU allocated to a pod to it (idle-held when idle) whether "
               "or not its processes are seen");
  app.add_option("--pod-resources-socket", f.pod_resources_options.socket_path,
                 "with --pod-resources: the kubelet's socket")
      ->capture_default_str();
}

void AddLogFlags(CLI::App& app, Flags& f) {
  app.add_flag("--log-ticks", f.o.log_ticks,
               "log a line each tick: every GPU's phase and utilization, and who holds an "
               "idle-held GPU (off by default)");
  app.add_option("--log.level", f.log_level,
                 "log only events at this level and above: debug, info, warn or error")
      ->type_name("debug|info|warn|error")
      ->capture_default_str();
  app.add_option(
         "--log.format", f.log_format,
         "text (\"cgov daemon: warning: ...\"), logfmt (ts=... level=warn msg=\"...\") or json, "
         "one line an event on stderr; under systemd each line also carries the journal's priority")
      ->type_name("text|logfmt|json")
      ->capture_default_str();
}

// --log.level and --log.format, for the whole process from here on.
Status ConfigureLogging(const Flags& f) {
  LogOptions log;
  CGOV_ASSIGN_OR_RETURN(log.level, ParseLogLevel(f.log_level));
  CGOV_ASSIGN_OR_RETURN(log.format, ParseLogFormat(f.log_format));
  log.journald_prefix = StderrIsJournal();
  SetLogOptions(std::move(log));
  return Status::Ok();
}

void AddFeatureFlags(CLI::App& app, Flags& f) {
  DaemonOptions& o = f.o;
  app.add_option("--slurm-accounting", f.files.slurm_accounting,
                 "with --listen: Slurm jobs' accounts and partitions (sacct --parsable2 "
                 "--format=JobID,User,Account,Partition, or scontrol show job) as the identity "
                 "series' slurm_account and slurm_partition labels; re-read on SIGHUP");
  app.add_option("--budgets", f.files.budgets,
                 "a budgets file (TOML, docs/budgets.md): each budget's spend on this host in its "
                 "current period, for --notify's budget rules and, with --listen, served as "
                 "cgov_budget_*; re-read on SIGHUP");
  app.add_option(
      "--notify", f.files.notify,
      "a notifications file (TOML, docs/notifications.md): rules (idle-held process, idle GPU, low "
      "utilization, memory nearly full, Xid, budget thresholds, policy steps) and the webhooks, "
      "Slack or Teams channels, e-mail addresses or users' terminals their notices go to");
  app.add_option("--notify-state", o.notify_state,
                 "with --notify: where undelivered notices and open incidents are kept across "
                 "restarts (default: the --db path with \".notify\" appended)");
  app.add_option("--policy", f.files.policy,
                 "a policy file (TOML, docs/policy.md): stop processes that have held idle GPUs "
                 "too long (SIGTERM, then SIGKILL after a grace), for the users and groups it "
                 "names; every action is kept in the history database");
  app.add_flag(
      "--policy-dry-run", o.policy_dry_run,
      "with --policy: decide and record what it would do (action would_stop), signal nothing");
  app.add_option("--price-per-gpu-hour", f.files.price_text,
                 "USD per GPU-hour for the cost counters (overrides the catalog)");
  app.add_option("--instance-type", o.price.instance_type, "price GPUs as this instance type");
  app.add_option("--price-catalog", o.catalog_path,
                 "your own price catalog (the format of data/prices.json)");
  app.add_flag("--spot", o.price.spot, "price at the catalog's spot rate");
  app.add_option("--detect-instance", f.detect_instance,
                 "ask the cloud's metadata service at start for the instance type (priced through "
                 "the catalog) and id, where --instance-type and --instance-id do not give them: "
                 "aws (IMDSv2), gcp, azure, or auto (each in turn); opt-in, 2 s at most")
      ->expected(0, 1)
      ->default_str("auto")
      ->type_name("auto|aws|gcp|azure");
  app.add_option("--metadata-endpoint", o.metadata_endpoint,
                 "where --detect-instance asks: scheme, numeric host and port")
      ->capture_default_str();
}

// --interval, --retain and --commit-every, each within its bounds.
Status TypeDurations(const Flags& f, DaemonOptions* o) {
  Result<std::chrono::milliseconds> every = ParseDuration(f.interval);
  if (!every.ok()) return every.status().WithContext("cgov daemon: --interval");
  // At most an hour: the tick schedule counts in nanoseconds (110000d overflowed it into a busy
  // loop), and a sample an hour says little of a GPU anyway.
  if (*every < kDaemonMinInterval || *every > std::chrono::hours(1)) {
    return InvalidArgument(
        fmt::format("cgov daemon: --interval {}: must be between 100ms and 1h", f.interval));
  }
  o->interval = *every;
  Result<std::chrono::milliseconds> kept = ParseDuration(f.retain);
  if (!kept.ok()) return kept.status().WithContext("cgov daemon: --retain");
  if (*kept < std::chrono::hours(1) || *kept > std::chrono::hours(24 * 36500)) {
    return InvalidArgument(
        "cgov daemon: --retain must be between 1h (raw samples are rolled up hourly) and 36500d");
  }
  o->retain = *kept;
  Result<std::chrono::milliseconds> commit = ParseDuration(f.commit_every);
  if (!commit.ok()) return commit.status().WithContext("cgov daemon: --commit-every");
  if (*commit > std::chrono::minutes(10)) {
    return InvalidArgument(
        fmt::format("cgov daemon: --commit-every {}: must be between 0s and 10m", f.commit_every));
  }
  o->commit_every = *commit;
  return Status::Ok();
}

// --kubernetes and --pod-resources with the flags that go with them.
Status TypeKubernetes(const CLI::App& app, Flags& f, DaemonOptions* o) {
  const bool kube_flags = app.count("--node-name") + app.count("--kube-api") +
                              app.count("--kube-token-file") + app.count("--kube-ca-file") >
                          0;
  if (kube_flags && !f.kubernetes) {
    return InvalidArgument(
        "cgov daemon: --node-name, --kube-api, --kube-token-file and --kube-ca-file go with "
        "--kubernetes");
  }
  if (f.kubernetes) o->kube = f.kube;
  const bool socket = app.count("--pod-resources-socket") > 0;
  if ((f.pod_resources || socket) && !f.kubernetes) {
    return InvalidArgument(
        "cgov daemon: --pod-resources and --pod-resources-socket go with --kubernetes (the kubelet "
        "names pods; their labels come from the API server)");
  }
  if (socket && !f.pod_resources) {
    return InvalidArgument("cgov daemon: --pod-resources-socket goes with --pod-resources");
  }
  if (f.pod_resources) o->pod_resources = f.pod_resources_options;
  return Status::Ok();
}

// --listen and the flags that need it; the files they name are read later.
Status TypeListen(const CLI::App& app, const Flags& f, DaemonOptions* o) {
  if (app.count("--listen") == 0) {
    const DaemonFiles& w = f.files;
    if (!w.basic_auth.empty() || !w.tls_cert.empty() || !w.tls_key.empty() ||
        !w.web_config.empty() || app.count("--metrics-names") > 0 || o->process_series) {
      return InvalidArgument(
          "cgov daemon: --basic-auth-file, --web-config, --tls-cert, --tls-key, --metrics-names "
          "and --metrics-processes need --listen");
    }
    return Status::Ok();
  }
  HttpServerOptions http;
  CGOV_ASSIGN_OR_RETURN(http.address,
                        ParseListenAddress(f.listen.empty() ? kDefaultListen : f.listen));
  // Probes send no credentials; these say no secret.
  http.open_paths = {"/health", "/healthz", "/livez"};
  o->http = std::move(http);
  o->dcgm_names = f.metrics_names == "dcgm";
  return Status::Ok();
}

// Flags that go with another.
Status CheckPairs(const Flags& f, const DaemonOptions& o) {
  const DaemonFiles& w = f.files;
  if (!w.budgets.empty() && !o.http && w.notify.empty()) {
    return InvalidArgument(
        "cgov daemon: --budgets does something with --listen (cgov_budget_* on /metrics) or "
        "--notify (budget rules); give one of them (a report reads budgets from the database with "
        "`cgov report --budgets`)");
  }
  if (!w.slurm_accounting.empty() && !o.http) {
    return InvalidArgument(
        "cgov daemon: --slurm-accounting labels /metrics: it goes with --listen (a report reads "
        "accounts with `cgov report --slurm-accounting`)");
  }
  if (o.policy_dry_run && w.policy.empty()) {
    return InvalidArgument("cgov daemon: --policy-dry-run goes with --policy");
  }
  if (!o.notify_state.empty() && w.notify.empty()) {
    return InvalidArgument("cgov daemon: --notify-state goes with --notify");
  }
  return Status::Ok();
}

// Every flag from the environment too, as dcgm-exporter's DCGM_EXPORTER_* are: CGOV_ and the
// first long name in capitals, '-' and '.' as '_' (--listen: CGOV_LISTEN; a flag: CGOV_SPOT=true).
// The command line wins over the environment; --help names each variable.
void NameEnvironmentVariables(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_lnames().empty() || option->get_lnames().front() == "help") continue;
    std::string name = "CGOV_";
    for (char c : option->get_lnames().front()) {
      name += c == '-' || c == '.' ? '_'
                                   : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    option->envname(name);
  }
}

Result<DaemonOptions> ParseDaemonOptions(int argc, char** argv, int* help_exit) {
  Flags f;
  if (const char* node = std::getenv("NODE_NAME")) f.kube.node_name = node;
  CLI::App app{
      "Record every GPU and GPU process of this host into a SQLite history until SIGINT/SIGTERM "
      "(SIGHUP reloads the price catalog and reopens the database); with --listen, serve "
      "Prometheus /metrics too.\nReports: cgov report --db PATH (safe while the daemon writes), "
      "cgov report --prometheus URL (the fleet).",
      "cgov daemon"};
  AddRecordingFlags(app, f);
  AddListenFlags(app, f);
  AddKubernetesFlags(app, f);
  AddFeatureFlags(app, f);
  AddLogFlags(app, f);
  NameEnvironmentVariables(app);
  app.footer(
      "Each flag may be set in the environment instead (CGOV_DB, CGOV_LISTEN, "
      "CGOV_KUBERNETES=true, ...; the unit's /etc/default/cgov): the command line wins.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    *help_exit = UsageExit(app, e);
    return InvalidArgument("");
  }
  DaemonOptions o = std::move(f.o);
  CGOV_RETURN_IF_ERROR(ConfigureLogging(f).WithContext("cgov daemon"));
  CGOV_RETURN_IF_ERROR(TypeDurations(f, &o));
  CGOV_RETURN_IF_ERROR(TypeKubernetes(app, f, &o));
  CGOV_RETURN_IF_ERROR(TypeListen(app, f, &o));
  CGOV_RETURN_IF_ERROR(CheckPairs(f, o));
  if (app.count("--detect-instance") > 0) {
    CGOV_ASSIGN_OR_RETURN(o.detect_instance, ParseCloudProvider(f.detect_instance));
  }
  if (o.db.empty()) {
    o.db = DefaultHistoryDb();
    const std::string dir = std::filesystem::path(o.db).parent_path().string();
    if (Status made = CreateStateDirectory(dir); !made.ok()) {
      return made.WithContext("cgov daemon: the default --db");
    }
  }
  CGOV_RETURN_IF_ERROR(LoadDaemonFiles(f.files, &o));
  return o;
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
  sigaddset(&stop, SIGHUP);  // reload, not death (DaemonCore::Reload)
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  // A file-size limit (ulimit -f) reached is a failed write, as a full disk is, not death: the
  // daemon counts the tick, says so, and writes again when it can.
  signal(SIGXFSZ, SIG_IGN);
  if (Status s = cgov::RunDaemon(std::move(options).value(), stop); !s.ok()) {
    LogError("{}", s.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace cgov::cli
