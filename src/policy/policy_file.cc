#include "policy/policy_file.h"

#include <fnmatch.h>

#include <set>

#include <fmt/format.h>

#include "core/toml_subset.h"

namespace cgov {
namespace {

Status ParseKey(const std::string& path, const TomlEntry& e, PolicyRule* r, bool* idle_given) {
  const TomlValue& v = e.value;
  if (e.key == "name") {
    CGOV_ASSIGN_OR_RETURN(r->name, TomlName(path, v, e.key));
  } else if (e.key == "idle_held_for") {
    CGOV_ASSIGN_OR_RETURN(r->idle_held_ms,
                          TomlDurationMs(path, v, e.key, 1'000, 30LL * 86'400'000));
    *idle_given = true;
  } else if (e.key == "grace") {
    CGOV_ASSIGN_OR_RETURN(r->grace_ms, TomlDurationMs(path, v, e.key, 1'000, 3'600'000));
  } else if (e.key == "users") {
    CGOV_ASSIGN_OR_RETURN(r->users, TomlStrings(path, v, e.key));
  } else if (e.key == "groups") {
    CGOV_ASSIGN_OR_RETURN(r->groups, TomlStrings(path, v, e.key));
  } else if (e.key == "commands") {
    CGOV_ASSIGN_OR_RETURN(r->commands, TomlStrings(path, v, e.key));
  } else if (e.key == "allow_users") {
    CGOV_ASSIGN_OR_RETURN(r->allow_users, TomlStrings(path, v, e.key));
  } else if (e.key == "allow_commands") {
    CGOV_ASSIGN_OR_RETURN(r->allow_commands, TomlStrings(path, v, e.key));
    for (const std::string& glob : r->allow_commands) {
      if (!glob.starts_with('/')) {
        return TomlErrorAt(
            path, e.line, e.column, e.key,
            fmt::format(
                "{:?} would exempt by process name, which its owner can change (prctl, exec -a): "
                "give the executable's path instead (a glob such as \"/opt/serving/bin/*\"; only "
                "root's files in root's directories count), or exempt the user with allow_users",
                glob));
      }
    }
  } else {
    return TomlErrorAt(path, e.line, e.column, e.key,
                       "unknown key (a policy takes name, idle_held_for, grace, users, groups, "
                       "commands, allow_users and allow_commands)");
  }
  return Status::Ok();
}

Result<PolicyRule> ParseRule(const std::string& path, const TomlTable& t) {
  PolicyRule r;
  r.line = t.line;
  bool idle_given = false;
  for (const TomlEntry& e : t.entries) CGOV_RETURN_IF_ERROR(ParseKey(path, e, &r, &idle_given));
  if (r.name.empty()) return TomlErrorAt(path, t.line, t.column, "policy", "give its name");
  if (!idle_given) {
    return TomlErrorAt(
        path, t.line, t.column, "policy",
        "give idle_held_for: how long a process holds idle GPUs before it is stopped");
  }
  if (r.users.empty() && r.groups.empty()) {
    return TomlErrorAt(path, t.line, t.column, "policy",
                       "give its scope: users = [...] and/or groups = [...] (users = [\"*\"] for "
                       "every user but root, said on purpose)");
  }
  return r;
}

}  // namespace

Result<PolicyFile> ParsePolicyFile(std::string_view text, const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::vector<TomlTable> tables, ParseTomlSubset(text, path));
  PolicyFile file;
  file.path = path;
  if (!tables.front().entries.empty()) {
    const TomlEntry& e = tables.front().entries.front();
    return TomlErrorAt(path, e.line, e.column, e.key,
                       "unknown key (the file takes [[policy]] tables)");
  }
  std::set<std::string> names;
  for (size_t i = 1; i < tables.size(); ++i) {
    const TomlTable& t = tables[i];
    if (t.name != "policy") {
      return TomlErrorAt(path, t.line, t.column, t.name,
                         "unknown table (the file takes [[policy]] tables)");
    }
    if (file.rules.size() == kMaxPolicyRules) {
      return TomlErrorAt(path, t.line, t.column, "policy",
                         fmt::format("more than {} policies", kMaxPolicyRules));
    }
    CGOV_ASSIGN_OR_RETURN(PolicyRule r, ParseRule(path, t));
    if (!names.insert(r.name).second) {
      return TomlErrorAt(path, t.line, t.column, "policy",
                         fmt::format("a second policy named {:?}", r.name));
    }
    file.rules.push_back(std::move(r));
  }
  if (file.rules.empty()) {
    return TomlErrorAt(path, 1, 1, "policy", "the file has no [[policy]]");
  }
  return file;
}

bool CommandMatches(std::string_view glob, std::string_view command) {
  return fnmatch(std::string(glob).c_str(), std::string(command).c_str(), 0) == 0;
}

}  // namespace cgov
