// The daemon's core: opens the history and the driver, samples every interval, writes each tick
// and hands it to the modules (daemon_module.h) in the order they were added; reopens the
// history after a failure or on SIGHUP; prunes it. Everything optional is a module.
#ifndef CGOV_APP_DAEMON_DAEMON_CORE_H_
#define CGOV_APP_DAEMON_DAEMON_CORE_H_

#include <signal.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/daemon/daemon_module.h"
#include "telemetry/host_reader.h"

namespace cgov {

class DaemonCore {
 public:
  // `env` (the clocks, the host's files under --host-root, HTTP, the log) outlives the core.
  DaemonCore(DaemonOptions options, Env* env);
  ~DaemonCore();
  DaemonCore(const DaemonCore&) = delete;
  DaemonCore& operator=(const DaemonCore&) = delete;

  DaemonContext& context() { return ctx_; }
  // Before Start(); modules are called in the order added.
  void Add(std::unique_ptr<DaemonModule> module);

  // The history (a wrong --db fails first), the modules' sources, the driver (none: host
  // samples only), the run, then the modules. The error names what failed.
  Status Start();
  // One sample, written and handed to the modules. Never fails: a tick that cannot be written
  // is counted and said, and the history reopened at the next.
  void Tick();
  // SIGHUP: the price catalog re-read, the history reopened, the GPUs priced again, then each
  // module's Reload.
  void Reload();
  // The modules stopped, the history committed, the final line said; the commit's error.
  Status Stop();
  // Tick() every interval until one of `stop`'s signals other than SIGHUP (which reloads).
  // REQUIRES: those signals are blocked in every thread.
  void RunUntilSignal(const sigset_t& stop);

  int64_t ticks_written() const { return ticks_; }
  int64_t ticks_failed() const { return failed_; }
  // Each module's failed AfterWrite calls since start, by name.
  const std::map<std::string, int64_t>& module_failures() const {
    return ctx_.self().module_failures;
  }

 private:
  Status OpenWriter();
  Status StartRun();
  Status RecordPrices(int64_t since_ms);
  void PriceGpus();
  // Discards the writer after a failure; the ticks its rolled-back batch lost become failures.
  void DropWriter();
  void TakeTick();
  // The core's totals into the context's DaemonSelf, handed to every module.
  void PublishSelf();
  void TickFailed(int64_t now_ms, const std::string& why);
  // The history file removed or replaced under the daemon: said, and the writer dropped.
  void CheckFile(int64_t now_ms);
  bool EnsureWriter(int64_t now_ms);
  void Sample();
  void AfterWrite();
  void Written(int64_t now_ms);
  // cgov_collector_duration_seconds: this tick's time in each collector and module.
  void PublishDurations();
  template <typename F>
  void Timed(int64_t* ns, F&& work) {
    const int64_t start = ctx_.clock().MonotonicNs();
    work();
    *ns += ctx_.clock().MonotonicNs() - start;
  }

  DaemonContext ctx_;
  HostReader host_;
  std::vector<std::unique_ptr<DaemonModule>> modules_;
  std::vector<std::optional<int64_t>> periodic_ms_;  // by module: its last Periodic()
  DaemonTick tick_;
  // This tick's time (monotonic ns) in the driver's fast fields, the process lists, the host's
  // files, the history writer, and each module (by position).
  int64_t nvml_ns_ = 0, processes_ns_ = 0, procfs_ns_ = 0, history_db_ns_ = 0;
  std::vector<int64_t> module_ns_;
  int64_t ticks_ = 0, failed_ = 0, last_hours_ = 0;
  int64_t failed_in_a_row_ = 0, failing_since_ms_ = 0;  // for the message when writing recovers
  std::string db_problem_;  // the history file was removed or replaced: said until restart
};

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_CORE_H_
