#include "policy/policy_file.h"

#include <fnmatch.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/text.h"
#include "core/toml_subset.h"

namespace cgov {
namespace {

Status ErrorAt(const std::string& path, int line, int column, std::string_view key,
               std::string_view message) {
  return InvalidArgument(fmt::format("{}:{}:{}: {}: {}", path, line, column, key, message));
}

Result<std::vector<std::string>> Strings(const std::string& path, const TomlValue& v,
                                         std::string_view key) {
  if (v.kind != TomlValue::Kind::kList || v.items.empty()) {
    return ErrorAt(path, v.line, v.column, key, "expected a list of strings, [\"a\", \"b\"]");
  }
  std::vector<std::string> out;
  for (const TomlValue& item : v.items) {
    if (item.kind != TomlValue::Kind::kString || item.text.empty() || item.text.size() > 256 ||
        !IsSafeText(item.text)) {
      return ErrorAt(path, item.line, item.column, key,
                     "expected UTF-8 text of 1 to 256 bytes without control characters");
    }
    if (std::find(out.begin(), out.end(), item.text) != out.end()) {
      return ErrorAt(path, item.line, item.column, key,
                     fmt::format("{:?} is listed twice", item.text));
    }
    out.push_back(item.text);
  }
  return out;
}

Result<int64_t> DurationMs(const std::string& path, const TomlValue& v, std::string_view key,
                           int64_t min_ms, int64_t max_ms) {
  const std::string range =
      fmt::format("from {} to {}", FormatDuration(std::chrono::milliseconds(min_ms)),
                  FormatDuration(std::chrono::milliseconds(max_ms)));
  if (v.kind != TomlValue::Kind::kString) {
    return ErrorAt(path, v.line, v.column, key,
                   fmt::format("expected a duration in quotes (\"4h\"), {}", range));
  }
  Result<std::chrono::milliseconds> d = ParseDuration(v.text);
  if (!d.ok()) return ErrorAt(path, v.line, v.column, key, d.status().message());
  if (d->count() < min_ms || d->count() > max_ms) {
    return ErrorAt(path, v.line, v.column, key, fmt::format("{} is out of range: {}", v.text, range));
  }
  return d->count();
}

Status ParseKey(const std::string& path, const TomlEntry& e, PolicyRule* r, bool* idle_given) {
  const TomlValue& v = e.value;
  if (e.key == "name") {
    const bool ok = v.kind == TomlValue::Kind::kString && !v.text.empty() && v.text.size() <= 64 &&
                    std::all_of(v.text.begin(), v.text.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
                             c == '_' || c == '.';
                    });
    if (!ok) {
      return ErrorAt(path, v.line, v.column, e.key,
                     "expected a name of 1 to 64 letters, digits, '-', '_' or '.'");
    }
    r->name = v.text;
  } else if (e.key == "idle_held_for") {
    CGOV_ASSIGN_OR_RETURN(r->idle_held_ms, DurationMs(path, v, e.key, 1'000, 30LL * 86'400'000));
    *idle_given = true;
  } else if (e.key == "grace") {
    CGOV_ASSIGN_OR_RETURN(r->grace_ms, DurationMs(path, v, e.key, 1'000, 3'600'000));
  } else if (e.key == "users") {
    CGOV_ASSIGN_OR_RETURN(r->users, Strings(path, v, e.key));
  } else if (e.key == "groups") {
    CGOV_ASSIGN_OR_RETURN(r->groups, Strings(path, v, e.key));
  } else if (e.key == "commands") {
    CGOV_ASSIGN_OR_RETURN(r->commands, Strings(path, v, e.key));
  } else if (e.key == "allow_users") {
    CGOV_ASSIGN_OR_RETURN(r->allow_users, Strings(path, v, e.key));
  } else if (e.key == "allow_commands") {
    CGOV_ASSIGN_OR_RETURN(r->allow_commands, Strings(path, v, e.key));
  } else {
    return ErrorAt(path, e.line, e.column, e.key,
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
  if (r.name.empty()) return ErrorAt(path, t.line, t.column, "policy", "give its name");
  if (!idle_given) {
    return ErrorAt(path, t.line, t.column, "policy",
                   "give idle_held_for: how long a process holds idle GPUs before it is stopped");
  }
  if (r.users.empty() && r.groups.empty()) {
    return ErrorAt(path, t.line, t.column, "policy",
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
    return ErrorAt(path, e.line, e.column, e.key, "unknown key (the file takes [[policy]] tables)");
  }
  std::set<std::string> names;
  for (size_t i = 1; i < tables.size(); ++i) {
    const TomlTable& t = tables[i];
    if (t.name != "policy") {
      return ErrorAt(path, t.line, t.column, t.name, "unknown table (the file takes [[policy]] tables)");
    }
    if (file.rules.size() == kMaxPolicyRules) {
      return ErrorAt(path, t.line, t.column, "policy", fmt::format("more than {} policies",
                                                                   kMaxPolicyRules));
    }
    CGOV_ASSIGN_OR_RETURN(PolicyRule r, ParseRule(path, t));
    if (!names.insert(r.name).second) {
      return ErrorAt(path, t.line, t.column, "policy", fmt::format("a second policy named {:?}", r.name));
    }
    file.rules.push_back(std::move(r));
  }
  if (file.rules.empty()) {
    return ErrorAt(path, 1, 1, "policy", "the file has no [[policy]]");
  }
  return file;
}

bool CommandMatches(std::string_view glob, std::string_view command) {
  return fnmatch(std::string(glob).c_str(), std::string(command).c_str(), 0) == 0;
}

}  // namespace cgov
