// Policy: the --policy TOML file an operator writes, then its policies over a few ticks of
// processes. Properties: a refusal names the file and is safe to print; an accepted file has
// unique names, a scope for every policy and durations in range; the engine never decides to
// stop a process of root or of unknown identity, never on a tick it used a GPU, never one it
// has no policy for, and decides each process at most once.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"
#include "policy/policy_engine.h"
#include "policy/policy_file.h"

using namespace cgov;

CGOV_FUZZ_TARGET(policy_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<PolicyFile> file = ParsePolicyFile(text, "policy.toml");
  if (!file.ok()) {
    const std::string& message = file.status().message();
    FUZZ_CHECK(message.starts_with("policy.toml:"));
    FUZZ_CHECK(SafeText(message) == message);
    return 0;
  }
  std::set<std::string> names;
  for (const PolicyRule& r : file->rules) {
    FUZZ_CHECK(names.insert(r.name).second && IsSafeText(r.name));
    FUZZ_CHECK(!r.users.empty() || !r.groups.empty());
    FUZZ_CHECK(r.idle_held_ms >= 1000 && r.idle_held_ms <= 30LL * 86'400'000);
    FUZZ_CHECK(r.grace_ms >= 1000 && r.grace_ms <= 3'600'000);
  }
  PolicyEngine engine(*file);
  // Users and commands from the file itself, so that some policies take some processes.
  std::vector<PolicyProcess> procs;
  uint32_t pid = 100;
  for (const PolicyRule& r : file->rules) {
    for (const std::string& who : r.users) {
      for (uint32_t uid : {0u, 1000u}) {
        PolicyProcess p;
        p.pid = pid++;
        p.start_ticks = p.pid;
        p.uid = uid;
        p.user = who;
        p.groups = r.groups;
        p.command = r.commands.empty() ? "python" : r.commands.front();
        p.idle_held = true;
        p.used_gpu = p.pid % 3 == 0;
        procs.push_back(p);
      }
    }
  }
  PolicyProcess unknown;
  unknown.pid = 7;
  unknown.start_ticks = 7;
  unknown.idle_held = true;
  procs.push_back(unknown);
  std::set<uint32_t> decided;
  for (int64_t t = 0; t <= 31LL * 86'400'000; t += 86'400'000 / 2) {
    for (const PolicyDecision& d : engine.Evaluate(t, procs)) {
      FUZZ_CHECK(decided.insert(d.process.pid).second);
      FUZZ_CHECK(d.process.uid.has_value() && !d.process.user.empty());
      FUZZ_CHECK(!d.process.used_gpu);
      FUZZ_CHECK(d.rule != nullptr && d.rule == engine.RuleFor(d.process));
      FUZZ_CHECK(t - d.idle_since_ms >= d.rule->idle_held_ms);
      if (*d.process.uid == 0) FUZZ_CHECK(d.kind == PolicyDecision::Kind::kRefused);
    }
  }
  return 0;
}
