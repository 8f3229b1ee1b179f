// --listen: the work jobs report. A GPU process whose environment names a progress file
// (CGOV_PROGRESS_FILE, which `cgov run` sets; docs/analysis.md, "The progress file") is read each
// tick: what its last line says the job has done since the daemon first saw the process on a GPU
// is credited to its identity (cgov_identity_work_total{unit}), beside its cost, so a dashboard
// can price a sample or a token (docs/metrics.md, "Work").
//
// The path is the job's to choose, and the daemon may be root: it is opened inside the
// process's root with its owner's rights (os/rooted_open.h: openat2 RESOLVE_IN_ROOT, no magic
// link, the last component never a symlink), never blocking, only a regular file that the
// process's owner owns, and only its last 4 KiB. Nothing of its content reaches the log.
//
// A file is counted once, however many processes name it (every rank of a job inherits the
// variable): by its device and inode. Work is finite and monotone: a line above 1e15 is not
// understood; a smaller count than the last is the file started again (counting goes on from
// it); what one file is credited in all never passes 1e15 (docs/analysis.md, "The progress
// file").
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "app/daemon/daemon_modules.h"
#include "app/run/run_analysis.h"
#include "core/text.h"
#include "os/log.h"
#include "os/rooted_open.h"
#include "policy/policy_process.h"

namespace cgov {
namespace {

constexpr size_t kWorkTailBytes = 4096;

// The work one file says now: 0 before the job wrote one; nullopt when its last line is not
// understood (the file is still known: counting goes on from its last good reading).
struct FileWork {
  uint64_t dev = 0;
  uint64_t ino = 0;
  std::optional<double> work;
  std::string unit;
};

class WorkModule : public DaemonModule {
 public:
  explicit WorkModule(DaemonContext* d) : d_(*d) {}
  std::string_view name() const override { return "work"; }
  Status AfterWrite(DaemonTick* tick) override;

 private:
  // What was counted of one file so far.
  struct Counted {
    double last = 0;  // the work it said at the last reading
    std::string unit;
    double credited = 0;  // in all, never above kMaxProgressWork
    uint64_t seen = 0;    // the tick it was last read in
  };
  // The file a process names, read; nullopt when there is none yet or it cannot be opened.
  std::optional<FileWork> Read(uint32_t pid, const ProcessAttributor::ProgressFile& file);
  void Count(const FileWork& now, uint32_t identity_id, int64_t now_ms);

  DaemonContext& d_;
  std::map<std::pair<uint64_t, uint64_t>, Counted> files_;  // by (device, inode)
  std::set<uint32_t> warned_;                               // pids whose file was said not to count
  uint64_t tick_ = 0;
};

std::optional<FileWork> WorkModule::Read(uint32_t pid,
                                         const ProcessAttributor::ProgressFile& file) {
  const std::string root = fmt::format("{}/{}/root", ProcRootUnder(d_.options().host_root), pid);
  Result<OpenedFile> opened = OpenInRoot(root, file.path, FileOwner{file.owner, file.group});
  if (!opened.ok() && opened.status().code() == StatusCode::kNotFound) return std::nullopt;
  ProgressTail tail;
  Status read = opened.ok() ? ReadOpenProgressTail(opened->fd(), SafeText(file.path),
                                                   kWorkTailBytes, file.owner, &tail)
                            : opened.status();
  Result<std::optional<std::pair<double, std::string>>> work =
      read.ok() ? ParseProgress(tail.text, tail.name, /*quote_line=*/false)
                : Result<std::optional<std::pair<double, std::string>>>(read);
  if (!work.ok() && warned_.insert(pid).second) {
    LogWarning(d_.env(), "pid {}: its work is not counted: {}", pid, work.status().message());
  }
  if (!read.ok()) return std::nullopt;
  FileWork out{tail.dev, tail.ino, std::nullopt, "samples"};  // cgov run's default --unit
  if (!work.ok()) return out;
  out.work = 0;
  if (*work) {
    out.work = (*work)->first;
    out.unit = (*work)->second;
  }
  if (out.unit.empty()) out.unit = "samples";
  return out;
}

// The first reading is where counting starts (work before the daemon saw the job on a GPU is
// not counted, as its GPU time was not); a new unit or a smaller count (the file was started
// again) starts again from there.
void WorkModule::Count(const FileWork& now, uint32_t identity_id, int64_t now_ms) {
  auto [it, first] = files_.try_emplace({now.dev, now.ino});
  Counted& c = it->second;
  c.seen = tick_;
  if (!now.work) {
    if (first) files_.erase(it);  // no reading to start from yet
    return;
  }
  const double work = *now.work;
  if (!first && now.unit == c.unit && work > c.last) {
    const double credit = std::min(work - c.last, kMaxProgressWork - c.credited);
    if (credit > 0) {
      d_.metrics->CreditWork(d_.IdentityOf(identity_id), now.unit, credit, now_ms);
      c.credited += credit;
    }
  }
  c.last = work;
  c.unit = now.unit;
}

Status WorkModule::AfterWrite(DaemonTick* tick) {
  if (!tick->built || d_.metrics == nullptr) return Status::Ok();
  ++tick_;
  // A pid whose process exited may name another file now: said again if that one is bad.
  for (uint32_t pid : d_.attributor()->exited()) warned_.erase(pid);
  std::set<uint32_t> seen_pids;
  for (const StoredProcess& sp : tick->stored.processes) {
    if (!seen_pids.insert(sp.pid).second) continue;
    // The file its environment names, read by the attributor with the process's identity.
    const std::optional<ProcessAttributor::ProgressFile> file =
        d_.attributor()->ProgressFileOf(sp.pid);
    if (!file) continue;
    const std::optional<FileWork> now = Read(sp.pid, *file);
    if (!now) continue;
    auto known = files_.find({now->dev, now->ino});
    if (known != files_.end() && known->second.seen == tick_) continue;  // read this tick
    Count(*now, sp.identity_id, tick->now_ms);
  }
  // A file no process names any more is forgotten: named again, it counts from then.
  std::erase_if(files_, [&](const auto& entry) { return entry.second.seen != tick_; });
  return Status::Ok();
}

// No flag of its own: it serves what it reads on /metrics, so it runs with --listen.
class WorkKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "work"; }
  Status Configure(const CLI::App& app, const DaemonOptions& /*core*/) override {
    listen_ = FlagGiven(app, "--listen");
    return Status::Ok();
  }
  bool enabled() const override { return listen_; }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<WorkModule>(context);
  }

 private:
  bool listen_ = false;
};

}  // namespace

std::unique_ptr<DaemonModuleKind> NewWorkModuleKind() { return std::make_unique<WorkKind>(); }

}  // namespace cgov
