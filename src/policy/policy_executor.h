// Carries the policy engine's decisions out (docs/policy.md): in a dry run, records what it
// would do; enabled, makes sure the pid still names the process that was sampled (its start time
// and uid, read from this process's own /proc through a pidfd held from then on, so a pid reused
// in between is never signalled) and that it has no root's rights now (read again immediately
// before each signal: a process that ran a setuid-root program or gained a capability since it
// was sampled is refused), sends SIGTERM, and SIGKILL once the grace has passed if the process
// still runs, used no GPU in the last tick and still has no root's rights. Every step is handed to
// `record` (the history database) and logged. Not thread-safe: the daemon's tick calls it.
#ifndef CGOV_POLICY_POLICY_EXECUTOR_H_
#define CGOV_POLICY_POLICY_EXECUTOR_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "policy/policy_engine.h"
#include "store/history_store.h"

namespace cgov {

class PolicyExecutor {
 public:
  using Recorder = std::function<void(const PolicyActionRecord&)>;
  // `proc_root`: where this process's own /proc is ("/proc"; tests may point elsewhere).
  PolicyExecutor(bool dry_run, Recorder record, std::string proc_root = "/proc")
      : dry_run_(dry_run), record_(std::move(record)), proc_root_(std::move(proc_root)) {}
  ~PolicyExecutor();  // closes the pidfds held; sends nothing

  void Act(const PolicyDecision& decision, int64_t now_ms);
  // Once a tick, after Act: records the processes that exited after SIGTERM; sends SIGKILL to
  // those past their grace, unless their pid is in `used_gpu` (they computed in this tick).
  void Tick(int64_t now_ms, const std::set<uint32_t>& used_gpu);
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    int pidfd = -1;
    int64_t term_ms = 0;
    int64_t kill_at_ms = 0;
    uint64_t start_ticks = 0;   // the process's, to know it again
    PolicyActionRecord record;  // as the SIGTERM was recorded
  };
  void Record(PolicyActionRecord r, std::string action, std::string outcome, int64_t now_ms);
  // Opens a pidfd on the process and checks it is the one sampled and has no root's rights now
  // (no uid of 0 among real, effective, saved and file-system; no capability); -1 and *why when
  // not. *read: its uids and capabilities as read then ("" when status was not read).
  int OpenVerified(const PolicyProcess& p, std::string* why, std::string* read) const;
  // Before SIGKILL: why the pending process has root's rights now ("" when it has none).
  std::string RootRightsNow(const Pending& p, std::string* read) const;

  bool dry_run_;
  Recorder record_;
  std::string proc_root_;
  std::vector<Pending> pending_;
};

}  // namespace cgov

#endif  // CGOV_POLICY_POLICY_EXECUTOR_H_
