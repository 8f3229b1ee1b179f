#include "app/daemon/daemon_core.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

#include <fmt/format.h>

#include "app/history/stored_tick.h"
#include "app/price_flags.h"
#include "core/duration.h"
#include "core/text.h"
#include "core/time_format.h"
#include "os/log.h"
#include "os/process_exit_watch.h"
#include "os/signal_wait.h"
#include "policy/policy_process.h"

namespace cgov {
namespace {

// How often /proc/meminfo is read: the host memory it gives (mem_used_pct_x10) is kept for the
// record, and no report reads it per tick; /proc/stat (CPU, iowait) is read every tick, since the
// findings set host CPU and iowait against each tick's GPU utilization.
constexpr std::chrono::milliseconds kHostMemoryPeriod{60'000};

}  // namespace

DaemonCore::DaemonCore(DaemonOptions options, Env* env)
    : ctx_(std::move(options), env), host_(&ctx_.files(), &ctx_.clock(), kHostCpu | kHostMemory) {
  host_.set_memory_period_ns(kHostMemoryPeriod.count() * 1'000'000);
}

// The history first: its credit sink calls the modules.
DaemonCore::~DaemonCore() { ctx_.writer_.reset(); }

void DaemonCore::Add(std::unique_ptr<DaemonModule> module) {
  ctx_.self_.module_failures[std::string(module->name())] = 0;
  modules_.push_back(std::move(module));
  periodic_ms_.emplace_back();
}

Status DaemonCore::OpenWriter() {
  const DaemonOptions& o = ctx_.options();
  CGOV_ASSIGN_OR_RETURN(ctx_.writer_, HistoryWriter::Open(o.db));
  // A replaced file numbers its identities and commands afresh: what the ids named is read again.
  ctx_.identities_.clear();
  ctx_.commands_.clear();
  ++ctx_.history_opens_;
  ctx_.writer_->set_commit_policy({.max_ticks = 0, .max_age_ms = o.commit_every.count()});
  ctx_.attributor_ = std::make_unique<ProcessAttributor>(&ctx_.files(), &ctx_.writer_->store());
  ctx_.attributor_->SetPods(ctx_.pods);
  // Docker and Podman containers by name (their state read under --host-root; known afresh
  // after a SIGHUP, which reopens the writer).
  ctx_.local_containers_ = std::make_unique<LocalContainers>(&ctx_.files(), o.kube_labels);
  ctx_.attributor_->SetLocalContainers(ctx_.local_containers_.get());
  // PID reuse is told by pidfds, which name this PID namespace's processes: only when the /proc
  // read is this namespace's (the host's /proc under --host-root with hostPID, as the shipped
  // DaemonSet runs, is; another namespace's pids could name other processes here). Issue 57, 6:
  // under --host-root the check was off, and a reused pid billed its old owner.
  if (o.host_root == "/" || o.host_root.empty() ||
      ProcIsThisPidNamespace(ProcRootUnder(o.host_root))) {
    ctx_.attributor_->SetExitWatch(NewPidfdExitWatch());
  }
  // Only ticks appended from now on reach the modules: what a writer's replay on open
  // re-credits was counted already (or belongs to an earlier process, whose counters
  // Prometheus saw reset).
  if (std::any_of(modules_.begin(), modules_.end(),
                  [](const auto& m) { return m->wants_credits(); })) {
    ctx_.writer_->set_credit_sink([this](const TickCredit& credit) {
      for (const auto& m : modules_) m->OnCredit(credit);
    });
  }
  return Status::Ok();
}

// Priced once at start and after SIGHUP re-read the catalog, not every tick.
void DaemonCore::PriceGpus() {
  ctx_.gpu_usd_per_hour_.clear();
  ctx_.gpu_price_by_id_.clear();
  const std::vector<GpuInfo>& infos = ctx_.gpus();
  for (size_t i = 0; i < infos.size(); ++i) {
    Result<ResolvedPrice> price = ctx_.PriceOf(infos[i]);
    const bool priced = price.ok() && price->per_gpu_hour;
    ctx_.gpu_usd_per_hour_.push_back(
        priced ? static_cast<double>(*price->per_gpu_hour) / kMicroPerUsd : 0);
    if (priced && i < ctx_.gpu_ids_.size()) {
      ctx_.gpu_price_by_id_[ctx_.gpu_ids_[i]] = *price->per_gpu_hour;
    }
  }
}

// The price of each GPU, recorded with the data: a report on this database prices it as
// /metrics does, whatever flags the report is run with (docs/history-db.md).
Status DaemonCore::RecordPrices(int64_t since_ms) {
  const std::vector<GpuInfo>& infos = ctx_.gpus();
  for (size_t i = 0; i < infos.size() && i < ctx_.gpu_ids_.size(); ++i) {
    CGOV_ASSIGN_OR_RETURN(ResolvedPrice price, ctx_.PriceOf(infos[i]));
    CGOV_RETURN_IF_ERROR(
        ctx_.writer_->store().PutPrice(ctx_.gpu_ids_[i], since_ms, RecordOfPrice(price)));
  }
  return Status::Ok();
}

Status DaemonCore::StartRun() {
  const DaemonOptions& o = ctx_.options();
  HistoryStore& store = ctx_.writer_->store();
  CGOV_ASSIGN_OR_RETURN(ctx_.gpu_ids_, RegisterGpus(ctx_.gpus(), &store));
  PriceGpus();
  if (ctx_.hostname_.empty()) {
    ctx_.hostname_ =
        o.hostname.empty() ? ReadHostInfo(ctx_.files()).hostname : SafeText(o.hostname);
  }
  last_hours_ = ctx_.writer_->hours_written();
  // Reopened after a failed write: the same run goes on (one run row per daemon process), unless
  // the file is a different one now.
  if (ctx_.run_.id != 0) {
    CGOV_ASSIGN_OR_RETURN(auto runs, store.Runs());
    if (auto it = runs.find(ctx_.run_.id); it != runs.end() &&
                                           it->second.source == ctx_.run_.source &&
                                           it->second.started_ms == ctx_.run_.started_ms) {
      return Status::Ok();
    }
  }
  CGOV_ASSIGN_OR_RETURN(ctx_.run_, ctx_.writer_->BeginRun("daemon", ctx_.NowMs(),
                                                          o.interval.count(), ctx_.hostname_));
  // Said at start, kept with the run (every report over its window says it) and in /health.
  std::string status;
  ctx_.environ_access_ = ctx_.files().Read("/proc/self/status", &status).ok()
                             ? EnvironAccessOf(status)
                             : EnvironAccess{};
  if (!ctx_.environ_access_.others_readable) {
    LogWarning(ctx_.env(), "{}", ctx_.environ_access_.warning);
    CGOV_RETURN_IF_ERROR(store.SetMeta(EnvironMetaKey(ctx_.run_.id), ctx_.environ_access_.warning));
  }
  if (!o.instance_id.empty()) CGOV_RETURN_IF_ERROR(store.SetMeta("instance_id", o.instance_id));
  return RecordPrices(ctx_.run_.started_ms);
}

Status DaemonCore::Start() {
  const DaemonOptions& o = ctx_.options();
  // The database first: a wrong --db fails at once, before the driver is loaded.
  CGOV_RETURN_IF_ERROR(OpenWriter());
  for (const auto& m : modules_) CGOV_RETURN_IF_ERROR(m->Open());
  if (!ctx_.writer_->store().fully_checked()) {
    LogWarning(
        ctx_.env(),
        "{}: SQLite's quick_check did not finish within {} s; the database was only partly checked "
        "before writing (`sqlite3 {} 'PRAGMA quick_check'` checks it all)",
        o.db, HistoryStore::kWriterCheckBudget.count() / 1000, o.db);
  }
  ctx_.OpenDriver();
  CGOV_RETURN_IF_ERROR(StartRun());
  for (const auto& m : modules_) CGOV_RETURN_IF_ERROR(m->Start());
  PublishSelf();
  LogInfo(ctx_.env(),
          "recording {} GPU(s) every {} into {} (pid {}); stop with SIGINT or SIGTERM, reload with "
          "SIGHUP",
          ctx_.gpu_ids_.size(), FormatDuration(o.interval), o.db, getpid());
  return Status::Ok();
}

// A tick that could not be written: counted as /metrics counts it, said at most once a minute.
void DaemonCore::TickFailed(int64_t now_ms, const std::string& why) {
  ++failed_;
  ctx_.self_.history_db_ok = false;
  if (failing_since_ms_ == 0) failing_since_ms_ = now_ms;
  ++failed_in_a_row_;
  ctx_.ReportFailure(now_ms, why);
}

void DaemonCore::DropWriter() {
  if (!ctx_.writer_) return;
  const int64_t lost = ctx_.writer_->abandoned_ticks();
  ticks_ -= lost;
  failed_ += lost;
  ctx_.writer_.reset();
}

// Checked as each batch of ticks begins: a path lookup every tick cost more than the rest of
// the file work, and a batch written to a replaced file is lost whichever tick finds it.
void DaemonCore::CheckFile(int64_t now_ms) {
  if (!ctx_.writer_ || ctx_.writer_->uncommitted_ticks() != 0) return;
  // Someone removed or replaced the file (cgov demo --force, rm, a restore): what was written
  // since it was opened went with the old file. Said until the daemon restarts; from now on
  // the ticks go to whatever the path names (a new database if nothing).
  const std::string change = ctx_.writer_->store().FileChange();
  if (change.empty()) return;
  const std::string& db = ctx_.options().db;
  const std::string at = FormatRfc3339Utc(now_ms * 1'000'000);
  db_problem_ = fmt::format(
      "the history database {} {} at {} while the daemon wrote to it; the ticks before went with "
      "the old file. Writing to {} again; restart the daemon once this is understood",
      db, change, at, db);
  LogWarning(ctx_.env(), "{}", db_problem_);
  // /health answers without credentials: it names no path.
  ctx_.self_.history_db_problem =
      fmt::format("the history database {} at {}; see the daemon's log", change, at);
  DropWriter();
}

// A writer to append to, reopened if a failure dropped it; false (the tick counted as failed)
// when it cannot be.
bool DaemonCore::EnsureWriter(int64_t now_ms) {
  if (ctx_.writer_) return true;
  Status reopened = OpenWriter();
  if (reopened.ok()) reopened = StartRun();
  if (reopened.ok()) return true;
  DropWriter();
  TickFailed(now_ms, reopened.message());
  return false;
}

void DaemonCore::Sample() {
  tick_.Clear();
  tick_.now_ms = ctx_.NowMs();
  Sampler sampler(ctx_.nvml(), nullptr, &host_, &ctx_.clock());
  sampler.Tick(&tick_.sample);
  nvml_ns_ = sampler.last_gpu_ns();
  procfs_ns_ = sampler.last_host_ns();
  tick_.host_ok = host_.errors().empty();
  // The daemon has no job to keep out of the way of: process lists are read on the tick.
  processes_ns_ = 0;
  if (ctx_.nvml_) Timed(&processes_ns_, [&] { ctx_.nvml_->ReadSlow(&tick_.sample.gpu_slow); });
}

// The names are listed once (the modules are all added before the first tick); each tick then
// writes its figures in place, instead of building the list and its strings anew.
void DaemonCore::PublishDurations() {
  const std::pair<const char*, int64_t> core[] = {{"nvml", nvml_ns_},
                                                  {"gpu_processes", processes_ns_},
                                                  {"procfs", procfs_ns_},
                                                  {"history_db", history_db_ns_}};
  std::vector<std::pair<std::string, double>>& seconds = ctx_.self_.collector_seconds;
  if (seconds.size() != std::size(core) + modules_.size()) {
    seconds.clear();
    for (const auto& [name, ns] : core) seconds.emplace_back(name, 0.0);
    for (const auto& m : modules_) seconds.emplace_back(std::string(m->name()), 0.0);
  }
  size_t i = 0;
  for (const auto& [name, ns] : core) seconds[i++].second = ns / 1e9;
  for (int64_t ns : module_ns_) seconds[i++].second = ns / 1e9;
}

void DaemonCore::Tick() {
  TakeTick();
  PublishSelf();
}

void DaemonCore::PublishSelf() {
  ctx_.self_.ticks = ticks_ + failed_;
  ctx_.self_.failed_ticks = failed_;
  for (const auto& m : modules_) m->OnDaemonSelf(ctx_.self_);
}

void DaemonCore::TakeTick() {
  const int64_t now_ms = ctx_.NowMs();
  module_ns_.assign(modules_.size(), 0);
  for (size_t i = 0; i < modules_.size(); ++i) {
    const int64_t period_ms = modules_[i]->period().count();
    std::optional<int64_t>& last = periodic_ms_[i];
    if (period_ms <= 0 || (last && now_ms - *last < period_ms)) continue;
    last = now_ms;
    Timed(&module_ns_[i], [&] { modules_[i]->Periodic(now_ms); });
  }
  CheckFile(now_ms);
  if (!EnsureWriter(now_ms)) return;
  Sample();
  Status status = BuildStoredTick(tick_.sample, ctx_.gpu_ids_, ctx_.attributor(), &tick_.stored);
  for (size_t i = 0; status.ok() && i < modules_.size(); ++i) {
    Timed(&module_ns_[i], [&] { status = modules_[i]->BeforeWrite(&tick_); });
  }
  tick_.built = status.ok();
  history_db_ns_ = 0;
  if (tick_.built) {
    Timed(&history_db_ns_, [&] {
      status =
          ctx_.writer_->Append(tick_.sample.wall_ns / 1'000'000, ctx_.run_, tick_.stored).status();
    });
  }
  tick_.written = status.ok();
  ctx_.self_.history_db_ok = tick_.written;
  if (ctx_.nvml_) tick_.xids = ctx_.nvml_->DrainXidEvents();
  AfterWrite();
  PublishDurations();
  if (!status.ok()) {
    TickFailed(now_ms, status.message());
    DropWriter();  // reopen: replays what was committed, so the rollups stay exact
    return;
  }
  Written(now_ms);
}

// Each module in turn; one that fails is counted and said by name, and the others go on.
void DaemonCore::AfterWrite() {
  for (size_t i = 0; i < modules_.size(); ++i) {
    const auto& m = modules_[i];
    Status s;
    Timed(&module_ns_[i], [&] { s = m->AfterWrite(&tick_); });
    if (s.ok()) continue;
    const std::string name(m->name());
    ++ctx_.self_.module_failures[name];
    ctx_.ReportFailure(tick_.now_ms, s.WithContext(name).message());
  }
}

void DaemonCore::Written(int64_t now_ms) {
  ++ticks_;
  if (failed_in_a_row_ > 0) {
    LogInfo(ctx_.env(), "{}: writing to {} again, after {} tick(s) not written since {}",
            FormatRfc3339Utc(now_ms * 1'000'000), ctx_.options().db, failed_in_a_row_,
            FormatRfc3339Utc(failing_since_ms_ * 1'000'000));
    failed_in_a_row_ = 0;
    failing_since_ms_ = 0;
  }
  if (ctx_.writer_->hours_written() != last_hours_) {
    last_hours_ = ctx_.writer_->hours_written();
    if (auto pruned = ctx_.writer_->Prune(now_ms - ctx_.options().retain.count()); !pruned.ok()) {
      ctx_.ReportFailure(now_ms, pruned.status().message());
    }
  }
}

// SIGHUP, as daemons take it: re-read the price catalog (--price-catalog), reopen the database
// (moved by a restore or a rotation), and price the GPUs again from now on, in /metrics and in
// the database. A catalog that no longer parses is reported and the one in use kept.
void DaemonCore::Reload() {
  DaemonOptions& o = ctx_.options();
  std::string what = "database reopened";
  if (!o.catalog_path.empty()) {
    PriceCatalog catalog;
    PriceOptions price = o.price;
    if (Status s = ApplyPriceFlags(o.catalog_path, "", &price, &catalog); !s.ok()) {
      LogWarning(ctx_.env(), "SIGHUP: keeping the price catalog in use: {}", s.message());
    } else {
      o.catalog = std::move(catalog);
      what += ", price catalog " + o.catalog_path + " re-read";
    }
  }
  if (ctx_.writer_) {
    if (Status s = ctx_.writer_->Commit(); !s.ok()) {
      LogError(ctx_.env(), "{}", s.message());
    }
    DropWriter();
  }
  Status reopened = OpenWriter();
  if (reopened.ok()) reopened = StartRun();
  if (!reopened.ok()) {
    DropWriter();  // the next tick tries again, and counts a failure if it cannot
    LogError(ctx_.env(), "SIGHUP: {}", reopened.message());
  } else {
    const int64_t now_ms = ctx_.NowMs();
    const std::vector<GpuInfo>& infos = ctx_.gpus();
    for (size_t i = 0; i < infos.size() && i < ctx_.gpu_ids_.size(); ++i) {
      Result<ResolvedPrice> price = ctx_.PriceOf(infos[i]);
      if (!price.ok()) continue;
      Status s = ctx_.writer_->store().PutPrice(ctx_.gpu_ids_[i], now_ms, RecordOfPrice(*price));
      if (!s.ok()) LogWarning(ctx_.env(), "SIGHUP: {}", s.message());
    }
  }
  for (const auto& m : modules_) m->Reload(&what);
  LogInfo(ctx_.env(), "SIGHUP: {}", what);
}

Status DaemonCore::Stop() {
  for (const auto& m : modules_) m->Stop();
  Status committed = ctx_.writer_ ? ctx_.writer_->Commit() : Status::Ok();
  DropWriter();
  // The same counts as cgov_ticks_total and cgov_tick_failures_total.
  LogInfo(ctx_.env(), "stopped after {} tick(s){}", ticks_ + failed_,
          failed_ > 0 ? fmt::format(", {} not written", failed_) : "");
  if (!db_problem_.empty()) LogWarning(ctx_.env(), "{}", db_problem_);
  if (!committed.ok()) LogError(ctx_.env(), "{}", committed.message());
  return committed;
}

void DaemonCore::RunUntilSignal(const sigset_t& stop) {
  Clock& clock = ctx_.clock();
  const int64_t interval_ns = ctx_.options().interval.count() * 1'000'000;
  int64_t next = clock.MonotonicNs();
  for (;;) {
    Tick();
    // A late tick is taken late, never twice to catch up.
    next = std::max(next + interval_ns, clock.MonotonicNs());
    int sig = 0;
    while ((sig = WaitForSignal(stop, next, clock)) == SIGHUP) Reload();
    if (sig != 0) return;
  }
}

}  // namespace cgov
