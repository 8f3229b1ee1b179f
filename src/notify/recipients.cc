// The recipients file (docs/notifications.md, "Mail to each person").
#include "notify/recipients.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"
#include "core/toml_subset.h"
#include "notify/mail_message.h"
#include "os/env.h"
#include "os/input_file.h"
#include "os/log.h"

namespace cgov {
namespace {

constexpr size_t kMaxRecipientsBytes = 16u << 20;

Result<std::string> Address(const std::string& path, const TomlValue& v, std::string_view key) {
  if (v.kind != TomlValue::Kind::kString || !IsMailAddress(v.text)) {
    return TomlErrorAt(path, v, key, "expected a plain address (bob@example.com)");
  }
  return v.text;
}

Result<std::vector<std::string>> Addresses(const std::string& path, const TomlValue& v,
                                           std::string_view key) {
  CGOV_ASSIGN_OR_RETURN(std::vector<std::string> list, TomlStrings(path, v, key));
  if (list.size() > 100) return TomlErrorAt(path, v, key, "expected 1 to 100 addresses");
  for (const TomlValue& item : v.items) CGOV_RETURN_IF_ERROR(Address(path, item, key).status());
  return list;
}

Status ParseTop(const std::string& path, const TomlTable& top, RecipientsFile* f) {
  for (const TomlEntry& e : top.entries) {
    if (e.key == "domain") {
      if (e.value.kind != TomlValue::Kind::kString || !IsMailAddress("user@" + e.value.text)) {
        return TomlErrorAt(path, e.value, e.key, "expected a mail domain (example.com)");
      }
      f->domain = e.value.text;
    } else if (e.key == "fallback") {
      CGOV_ASSIGN_OR_RETURN(f->fallback, Address(path, e.value, e.key));
    } else if (e.key == "domain_except") {
      f->domain_except.clear();
      if (e.value.kind == TomlValue::Kind::kList && e.value.items.empty()) continue;
      CGOV_ASSIGN_OR_RETURN(std::vector<std::string> users, TomlStrings(path, e.value, e.key));
      f->domain_except.insert(users.begin(), users.end());
    } else {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (the file takes domain, domain_except, fallback, [[person]] "
                         "and [[team]] tables)");
    }
  }
  return Status::Ok();
}

Result<RecipientsFile::Person> ParsePerson(const std::string& path, const TomlTable& t) {
  RecipientsFile::Person p;
  p.line = t.line;
  for (const TomlEntry& e : t.entries) {
    if (e.key == "users") {
      CGOV_ASSIGN_OR_RETURN(p.users, TomlStrings(path, e.value, e.key));
    } else if (e.key == "address") {
      CGOV_ASSIGN_OR_RETURN(p.address, Address(path, e.value, e.key));
    } else if (e.key == "team") {
      CGOV_ASSIGN_OR_RETURN(p.team, TomlName(path, e.value, e.key));
    } else if (e.key == "opt_out") {
      if (e.value.kind != TomlValue::Kind::kString || e.value.text.empty() ||
          e.value.text.size() > 256 || !IsSafeText(e.value.text)) {
        return TomlErrorAt(
            path, e.value, e.key,
            "expected the reason they asked for no mail, 1 to 256 characters on one line");
      }
      p.opt_out = e.value.text;
    } else {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (a [[person]] takes users, address, team and opt_out)");
    }
  }
  if (p.users.empty() || p.address.empty()) {
    return TomlErrorAt(path, t.line, t.column, p.users.empty() ? "users" : "address",
                       "a [[person]] needs its users (the names cgov sees: login, Kubernetes "
                       "user label, Slurm user) and its address");
  }
  return p;
}

Status ParseTeam(const std::string& path, const TomlTable& t, RecipientsFile* f) {
  std::string name;
  std::vector<std::string> leads;
  for (const TomlEntry& e : t.entries) {
    if (e.key == "name") {
      CGOV_ASSIGN_OR_RETURN(name, TomlName(path, e.value, e.key));
    } else if (e.key == "leads") {
      CGOV_ASSIGN_OR_RETURN(leads, Addresses(path, e.value, e.key));
    } else {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (a [[team]] takes name and leads)");
    }
  }
  if (name.empty() || leads.empty()) {
    return TomlErrorAt(path, t.line, t.column, name.empty() ? "name" : "leads",
                       "a [[team]] needs its name and its leads' addresses");
  }
  if (!f->leads.emplace(name, std::move(leads)).second) {
    return TomlErrorAt(path, t.line, t.column, "name", fmt::format("a second team {:?}", name));
  }
  return Status::Ok();
}

// Each user names one person; each person's team has a [[team]] row.
Status Index(const std::string& path, RecipientsFile* f) {
  for (size_t i = 0; i < f->people.size(); ++i) {
    const RecipientsFile::Person& p = f->people[i];
    for (const std::string& u : p.users) {
      auto [at, added] = f->by_user.emplace(u, i);
      if (!added) {
        return TomlErrorAt(path, p.line, 1, "users",
                           fmt::format("user {:?} is already the person's of line {}", u,
                                       f->people[at->second].line));
      }
    }
    if (!p.team.empty() && f->leads.count(p.team) == 0) {
      return TomlErrorAt(path, p.line, 1, "team",
                         fmt::format("no [[team]] is named {:?} (it gives the leads)", p.team));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<RecipientsFile> ParseRecipientsFile(std::string_view text, const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::vector<TomlTable> tables, ParseTomlSubset(text, path));
  RecipientsFile f;
  f.path = path;
  CGOV_RETURN_IF_ERROR(ParseTop(path, tables.front(), &f));
  for (size_t i = 1; i < tables.size(); ++i) {
    const TomlTable& t = tables[i];
    if (t.name == "person") {
      if (f.people.size() == kMaxRecipientsPeople) {
        return TomlErrorAt(path, t.line, t.column, "person",
                           fmt::format("more than {} people", kMaxRecipientsPeople));
      }
      CGOV_ASSIGN_OR_RETURN(RecipientsFile::Person p, ParsePerson(path, t));
      f.people.push_back(std::move(p));
    } else if (t.name == "team") {
      CGOV_RETURN_IF_ERROR(ParseTeam(path, t, &f));
    } else {
      return TomlErrorAt(path, t.line, t.column, t.name,
                         "unknown table (the file takes [[person]] and [[team]] tables)");
    }
  }
  CGOV_RETURN_IF_ERROR(Index(path, &f));
  return f;
}

Result<RecipientsFile> ReadRecipientsFile(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, Env::Default()->ReadUserFile(path, kMaxRecipientsBytes,
                                                                       "--notify: recipients"));
  return ParseRecipientsFile(text, path);
}

std::vector<Recipient> Recipients::Fallback(std::string_view user, std::string_view why) const {
  {
    std::lock_guard lock(mu_);
    if (logged_.insert(fmt::format("{}/{}", why, user)).second) {
      LogWarning("--notify: recipients {}: {} {}; {}", file_.path,
                 user.empty() ? std::string("a notice about no one's process")
                              : fmt::format("user {:?}", user),
                 why == "owner" ? "has no address (no [[person]] row, no domain rule)"
                                : "has no team lead (no [[person]] row with a team)",
                 file_.fallback.empty() ? "not mailed (no fallback)"
                                        : "mailed to the fallback " + file_.fallback);
    }
  }
  if (file_.fallback.empty()) return {};
  return {{file_.fallback, Recipient::Via::kFallback}};
}

std::string Recipients::DomainAddress(std::string_view user) const {
  const bool numeric = !user.empty() && std::all_of(user.begin(), user.end(), [](char c) {
    return c >= '0' && c <= '9';
  });  // a uid without a name is no one's mailbox
  if (file_.domain.empty() || user.empty() || numeric ||
      file_.domain_except.count(std::string(user)) > 0) {
    return "";
  }
  std::string address = fmt::format("{}@{}", user, file_.domain);
  return IsMailAddress(address) ? address : "";
}

std::vector<Recipient> Recipients::Owner(std::string_view user) const {
  if (auto at = file_.by_user.find(std::string(user)); at != file_.by_user.end()) {
    const RecipientsFile::Person& p = file_.people[at->second];
    if (p.opt_out.empty()) return {{p.address, Recipient::Via::kPerson}};
    std::lock_guard lock(mu_);
    if (logged_.insert(fmt::format("opt_out/{}", user)).second) {
      LogInfo("--notify: recipients {}: user {:?} opted out of mail ({}; line {}): not mailed",
              file_.path, user, p.opt_out, p.line);
    }
    return {};
  }
  if (std::string address = DomainAddress(user); !address.empty()) {
    return {{std::move(address), Recipient::Via::kDomain}};
  }
  return Fallback(user, "owner");
}

std::vector<Recipient> Recipients::Leads(std::string_view user) const {
  if (auto at = file_.by_user.find(std::string(user)); at != file_.by_user.end()) {
    const std::string& team = file_.people[at->second].team;
    if (auto leads = file_.leads.find(team); !team.empty() && leads != file_.leads.end()) {
      std::vector<Recipient> out;
      for (const std::string& a : leads->second) out.push_back({a, Recipient::Via::kPerson});
      return out;
    }
  }
  return Fallback(user, "lead");
}

}  // namespace cgov
