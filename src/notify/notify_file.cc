// The notifications file (docs/notifications.md): the TOML subset of core/toml_subset.h, then
// what each key of a rule and of a sink means.
#include "notify/notify_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/text.h"
#include "core/toml_subset.h"
#include "notify/mail_message.h"
#include "notify/recipients.h"
#include "os/env.h"
#include "os/input_file.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

struct KindName {
  NotifyRuleKind kind;
  const char* name;
  int64_t default_for_ms;
};
constexpr KindName kRuleKinds[] = {
    {NotifyRuleKind::kIdleHeld, "idle_held", 3'600'000},
    {NotifyRuleKind::kTrulyIdle, "truly_idle", 3'600'000},
    {NotifyRuleKind::kLowUtilization, "low_utilization", 3'600'000},
    {NotifyRuleKind::kMemoryHigh, "memory_high", 300'000},
    {NotifyRuleKind::kXid, "xid", 0},
    {NotifyRuleKind::kBudget, "budget", 0},
    {NotifyRuleKind::kPolicy, "policy", 0},
};
constexpr std::pair<SinkKind, const char*> kSinkKinds[] = {{SinkKind::kWebhook, "webhook"},
                                                           {SinkKind::kSlack, "slack"},
                                                           {SinkKind::kTeams, "teams"},
                                                           {SinkKind::kTerminal, "terminal"},
                                                           {SinkKind::kEmail, "email"}};

// An e-mail sink's own keys (from, to, tls, ca_file): true when `e` was one of them.
Result<bool> ParseEmailKey(const std::string& path, const TomlEntry& e, NotifySink* s) {
  if (e.key == "from") {
    if (e.value.kind != TomlValue::Kind::kString || !IsMailAddress(e.value.text)) {
      return TomlErrorAt(path, e.value, e.key, "expected a plain address (cgov@example.com)");
    }
    s->from = e.value.text;
  } else if (e.key == "to") {
    CGOV_ASSIGN_OR_RETURN(std::vector<std::string> to, TomlStrings(path, e.value, e.key));
    if (to.empty() || to.size() > 100) {
      return TomlErrorAt(path, e.value, e.key, "expected 1 to 100 addresses");
    }
    for (const TomlValue& item : e.value.items) {
      if (item.text == "owner" || item.text == "lead") {
        (item.text == "owner" ? s->to_owner : s->to_lead) = true;
      } else if (IsMailAddress(item.text)) {
        s->to.push_back(item.text);
      } else {
        return TomlErrorAt(path, item, e.key,
                           "expected a plain address (ops@example.com), \"owner\" (the user a "
                           "notice is about) or \"lead\" (their team's leads)");
      }
    }
  } else if (e.key == "tls") {
    if (e.value.kind != TomlValue::Kind::kString ||
        (e.value.text != "starttls" && e.value.text != "none")) {
      return TomlErrorAt(path, e.value, e.key,
                         "expected \"starttls\" (the default) or \"none\" (plain SMTP, for a relay "
                         "on this host); smtps:// in url_file is TLS from the start");
    }
    s->starttls = e.value.text == "starttls";
  } else if (e.key == "ca_file") {
    if (e.value.kind != TomlValue::Kind::kString || !e.value.text.starts_with("/") ||
        !IsSafeText(e.value.text)) {
      return TomlErrorAt(path, e.value, e.key, "expected the absolute path of a CA file");
    }
    s->ca_file = e.value.text;
  } else {
    return false;
  }
  return true;
}

// What an e-mail sink needs, and what only it takes.
Status CheckEmailKeys(const std::string& path, const TomlTable& table, const NotifySink& s) {
  const bool email = s.kind == SinkKind::kEmail;
  const bool addressed = !s.to.empty() || s.to_owner || s.to_lead;
  if (email && (s.from.empty() || !addressed)) {
    return TomlErrorAt(path, table.line, table.column, "sink",
                       s.from.empty() ? "give its from" : "give its to");
  }
  if (!email && (!s.from.empty() || addressed || !s.starttls || !s.ca_file.empty())) {
    return TomlErrorAt(path, table.line, table.column, "sink",
                       "from, to, tls and ca_file are an e-mail sink's");
  }
  return Status::Ok();
}

Result<double> Percent(const std::string& path, const TomlValue& v, std::string_view key) {
  const bool number = v.kind == TomlValue::Kind::kInteger || v.kind == TomlValue::Kind::kFloat;
  if (!number || !std::isfinite(v.number) || v.number <= 0 || v.number >= 100) {
    return TomlErrorAt(path, v, key, "expected a percentage above 0 and below 100");
  }
  return v.number;
}

// Sink names, each one a sink is called by.
Result<std::vector<std::string>> SinkNames(const std::string& path, const TomlValue& v,
                                           std::string_view key) {
  CGOV_ASSIGN_OR_RETURN(std::vector<std::string> names, TomlStrings(path, v, key));
  for (const TomlValue& item : v.items) CGOV_RETURN_IF_ERROR(TomlName(path, item, key).status());
  return names;
}

Result<NotifySink> ParseSink(const std::string& path, const TomlTable& table) {
  NotifySink s;
  s.line = table.line;
  bool kind = false, utmp_given = false;
  for (const TomlEntry& e : table.entries) {
    if (e.key == "name") {
      CGOV_ASSIGN_OR_RETURN(s.name, TomlName(path, e.value, e.key));
    } else if (e.key == "kind") {
      auto it = std::find_if(std::begin(kSinkKinds), std::end(kSinkKinds),
                             [&](const auto& k) { return e.value.text == k.second; });
      if (e.value.kind != TomlValue::Kind::kString || it == std::end(kSinkKinds)) {
        return TomlErrorAt(path, e.value, e.key,
                           "expected \"webhook\", \"slack\", \"teams\", \"terminal\" or \"email\"");
      }
      s.kind = it->first;
      kind = true;
    } else if (e.key == "url_file") {
      if (e.value.kind != TomlValue::Kind::kString || e.value.text.empty() ||
          !IsSafeText(e.value.text)) {
        return TomlErrorAt(path, e.value, e.key, "expected the path of a file holding the URL");
      }
      s.url_file = e.value.text;
    } else if (e.key == "timeout") {
      CGOV_ASSIGN_OR_RETURN(s.timeout_ms, TomlDurationMs(path, e.value, e.key, 100, 300'000));
    } else if (e.key == "quiet_hours") {
      Result<QuietHours> quiet = e.value.kind == TomlValue::Kind::kString
                                     ? ParseQuietHours(e.value.text)
                                     : ParseQuietHours("");
      if (!quiet.ok()) return TomlErrorAt(path, e.value, e.key, quiet.status().message());
      s.quiet = *quiet;
    } else if (e.key == "utmp_file") {
      if (e.value.kind != TomlValue::Kind::kString || !e.value.text.starts_with("/") ||
          !IsSafeText(e.value.text)) {
        return TomlErrorAt(path, e.value, e.key, "expected the absolute path of a utmp file");
      }
      s.utmp_file = e.value.text;
      utmp_given = true;
    } else {
      CGOV_ASSIGN_OR_RETURN(bool email_key, ParseEmailKey(path, e, &s));
      if (!email_key) {
        return TomlErrorAt(
            path, e.line, e.column, e.key,
            "unknown key (a sink takes name, kind, url_file, timeout and quiet_hours; a terminal "
            "sink no url_file but utmp_file; an email sink from, to, tls and ca_file too)");
      }
    }
  }
  const bool terminal = kind && s.kind == SinkKind::kTerminal;
  if (terminal && !s.url_file.empty()) {
    return TomlErrorAt(path, table.line, table.column, "url_file", "a terminal sink has no URL");
  }
  if (!terminal && utmp_given) {
    return TomlErrorAt(path, table.line, table.column, "utmp_file",
                       "only a terminal sink reads utmp");
  }
  CGOV_RETURN_IF_ERROR(CheckEmailKeys(path, table, s));
  for (auto [given, key] : {std::pair{!s.name.empty(), "name"}, std::pair{kind, "kind"},
                            std::pair{terminal || !s.url_file.empty(), "url_file"}}) {
    if (!given)
      return TomlErrorAt(path, table.line, table.column, "sink", fmt::format("give its {}", key));
  }
  return s;
}

Status ParseRuleKey(const std::string& path, const TomlEntry& e, NotifyRule* r,
                    const TomlValue** threshold_at, const TomlValue** users_at) {
  if (e.key == "name") {
    CGOV_ASSIGN_OR_RETURN(r->name, TomlName(path, e.value, e.key));
  } else if (e.key == "for") {
    CGOV_ASSIGN_OR_RETURN(r->for_ms, TomlDurationMs(path, e.value, e.key, 0, 30LL * 86'400'000));
  } else if (e.key == "remind_every") {
    CGOV_ASSIGN_OR_RETURN(r->remind_every_ms,
                          TomlDurationMs(path, e.value, e.key, 0, 30LL * 86'400'000));
  } else if (e.key == "lead_after") {
    CGOV_ASSIGN_OR_RETURN(r->lead_after_ms,
                          TomlDurationMs(path, e.value, e.key, 1000, 30LL * 86'400'000));
  } else if (e.key == "below_pct" || e.key == "above_pct") {
    CGOV_ASSIGN_OR_RETURN(r->threshold_pct, Percent(path, e.value, e.key));
    *threshold_at = &e.value;
  } else if (e.key == "sinks") {
    CGOV_ASSIGN_OR_RETURN(r->sinks, SinkNames(path, e.value, e.key));
  } else if (e.key == "users") {
    CGOV_ASSIGN_OR_RETURN(r->users, TomlStrings(path, e.value, e.key));
    *users_at = &e.value;
  } else if (e.key != "kind") {
    return TomlErrorAt(path, e.line, e.column, e.key,
                       "unknown key (a rule takes kind, name, for, below_pct or above_pct, "
                       "remind_every, lead_after, sinks and users)");
  }
  return Status::Ok();
}

// The threshold key a kind takes ("" for none) and its default.
std::pair<const char*, double> ThresholdOf(NotifyRuleKind kind) {
  switch (kind) {
    case NotifyRuleKind::kLowUtilization:
      return {"below_pct", 50};
    case NotifyRuleKind::kMemoryHigh:
      return {"above_pct", 85};
    default:
      return {"", 0};
  }
}

Result<NotifyRule> ParseRule(const std::string& path, const TomlTable& table) {
  const TomlEntry* kind_entry = nullptr;
  for (const TomlEntry& e : table.entries) {
    if (e.key == "kind") kind_entry = &e;
  }
  if (kind_entry == nullptr) {
    return TomlErrorAt(path, table.line, table.column, "rule",
                       "give its kind: idle_held, truly_idle, low_utilization, memory_high, xid, "
                       "budget or policy");
  }
  const TomlValue& kv = kind_entry->value;
  auto kind = std::find_if(std::begin(kRuleKinds), std::end(kRuleKinds),
                           [&](const KindName& k) { return kv.text == k.name; });
  if (kv.kind != TomlValue::Kind::kString || kind == std::end(kRuleKinds)) {
    return TomlErrorAt(
        path, kv, "kind",
        "expected idle_held, truly_idle, low_utilization, memory_high, xid, budget or policy");
  }
  NotifyRule r;
  r.line = table.line;
  r.kind = kind->kind;
  r.name = kind->name;
  r.for_ms = kind->default_for_ms;
  r.threshold_pct = ThresholdOf(r.kind).second;
  const TomlValue* threshold_at = nullptr;
  const TomlValue* users_at = nullptr;
  for (const TomlEntry& e : table.entries) {
    CGOV_RETURN_IF_ERROR(ParseRuleKey(path, e, &r, &threshold_at, &users_at));
    if ((e.key == "below_pct" || e.key == "above_pct") && e.key != ThresholdOf(r.kind).first) {
      return TomlErrorAt(
          path, e.line, e.column, e.key,
          *ThresholdOf(r.kind).first == '\0'
              ? fmt::format("a {} rule takes no threshold", kind->name)
              : fmt::format("a {} rule takes {}", kind->name, ThresholdOf(r.kind).first));
    }
  }
  if (users_at != nullptr && r.kind != NotifyRuleKind::kIdleHeld) {
    return TomlErrorAt(
        path, *users_at, "users",
        "only an idle_held rule is scoped by user (the others are about a whole GPU)");
  }
  if (r.lead_after_ms > 0 && r.kind != NotifyRuleKind::kIdleHeld) {
    return TomlErrorAt(path, table.line, table.column, "lead_after",
                       "only an idle_held rule has a ladder (a process with an owner whose lead "
                       "is told)");
  }
  if (r.lead_after_ms > 0 && r.lead_after_ms <= r.for_ms) {
    return TomlErrorAt(
        path, table.line, table.column, "lead_after",
        fmt::format("must be later than for ({}): the owner is told first", SpanOf(r.for_ms)));
  }
  if ((r.kind == NotifyRuleKind::kXid || r.kind == NotifyRuleKind::kPolicy) &&
      r.remind_every_ms > 0) {
    return TomlErrorAt(path, table.line, table.column, "remind_every",
                       r.kind == NotifyRuleKind::kXid ? "an Xid is one event: nothing to remind of"
                                                      : "a policy action is one event: nothing to "
                                                        "remind of");
  }
  return r;
}

// A number (integer or not) from 0 to `max`; else "expected WHAT".
Result<double> NumberIn(const std::string& path, const TomlEntry& e, double max,
                        std::string_view what) {
  const bool number =
      e.value.kind == TomlValue::Kind::kInteger || e.value.kind == TomlValue::Kind::kFloat;
  if (!number || !(e.value.number >= 0) || e.value.number > max) {
    return TomlErrorAt(path, e.value, e.key, fmt::format("expected {}", what));
  }
  return e.value.number;
}

Result<JobReportConfig> ParseJobReport(const std::string& path, const TomlTable& table) {
  JobReportConfig j;
  j.line = table.line;
  for (const TomlEntry& e : table.entries) {
    if (e.key == "sinks") {
      CGOV_ASSIGN_OR_RETURN(j.sinks, SinkNames(path, e.value, e.key));
    } else if (e.key == "min_gpu_hours") {
      CGOV_ASSIGN_OR_RETURN(j.min_gpu_hours,
                            NumberIn(path, e, 1e6, "a number of GPU-hours from 0 to 1000000"));
    } else if (e.key == "per_person_per_day") {
      if (e.value.kind != TomlValue::Kind::kInteger || e.value.integer < 1 ||
          e.value.integer > 1000) {
        return TomlErrorAt(path, e.value, e.key, "expected a whole number from 1 to 1000");
      }
      j.per_person_per_day = e.value.integer;
    } else if (e.key == "log") {
      if (e.value.kind != TomlValue::Kind::kString || !e.value.text.starts_with("/") ||
          !IsSafeText(e.value.text)) {
        return TomlErrorAt(
            path, e.value, e.key,
            "expected the absolute path of the database that counts the reports sent");
      }
      j.log = e.value.text;
    } else if (e.key == "ended_after") {
      CGOV_ASSIGN_OR_RETURN(j.ended_after_ms,
                            TomlDurationMs(path, e.value, e.key, 1000, 86'400'000));
    } else {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (a job_report takes sinks, min_gpu_hours, "
                         "per_person_per_day, log and ended_after)");
    }
  }
  return j;
}

constexpr const char* kWeekdays[] = {"monday", "tuesday",  "wednesday", "thursday",
                                     "friday", "saturday", "sunday"};

Result<DigestConfig> ParseDigest(const std::string& path, const TomlTable& table) {
  DigestConfig d;
  d.line = table.line;
  for (const TomlEntry& e : table.entries) {
    if (e.key == "sinks") {
      CGOV_ASSIGN_OR_RETURN(d.sinks, SinkNames(path, e.value, e.key));
    } else if (e.key == "day") {
      auto day = std::find(std::begin(kWeekdays), std::end(kWeekdays), e.value.text);
      if (e.value.kind != TomlValue::Kind::kString || day == std::end(kWeekdays)) {
        return TomlErrorAt(path, e.value, e.key,
                           "expected a day of the week, in lower case (\"monday\")");
      }
      d.weekday = static_cast<int>(day - std::begin(kWeekdays));
    } else if (e.key == "at") {
      d.at_min = e.value.kind == TomlValue::Kind::kString ? ClockMinutes(e.value.text) : -1;
      if (d.at_min < 0) {
        return TomlErrorAt(path, e.value, e.key,
                           "expected \"HH:MM\", 24-hour, in the host's local time (\"08:00\")");
      }
    } else if (e.key == "to") {
      CGOV_ASSIGN_OR_RETURN(std::vector<std::string> to, TomlStrings(path, e.value, e.key));
      d.to_users = d.to_leads = false;
      for (const TomlValue& item : e.value.items) {
        if (item.text != "users" && item.text != "leads") {
          return TomlErrorAt(
              path, item, e.key,
              "expected \"users\" (each their own) or \"leads\" (each team's leads their team's)");
        }
        (item.text == "users" ? d.to_users : d.to_leads) = true;
      }
      if (to.empty()) {
        return TomlErrorAt(path, e.value, e.key, "expected \"users\", \"leads\" or both");
      }
    } else if (e.key == "min_usd") {
      CGOV_ASSIGN_OR_RETURN(d.min_usd, NumberIn(path, e, 1e9, "dollars from 0 to 1000000000"));
    } else {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (a digest takes sinks, day, at, to and min_usd)");
    }
  }
  return d;
}

// A top-level key's absolute path of `what`, printable.
Result<std::string> AbsolutePath(const std::string& path, const TomlEntry& e,
                                 std::string_view what) {
  if (e.value.kind != TomlValue::Kind::kString || !e.value.text.starts_with("/") ||
      !IsSafeText(e.value.text)) {
    return TomlErrorAt(path, e.value, e.key, fmt::format("expected the absolute path of {}", what));
  }
  return e.value.text;
}

Status ParseTop(const std::string& path, const TomlTable& top, NotifyFile* file) {
  for (const TomlEntry& e : top.entries) {
    if (e.key == "queue_max") {
      if (e.value.kind != TomlValue::Kind::kInteger || e.value.integer < 10 ||
          e.value.integer > 1'000'000) {
        return TomlErrorAt(path, e.value, e.key,
                           "expected a whole number of notices from 10 to 1000000");
      }
      file->queue_max = e.value.integer;
    } else if (e.key == "retry_max") {
      CGOV_ASSIGN_OR_RETURN(file->retry_max_ms,
                            TomlDurationMs(path, e.value, e.key, 1000, 3'600'000));
    } else if (e.key == "dry_run") {
      CGOV_ASSIGN_OR_RETURN(
          file->dry_run_dir,
          AbsolutePath(path, e, "a directory (each delivery is written there, none is sent)"));
    } else if (e.key == "recipients") {
      CGOV_ASSIGN_OR_RETURN(file->recipients_file, AbsolutePath(path, e, "a recipients file"));
    } else {
      return TomlErrorAt(path, e.line, e.column, e.key,
                         "unknown key (the file takes queue_max, retry_max, recipients, dry_run, "
                         "[[sink]], [[rule]], [[job_report]] and [[digest]] tables)");
    }
  }
  return Status::Ok();
}

Status CheckNames(const std::string& path, const NotifyFile& file,
                  const std::vector<const TomlTable*>& rule_tables) {
  std::set<std::string> sinks, rules;
  for (const NotifySink& s : file.sinks) {
    if (!sinks.insert(s.name).second) {
      return TomlErrorAt(path, s.line, 1, "sink", fmt::format("a second sink named {:?}", s.name));
    }
  }
  for (size_t i = 0; i < file.rules.size(); ++i) {
    const NotifyRule& r = file.rules[i];
    if (!rules.insert(r.name).second) {
      return TomlErrorAt(
          path, r.line, 1, "rule",
          fmt::format("a second rule named {:?} (rules of one kind need a name each)", r.name));
    }
    for (const std::string& s : r.sinks) {
      if (sinks.count(s) == 0) {
        return TomlErrorAt(path, rule_tables[i]->line, rule_tables[i]->column, "sinks",
                           fmt::format("no sink is named {:?}", s));
      }
    }
  }
  return Status::Ok();
}

// A job report and a digest go through e-mail sinks only: those they name, or every one (there
// must be one).
Status CheckMailSinks(const std::string& path, const NotifyFile& file, std::string_view table,
                      int line, std::vector<std::string>* names) {
  if (names->empty()) {
    for (const NotifySink& s : file.sinks) {
      if (s.kind == SinkKind::kEmail) names->push_back(s.name);
    }
    if (names->empty()) {
      return TomlErrorAt(path, line, 1, table, "it is mailed: the file needs an email sink");
    }
  }
  for (const std::string& name : *names) {
    auto sink = std::find_if(file.sinks.begin(), file.sinks.end(),
                             [&](const NotifySink& s) { return s.name == name; });
    if (sink == file.sinks.end() || sink->kind != SinkKind::kEmail) {
      return TomlErrorAt(path, line, 1, "sinks",
                         fmt::format("{:?} is not an email sink of this file", name));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view NotifyRuleKindName(NotifyRuleKind kind) {
  for (const KindName& k : kRuleKinds) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

std::string_view SinkKindName(SinkKind kind) {
  for (const auto& [k, name] : kSinkKinds) {
    if (k == kind) return name;
  }
  return "?";
}

Result<NotifyFile> ParseNotifyFile(std::string_view text, const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::vector<TomlTable> tables, ParseTomlSubset(text, path));
  NotifyFile file;
  file.path = path;
  CGOV_RETURN_IF_ERROR(ParseTop(path, tables.front(), &file));
  std::vector<const TomlTable*> rule_tables;
  for (size_t i = 1; i < tables.size(); ++i) {
    const TomlTable& t = tables[i];
    if (t.name == "sink") {
      if (file.sinks.size() == kMaxNotifySinks) {
        return TomlErrorAt(path, t.line, t.column, "sink",
                           fmt::format("more than {} sinks", kMaxNotifySinks));
      }
      CGOV_ASSIGN_OR_RETURN(NotifySink s, ParseSink(path, t));
      file.sinks.push_back(std::move(s));
    } else if (t.name == "rule") {
      if (file.rules.size() == kMaxNotifyRules) {
        return TomlErrorAt(path, t.line, t.column, "rule",
                           fmt::format("more than {} rules", kMaxNotifyRules));
      }
      CGOV_ASSIGN_OR_RETURN(NotifyRule r, ParseRule(path, t));
      file.rules.push_back(std::move(r));
      rule_tables.push_back(&t);
    } else if (t.name == "job_report") {
      if (file.job_report) {
        return TomlErrorAt(path, t.line, t.column, t.name, "a second [[job_report]] table");
      }
      CGOV_ASSIGN_OR_RETURN(file.job_report, ParseJobReport(path, t));
    } else if (t.name == "digest") {
      if (file.digest) {
        return TomlErrorAt(path, t.line, t.column, t.name, "a second [[digest]] table");
      }
      CGOV_ASSIGN_OR_RETURN(file.digest, ParseDigest(path, t));
    } else {
      return TomlErrorAt(path, t.line, t.column, t.name,
                         "unknown table (the file takes [[sink]], [[rule]], [[job_report]] and "
                         "[[digest]] tables)");
    }
  }
  if (file.sinks.empty() || (file.rules.empty() && !file.job_report && !file.digest)) {
    return TomlErrorAt(path, 1, 1, file.sinks.empty() ? "sink" : "rule",
                       "a notifications file needs at least one [[sink]] and one [[rule]] (or a "
                       "[[job_report]] or a [[digest]])");
  }
  CGOV_RETURN_IF_ERROR(CheckNames(path, file, rule_tables));
  if (file.job_report) {
    CGOV_RETURN_IF_ERROR(
        CheckMailSinks(path, file, "job_report", file.job_report->line, &file.job_report->sinks));
  }
  if (file.digest) {
    CGOV_RETURN_IF_ERROR(
        CheckMailSinks(path, file, "digest", file.digest->line, &file.digest->sinks));
    if (file.recipients_file.empty()) {
      return TomlErrorAt(path, file.digest->line, 1, "digest",
                         "a digest goes to each user and each team's leads, found through a "
                         "recipients file: name it with the top-level key recipients");
    }
  }
  for (const NotifySink& s : file.sinks) {
    if ((s.to_owner || s.to_lead) && file.recipients_file.empty()) {
      return TomlErrorAt(path, s.line, 1, "to",
                         "\"owner\" and \"lead\" are found through a recipients file: name it with "
                         "the top-level key recipients");
    }
  }
  return file;
}

Status ReadSinkUrls(NotifyFile* file) {
  for (NotifySink& s : file->sinks) {
    if (s.kind == SinkKind::kTerminal) continue;
    const std::string what = fmt::format("{}:{}: sink {:?}: url_file", file->path, s.line, s.name);
    CGOV_ASSIGN_OR_RETURN(std::string text, Env::Default()->ReadUserFile(s.url_file, 8192, what));
    struct stat st {};
    if (::stat(s.url_file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      return InvalidArgument(
          fmt::format("{} {}: the URL is a credential, and the file is readable by its group or "
                      "others (mode {:04o}); `chmod 600 {}`",
                      what, s.url_file, st.st_mode & 07777, s.url_file));
    }
    const std::string_view url = Trim(text);
    const bool one_line = url.find_first_of("\r\n \t") == std::string_view::npos && IsSafeText(url);
    const bool email = s.kind == SinkKind::kEmail;
    const bool scheme = email ? url.starts_with("smtp://") || url.starts_with("smtps://")
                              : url.starts_with("https://") || url.starts_with("http://");
    if (!one_line || !scheme || url.size() > 4096) {
      return InvalidArgument(fmt::format("{} {}: expected one {} URL on one line", what, s.url_file,
                                         email ? "smtp:// or smtps://" : "http:// or https://"));
    }
    if (email && !s.starttls && url.starts_with("smtps://")) {
      return InvalidArgument(fmt::format(
          "{} {}: smtps:// is TLS from the start: tls = \"none\" is for a plain smtp:// relay",
          what, s.url_file));
    }
    s.url = std::string(url);
  }
  if (!file->recipients_file.empty()) {
    Result<RecipientsFile> people = ReadRecipientsFile(file->recipients_file);
    if (!people.ok()) return people.status().WithContext(file->path + ": recipients");
    file->recipients = std::make_shared<const Recipients>(std::move(*people));
  }
  return Status::Ok();
}

}  // namespace cgov
