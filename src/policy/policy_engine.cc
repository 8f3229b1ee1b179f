#include "policy/policy_engine.h"

#include <algorithm>

namespace cgov {
namespace {

bool Listed(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// `commands`: a glob that starts with '/' is matched against the executable's path, any other
// against the process name.
bool CommandListed(const std::vector<std::string>& globs, const PolicyProcess& p) {
  return std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
    return g.starts_with('/') ? !p.exe.empty() && CommandMatches(g, p.exe)
                              : CommandMatches(g, p.command);
  });
}

// `allow_commands` (every glob a path, ParsePolicyFile sees to it): only an executable whose
// owner could not have put it there exempts its process.
bool ExecutableAllowed(const std::vector<std::string>& globs, const PolicyProcess& p) {
  return p.exe_trusted && std::any_of(globs.begin(), globs.end(), [&](const std::string& g) {
           return CommandMatches(g, p.exe);
         });
}

std::string UidText(const std::optional<uint32_t>& uid) { return uid ? std::to_string(*uid) : "?"; }

}  // namespace

bool HasRootRights(const PolicyProcess& p) {
  return p.uid.value_or(0) == 0 || p.euid.value_or(0) == 0 || p.suid.value_or(0) == 0;
}

std::string UidsText(const PolicyProcess& p) {
  return "uid " + UidText(p.uid) + " euid " + UidText(p.euid) + " suid " + UidText(p.suid) +
         (p.loginuid ? " login " + std::to_string(*p.loginuid) : "");
}

const PolicyRule* PolicyEngine::RuleFor(const PolicyProcess& p) const {
  if (!p.uid || p.user.empty()) return nullptr;  // identity unknown: never in scope
  for (const PolicyRule& r : file_.rules) {
    const bool by_user = Listed(r.users, p.user) || (Listed(r.users, "*") && !HasRootRights(p));
    const bool by_group = std::any_of(p.groups.begin(), p.groups.end(),
                                      [&](const std::string& g) { return Listed(r.groups, g); });
    if (!by_user && !by_group) continue;
    if (!r.commands.empty() && !CommandListed(r.commands, p)) continue;
    if (Listed(r.allow_users, p.user) || ExecutableAllowed(r.allow_commands, p)) continue;
    return &r;
  }
  return nullptr;
}

std::vector<PolicyDecision> PolicyEngine::Evaluate(int64_t now_ms,
                                                   const std::vector<PolicyProcess>& processes) {
  std::vector<PolicyDecision> out;
  std::map<Key, int64_t> still;
  for (const PolicyProcess& p : processes) {
    if (!p.idle_held || p.start_ticks == 0) continue;  // its streak ends (or cannot be told)
    const Key key{p.pid, p.start_ticks};
    auto it = idle_since_ms_.find(key);
    const int64_t since = it == idle_since_ms_.end() ? now_ms : it->second;
    still.emplace(key, since);
    if (decided_.count(key) > 0 || p.used_gpu) continue;  // no action on a tick it computed
    const PolicyRule* rule = RuleFor(p);
    if (rule == nullptr || now_ms - since < rule->idle_held_ms) continue;
    PolicyDecision d;
    d.rule = rule;
    d.process = p;
    d.idle_since_ms = since;
    if (HasRootRights(p)) {
      d.kind = PolicyDecision::Kind::kRefused;
      d.why = "a process with root's rights (real, effective or saved uid 0) is never stopped";
    }
    decided_.insert(key);
    out.push_back(std::move(d));
  }
  idle_since_ms_ = std::move(still);
  // Decided processes that left are forgotten: their pid may come back as another process.
  for (auto it = decided_.begin(); it != decided_.end();) {
    const bool seen = std::any_of(processes.begin(), processes.end(), [&](const PolicyProcess& p) {
      return p.pid == it->first && p.start_ticks == it->second;
    });
    it = seen ? std::next(it) : decided_.erase(it);
  }
  return out;
}

}  // namespace cgov
