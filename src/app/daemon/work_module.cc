// --listen: the work jobs report. A GPU process whose environment names a progress file
// (CGOV_PROGRESS_FILE, which `cgov run` sets; docs/analysis.md, "The progress file") is read each
// tick: what its last line says the job has done since the daemon first saw the process on a GPU
// is credited to its identity (cgov_identity_work_total{unit}), beside its cost, so a dashboard
// can price a sample or a token (docs/metrics.md, "Work").
//
// The path is the job's to choose, and the daemon may be root: it is read as the process sees
// it (through /proc/PID/root), never through a symlink, never blocking, only a regular file that
// the process's owner owns, and only its last 4 KiB.
#include <set>

#include <fmt/format.h>

#include "app/daemon/daemon_modules.h"
#include "app/run/run_analysis.h"
#include "os/log.h"
#include "policy/policy_process.h"

namespace cgov {
namespace {

constexpr size_t kWorkTailBytes = 4096;

class WorkModule : public DaemonModule {
 public:
  explicit WorkModule(DaemonContext* d) : d_(*d) {}
  std::string_view name() const override { return "work"; }
  Status AfterWrite(DaemonTick* tick) override;

 private:
  // What was counted of a process's file so far.
  struct Counted {
    std::optional<double> last;  // the work its file said at the last reading
    std::string unit;
    bool warned = false;
  };
  // The file's work now: 0 before the job wrote one; nullopt when it cannot be counted.
  std::optional<std::pair<double, std::string>> Read(
      uint32_t pid, const ProcessAttributor::ProgressFile& file, Counted* c);

  DaemonContext& d_;
  std::map<uint32_t, Counted> pids_;
};

std::optional<std::pair<double, std::string>> WorkModule::Read(
    uint32_t pid, const ProcessAttributor::ProgressFile& file, Counted* c) {
  const std::string full =
      fmt::format("{}/{}/root{}", ProcRootUnder(d_.options().host_root), pid, file.path);
  std::string text, name;
  Status read = ReadProgressTail(full, kWorkTailBytes, file.owner, &text, &name);
  if (read.code() == StatusCode::kNotFound) return std::make_pair(0.0, c->unit);
  Result<std::optional<std::pair<double, std::string>>> work =
      read.ok() ? ParseProgress(text, file.path)
                : Result<std::optional<std::pair<double, std::string>>>(read);
  if (!work.ok()) {
    if (!c->warned) {
      LogWarning("pid {}: its work is not counted: {}", pid, work.status().message());
      c->warned = true;
    }
    return std::nullopt;
  }
  if (!*work) return std::make_pair(0.0, c->unit);
  std::pair<double, std::string> out = **work;
  if (out.second.empty()) out.second = "samples";  // cgov run's default --unit
  return out;
}

Status WorkModule::AfterWrite(DaemonTick* tick) {
  if (!tick->built || d_.metrics == nullptr) return Status::Ok();
  // A pid whose process exited may name another now: watched afresh.
  for (uint32_t pid : d_.attributor()->exited()) pids_.erase(pid);
  std::set<uint32_t> seen;
  for (const StoredProcess& sp : tick->stored.processes) {
    if (!seen.insert(sp.pid).second) continue;
    // The file its environment names, read by the attributor with the process's identity.
    const std::optional<ProcessAttributor::ProgressFile> file =
        d_.attributor()->ProgressFileOf(sp.pid);
    if (!file) continue;
    Counted& c = pids_[sp.pid];
    std::optional<std::pair<double, std::string>> now = Read(sp.pid, *file, &c);
    if (!now) continue;
    const auto& [work, unit] = *now;
    // The first reading is where counting starts (work before the daemon saw the job on a GPU
    // is not counted, as its GPU time was not); a new unit or a smaller count (the file was
    // started again) starts again from there.
    if (c.last && unit == c.unit && work > *c.last) {
      d_.metrics->CreditWork(d_.IdentityOf(sp.identity_id), unit, work - *c.last, tick->now_ms);
    }
    c.last = work;
    c.unit = unit;
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<DaemonModule> NewWorkModule(DaemonContext* context) {
  return std::make_unique<WorkModule>(context);
}

}  // namespace cgov
