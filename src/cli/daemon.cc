// `cgov daemon`: the core's flags into typed options (the files they name read by
// src/app/daemon/daemon_config.h) and each module kind's into its own configuration
// (daemon_module.h), then the daemon (src/app/daemon/) until a signal.
#include "cli/daemon.h"

#include <signal.h>

#include <cctype>
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

// The core's command line as given, before it is checked and typed; each module kind holds its
// own.
struct Flags {
  DaemonOptions o;
  std::string interval = "30s", retain = "90d", commit_every = "10s";
  std::string log_level = "info", log_format = "text", detect_instance;
  std::string price_text, kube_labels;
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

// --kube-labels: the core's, as Docker and Podman containers are named with or without
// --kubernetes (whose module watches the pods).
void AddLabelFlags(CLI::App& app, Flags& f) {
  app.add_option("--kube-labels", f.kube_labels,
                 "which pod (and Docker container) labels give the project, team and user, first "
                 "present wins (default: "
                 "project=project-id,app.kubernetes.io/part-of,app.kubernetes.io/"
                 "name;team=team-id;user=user-id)");
}

void AddLogFlags(CLI::App& app, Flags& f) {
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

void AddPriceFlags(CLI::App& app, Flags& f) {
  DaemonOptions& o = f.o;
  app.add_option("--price-per-gpu-hour", f.price_text,
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

// The core's flags typed, --db's default made, and the files they name read.
Status TypeCore(const CLI::App& app, const Flags& f, DaemonOptions* o) {
  CGOV_RETURN_IF_ERROR(TypeDurations(f, o));
  if (app.count("--detect-instance") > 0) {
    CGOV_ASSIGN_OR_RETURN(o->detect_instance, ParseCloudProvider(f.detect_instance));
  }
  if (o->db.empty()) {
    o->db = DefaultHistoryDb();
    const std::string dir = std::filesystem::path(o->db).parent_path().string();
    if (Status made = CreateStateDirectory(dir); !made.ok()) {
      return made.WithContext("cgov daemon: the default --db");
    }
  }
  return LoadCoreFiles(f.price_text, f.kube_labels, o);
}

}  // namespace

Result<DaemonCommandLine> ParseDaemonCommandLine(int argc, char** argv, DaemonModuleKinds kinds,
                                                 int* help_exit) {
  Flags f;
  CLI::App app{
      "Record every GPU and GPU process of this host into a SQLite history until SIGINT/SIGTERM "
      "(SIGHUP reloads the price catalog and reopens the database); with --listen, serve "
      "Prometheus /metrics too.\nReports: cgov report --db PATH (safe while the daemon writes), "
      "cgov report --prometheus URL (the fleet).",
      "cgov daemon"};
  AddRecordingFlags(app, f);
  AddLabelFlags(app, f);
  AddPriceFlags(app, f);
  AddLogFlags(app, f);
  for (const auto& kind : kinds) kind->AddFlags(&app);
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
  CGOV_RETURN_IF_ERROR(ConfigureLogging(f).WithContext("cgov daemon"));
  DaemonCommandLine line{std::move(f.o), std::move(kinds)};
  CGOV_RETURN_IF_ERROR(TypeCore(app, f, &line.options));
  for (const auto& kind : line.modules) {
    CGOV_RETURN_IF_ERROR(kind->Configure(app, line.options));
  }
  return line;
}

int RunDaemon(int argc, char** argv) {
  int help_exit = -1;
  Result<DaemonCommandLine> line =
      ParseDaemonCommandLine(argc, argv, AllDaemonModuleKinds(), &help_exit);
  if (help_exit >= 0) return help_exit;
  if (!line.ok()) {
    fmt::print(stderr, "{}\n", line.status().message());
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
  if (Status s = cgov::RunDaemon(std::move(line->options), std::move(line->modules), stop);
      !s.ok()) {
    LogError("{}", s.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace cgov::cli
