// The policy file of `cgov daemon --policy` (docs/policy.md): which idle-held processes the
// daemon may stop, and whose. TOML, in the subset of core/toml_subset.h. Pure.
#ifndef CGOV_POLICY_POLICY_FILE_H_
#define CGOV_POLICY_POLICY_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct PolicyRule {
  std::string name;            // unique in the file
  int64_t idle_held_ms = 0;    // act once a process has held idle GPUs this long
  int64_t grace_ms = 300'000;  // SIGTERM, then SIGKILL this long after if it still runs
  // scope: processes these users own, by the real uid ("*": every known user but root) ...
  std::vector<std::string> users;
  std::vector<std::string> groups;  // ... or members of these groups
  // only these commands (globs: on the executable's path when they start with '/', else on the
  // process name, which its owner can change: it narrows, it never protects); empty: any
  std::vector<std::string> commands;
  std::vector<std::string> allow_users;  // never these users
  // never these executables (path globs; only root's files in root's directories count)
  std::vector<std::string> allow_commands;
  int line = 0;
};

struct PolicyFile {
  std::string path;
  std::vector<PolicyRule> rules;
};

inline constexpr size_t kMaxPolicyRules = 50;

// Errors are "path:line:column: key: message". A policy without a scope (users or groups) is
// refused: nothing is stopped for everyone by default.
Result<PolicyFile> ParsePolicyFile(std::string_view text, const std::string& path);

// fnmatch(3)-style: '*' any run, '?' one byte, the rest literal.
bool CommandMatches(std::string_view glob, std::string_view command);

}  // namespace cgov

#endif  // CGOV_POLICY_POLICY_FILE_H_
