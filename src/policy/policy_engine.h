// Decides, tick by tick, which idle-held processes a policy stops (docs/policy.md). Pure: the
// daemon hands it what each tick saw of each GPU process; PolicyExecutor does the stopping.
// Not thread-safe.
//
// The guards, each a reason never to act: a process whose identity is unknown (no uid or no
// user name); a process with root's rights (real, effective or saved uid 0: a setuid-root
// program too); a process outside the policy's users (by its owner, the real uid) and groups, or
// in its allow-lists (allow_commands by a trusted executable's path, never by a name its owner
// can change), or whose command the policy does not name; a process that used a GPU (its own SM
// utilization, or any utilization of a GPU it holds) in the tick at hand; a process not
// idle-held on every GPU it holds memory on for the whole idle_held_for. A process is decided
// once (by pid and start time): stopped, or refused for root's rights.
#ifndef CGOV_POLICY_POLICY_ENGINE_H_
#define CGOV_POLICY_POLICY_ENGINE_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "policy/policy_file.h"

namespace cgov {

// One process holding memory on GPUs at one tick, over all the GPUs it holds.
struct PolicyProcess {
  uint32_t pid = 0;
  uint64_t start_ticks = 0;            // /proc/PID/stat's start time: pid and this name one process
  std::optional<uint32_t> uid;         // its real uid, its owner; unknown: nothing is done to it
  std::optional<uint32_t> euid, suid;  // effective and saved; unknown counts as root
  std::optional<uint32_t> loginuid;    // for the record only: scope is by owner
  std::string user;                    // the owner's name ("" unknown)
  std::vector<std::string> groups;     // names of its real and supplementary groups
  std::string command;                 // its name, as its owner may have set it
  std::string exe;                     // its executable's path ("" unknown)
  bool exe_trusted = false;            // ReadExecutable's verdict: root's file in root's directory
  uint32_t gpu_id = 0;                 // a GPU it holds (the first), for the record
  bool idle_held = false;  // every GPU it holds compute memory on is idle-held this tick
  bool used_gpu = false;   // it or a GPU it holds showed any utilization this tick
};

struct PolicyDecision {
  enum class Kind { kStop, kRefused };
  Kind kind = Kind::kStop;
  const PolicyRule* rule = nullptr;
  PolicyProcess process;
  int64_t idle_since_ms = 0;
  std::string why;  // kRefused: the guard
};

// Whether the process has or may take back root's rights: a real, effective or saved uid of 0,
// or one not known.
bool HasRootRights(const PolicyProcess& p);

// "uid 1000 euid 0 suid 0 login 1001" (unknowns as "?"; login only when set): every uid of the
// process, for the record.
std::string UidsText(const PolicyProcess& p);

class PolicyEngine {
 public:
  explicit PolicyEngine(PolicyFile file) : file_(std::move(file)) {}
  // REQUIRES: ticks in increasing now_ms.
  std::vector<PolicyDecision> Evaluate(int64_t now_ms, const std::vector<PolicyProcess>& processes);
  // The first policy whose scope takes the process, or nullptr.
  const PolicyRule* RuleFor(const PolicyProcess& p) const;
  const PolicyFile& file() const { return file_; }

 private:
  using Key = std::pair<uint32_t, uint64_t>;  // pid, start time
  PolicyFile file_;
  std::map<Key, int64_t> idle_since_ms_;
  std::set<Key> decided_;
};

}  // namespace cgov

#endif  // CGOV_POLICY_POLICY_ENGINE_H_
