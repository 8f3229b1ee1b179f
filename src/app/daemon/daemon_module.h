// A daemon feature as a module (node_exporter's collectors, redis's cron jobs): it owns its
// flags, its configuration and its state; it starts, takes each tick, reloads on SIGHUP and
// stops, and fails alone. The core (daemon_core.h) samples, writes the history and calls the
// modules in the order they were added; a module never needs a member, branch or option in the
// core, in DaemonOptions or in src/cli/daemon.cc (DaemonModuleKind below).
//
// Threading: every call comes from the daemon's one tick thread. A module with threads of its
// own (the metrics server, the notifier, the Kubernetes watch) joins them in Stop().
#ifndef CGOV_APP_DAEMON_DAEMON_MODULE_H_
#define CGOV_APP_DAEMON_DAEMON_MODULE_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/budget_tracker.h"
#include "analysis/history_aggregator.h"
#include "analysis/phases.h"
#include "analysis/pricing.h"
#include "app/daemon/daemon_options.h"
#include "app/history/history_writer.h"
#include "export/daemon_metrics.h"
#include "identity/kube_pods.h"
#include "identity/process_attribution.h"
#include "os/env.h"
#include "telemetry/environ_access.h"
#include "telemetry/nvml_source.h"
#include "telemetry/sampler.h"

namespace CLI {
class App;
}  // namespace CLI

namespace cgov {

// What the core and the modules share: the machine's seams, the history, this run's GPUs and
// their prices, and the services one module offers the others (the pod directory, the metrics
// registry, the budgets). Owned by the core; modules keep a pointer to it.
class DaemonContext {
 public:
  // The host's files are read under --host-root through `env`, which outlives the context.
  DaemonContext(DaemonOptions options, Env* env)
      : options_(std::move(options)),
        env_(env),
        clock_(&env->clock()),
        files_(env->NewFileReader(options_.host_root)) {}

  DaemonOptions& options() { return options_; }  // the price catalog changes on SIGHUP
  const DaemonOptions& options() const { return options_; }
  Env& env() { return *env_; }
  Clock& clock() { return *clock_; }
  FileReader& files() { return *files_; }
  int64_t NowMs() { return clock_->WallNs() / 1'000'000; }
  // The core's own state (ticks, failures, durations, the history's health), as of the last
  // tick; modules are handed it after each (DaemonModule::OnDaemonSelf).
  const DaemonSelf& self() const { return self_; }

  // The driver (null when none loaded) and its GPUs in the sampler's order.
  NvmlSource* nvml() { return nvml_.get(); }
  const std::vector<GpuInfo>& gpus() const;
  // Null between a failed write and the next tick's reopen.
  HistoryWriter* writer() { return writer_.get(); }
  ProcessAttributor* attributor() { return attributor_.get(); }
  const std::string& hostname() const { return hostname_; }
  const RunRecord& run() const { return run_; }
  // The history's id of each GPU of gpus() (same positions).
  const std::vector<uint32_t>& gpu_ids() const { return gpu_ids_; }
  // Each GPU's price as /metrics has it, USD an hour (0: unknown), and the same by GPU id.
  const std::vector<double>& gpu_usd_per_hour() const { return gpu_usd_per_hour_; }
  const std::map<uint32_t, MicroUsd>& gpu_price_by_id() const { return gpu_price_by_id_; }
  const EnvironAccess& environ_access() const { return environ_access_; }
  // Loads the driver (--nvml-lib) at start, or says why there is no GPU data.
  void OpenDriver();
  // Why no GPU is recorded ("" when some is, or --allow-no-gpus): set by OpenDriver before the
  // modules start, and never after (so the HTTP thread may read it).
  const std::string& no_gpu_problem() const { return no_gpu_problem_; }
  // The price this daemon prices `gpu` at (the one /metrics and the database carry).
  Result<ResolvedPrice> PriceOf(const GpuInfo& gpu) const;
  // The history dictionary's identity or command for an id, cached (nullptr / "": unknown);
  // the cache is emptied when the database is (re)opened, whose ids may name other records.
  const IdentityRecord* IdentityOf(uint32_t id);
  std::string CommandOf(uint32_t id);
  // How many times the history database was opened: a module remembering identity or command
  // ids forgets them when this changes (a replaced file numbers its records afresh).
  uint64_t history_opens() const { return history_opens_; }
  // A failure said at once, then at most once a minute with the count in between.
  void ReportFailure(int64_t now_ms, const std::string& message);

  // Services modules offer one another, set when the module is added (null: not configured).
  KubePodDirectory* pods = nullptr;  // the kubernetes module's
  DaemonMetrics* metrics = nullptr;  // the metrics module's registry
  // Series a module serves on /metrics (export/daemon_metrics.h's MetricsSection), added when
  // the module is made; the metrics module, if any, serves them after its own.
  std::vector<std::shared_ptr<const MetricsSection>> metrics_sections;
  std::shared_ptr<SharedBudgets> budgets;  // the budgets module's

 private:
  friend class DaemonCore;  // the one writer of the run's state

  DaemonOptions options_;
  DaemonSelf self_;
  Env* env_;
  Clock* clock_;
  std::unique_ptr<FileReader> files_;  // the sampling thread's
  std::unique_ptr<NvmlSource> nvml_;
  std::unique_ptr<HistoryWriter> writer_;
  std::unique_ptr<LocalContainers> local_containers_;  // outlives the attributor that uses it
  std::unique_ptr<ProcessAttributor> attributor_;
  std::string hostname_;
  RunRecord run_;
  std::vector<uint32_t> gpu_ids_;
  std::vector<double> gpu_usd_per_hour_;
  std::map<uint32_t, MicroUsd> gpu_price_by_id_;
  EnvironAccess environ_access_;
  std::string no_gpu_problem_;
  std::map<uint32_t, IdentityRecord> identities_;
  std::map<uint32_t, std::string> commands_;
  uint64_t history_opens_ = 0;
  int64_t failure_logged_ms_ = INT64_MIN / 2;
  int64_t failures_unsaid_ = 0;
};

// One tick as the modules see it; rebuilt in place by the core each tick.
struct DaemonTick {
  int64_t now_ms = 0;
  TickSample sample;
  bool host_ok = false;        // every host file of the sample was read
  StoredTick stored;           // the history's form of it (empty when it could not be built)
  bool built = false;          // `stored` holds this tick
  bool written = false;        // and it went into the history
  std::vector<XidEvent> xids;  // drained from the driver this tick
  std::vector<PolicyActionRecord> policy_actions;  // taken this tick (the policy module's)

  // This tick's GPUs as the analysis sees them, by position; classified on first use, once
  // for every module that asks.
  const std::vector<GpuPoint>& points();
  const std::vector<std::optional<Phase>>& phases();
  void Clear();

 private:
  void ClassifyGpus();
  bool classified_ = false;
  TickByGpu by_gpu_;
  std::vector<GpuPoint> points_;
  std::vector<std::optional<Phase>> phases_;
};

class DaemonModule {
 public:
  virtual ~DaemonModule() = default;
  // Its name in logs and in cgov_daemon_module_failures_total{module}.
  virtual std::string_view name() const = 0;
  // Once the history is open, before the driver is loaded: sources that need no GPU list (the
  // Kubernetes watch, the kubelet). An error stops the daemon before it records anything.
  virtual Status Open() { return Status::Ok(); }
  // Once the run has begun (GPUs registered and priced). An error stops the daemon.
  virtual Status Start() { return Status::Ok(); }
  // How often Periodic() runs (0: never); checked at the start of each tick.
  virtual std::chrono::milliseconds period() const { return std::chrono::milliseconds(0); }
  virtual void Periodic(int64_t /*now_ms*/) {}
  // Before the tick is written: may add to tick->stored. An error fails the tick (not written).
  virtual Status BeforeWrite(DaemonTick* /*tick*/) { return Status::Ok(); }
  // After the write was tried (tick->written says how it went); never blocks. An error is
  // counted against the module and logged; the other modules go on.
  virtual Status AfterWrite(DaemonTick* /*tick*/) { return Status::Ok(); }
  // A tick's GPU-time credited to its holders as the history writes it, to a module whose
  // wants_credits() (the writer skips the work when none does).
  virtual bool wants_credits() const { return false; }
  virtual void OnCredit(const TickCredit& /*credit*/) {}
  // SIGHUP, after the core re-read the catalog and reopened the history; appends what it
  // re-read to *what ("budgets F re-read").
  virtual void Reload(std::string* /*what*/) {}
  // Before the history's last commit, in the order the modules were added.
  virtual void Stop() {}
  // The core's own state, after Start and after every tick (written or not): what a module
  // serves of the daemon itself (the metrics module's cgov_ticks_total, ...).
  virtual void OnDaemonSelf(const DaemonSelf& /*self*/) {}
};

// A module as `cgov daemon`'s command line sees it (node_exporter's collector registration):
// its flags, under its own heading of --help; their values checked and typed, and the files
// they name read, once the command line is parsed; the module made from them. Defined beside
// its module, listed once in DaemonModuleKinds() (daemon_modules.cc); docs/architecture.md,
// "Adding a daemon module", shows a whole one.
class DaemonModuleKind {
 public:
  virtual ~DaemonModuleKind() = default;
  // Its module's name (DaemonModule::name).
  virtual std::string_view name() const = 0;
  // Adds its flags to `app`, before the parse. A kind without flags adds nothing.
  virtual void AddFlags(CLI::App* /*app*/) {}
  // After the parse, once the core's options are typed (`core`): the flags that go together
  // (FlagGiven tells which others were given), the files they name read. The error names the
  // flag, and the file and line.
  virtual Status Configure(const CLI::App& /*app*/, const DaemonOptions& /*core*/) {
    return Status::Ok();
  }
  // Whether the command line asked for the module; after Configure.
  virtual bool enabled() const = 0;
  // The module, holding what Configure read; once, when enabled. It may set the services it
  // offers the others in the context (pods, budgets, metrics_sections).
  virtual std::unique_ptr<DaemonModule> Make(DaemonContext* context) = 0;
};

// Whether `flag` ("--listen") was given, on the command line or in the environment, and for a
// flag without a value, not as false (CGOV_KUBERNETES=false); false when no kind added it.
bool FlagGiven(const CLI::App& app, const std::string& flag);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_MODULE_H_
