// Notifications: the --notify TOML file an operator writes, then the rules it accepts run over a
// few ticks. Properties: a refusal names the file and is safe to print; an accepted file has at
// least one sink and one rule, unique names, every rule's sinks among them, thresholds within
// (0, 100) and durations within 30 days; every notice its rules make has a unique id, text safe
// to print, and a body each sink kind renders as JSON. The same text is read as a recipients
// file too (the same TOML subset): an accepted one answers every name, the input's words and
// lines included, with plain addresses only.
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"
#include "notify/mail_message.h"
#include "notify/notice_body.h"
#include "notify/notify_engine.h"
#include "notify/notify_file.h"
#include "notify/recipients.h"
#include "os/log.h"

using namespace cgov;

namespace {

NotifyInput Tick(int64_t now_ms, Phase phase, double util, bool process) {
  NotifyInput in;
  in.now_ms = now_ms;
  in.gpus.push_back({{0, "GPU-0", "H100"}, util, 90.0, phase, 4.0});
  if (process)
    in.processes.push_back({0, 7, true,
                            "b\xc3\xb6"
                            "b",
                            "python", 1000});
  if (now_ms == 0) in.xids.push_back({0, 79, 0});
  return in;
}

// The input as a recipients file: a refusal names it; an answer is a plain address.
void FuzzRecipients(std::string_view text) {
  static const bool quiet = [] {  // the fallback's log line, once per input, is not checked here
    LogOptions options;
    options.level = LogLevel::kError;
    SetLogOptions(options);
    return true;
  }();
  (void)quiet;
  Result<RecipientsFile> file = ParseRecipientsFile(text, "people.toml");
  if (!file.ok()) {
    FUZZ_CHECK(file.status().message().starts_with("people.toml:"));
    FUZZ_CHECK(SafeText(file.status().message()) == file.status().message());
    return;
  }
  std::vector<std::string> names = {"", "root", "1001", "bob"};
  for (const auto& [user, index] : file->by_user) {
    FUZZ_CHECK(index < file->people.size());
    names.push_back(user);
  }
  for (size_t at = 0; at < text.size() && names.size() < 64;) {
    const size_t end = std::min(text.find_first_of(" \n=\"", at), text.size());
    names.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  const Recipients people(std::move(*file));
  for (const std::string& name : names) {
    for (const auto& found : {people.Owner(name), people.Leads(name)}) {
      for (const Recipient& r : found) FUZZ_CHECK(IsMailAddress(r.address));
    }
  }
}

}  // namespace

CGOV_FUZZ_TARGET(notify_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  FuzzRecipients(text);
  Result<NotifyFile> file = ParseNotifyFile(text, "notify.toml");
  if (!file.ok()) {
    const std::string& message = file.status().message();
    FUZZ_CHECK(message.starts_with("notify.toml:"));
    FUZZ_CHECK(SafeText(message) == message);
    return 0;
  }
  FUZZ_CHECK(!file->sinks.empty() && !file->rules.empty());
  std::set<std::string> sinks, rules;
  std::vector<std::string> names;
  for (const NotifySink& s : file->sinks) {
    FUZZ_CHECK(sinks.insert(s.name).second && IsSafeText(s.name) && !s.url_file.empty());
    FUZZ_CHECK(s.timeout_ms >= 100 && s.timeout_ms <= 300'000);
    names.push_back(s.name);
  }
  for (const NotifyRule& r : file->rules) {
    FUZZ_CHECK(rules.insert(r.name).second && IsSafeText(r.name));
    for (const std::string& s : r.sinks) FUZZ_CHECK(sinks.count(s) == 1);
    for (const std::string& u : r.users) FUZZ_CHECK(IsSafeText(u));
    FUZZ_CHECK(r.for_ms >= 0 && r.for_ms <= 30LL * 86'400'000);
    FUZZ_CHECK(r.remind_every_ms >= 0 && r.remind_every_ms <= 30LL * 86'400'000);
    if (r.kind == NotifyRuleKind::kLowUtilization || r.kind == NotifyRuleKind::kMemoryHigh) {
      FUZZ_CHECK(r.threshold_pct > 0 && r.threshold_pct < 100);
    }
  }
  NotifyEngine engine(file->rules, names, "host");
  std::set<std::string> ids;
  const Phase phases[] = {Phase::kIdleHeld, Phase::kIdleHeld, Phase::kUnderutilized,
                          Phase::kTrulyIdle, Phase::kProductive};
  for (int i = 0; i < 5; ++i) {
    const NotifyInput in = Tick(i * 1000, phases[i], i == 4 ? 80 : 0, i < 3);
    for (const Notice& n : engine.Evaluate(in)) {
      FUZZ_CHECK(ids.insert(n.id).second);
      FUZZ_CHECK(IsSafeText(n.summary) && IsSafeText(n.next_step) && !n.sinks.empty());
      for (SinkKind k :
           {SinkKind::kWebhook, SinkKind::kSlack, SinkKind::kTeams, SinkKind::kTerminal}) {
        FUZZ_CHECK(nlohmann::json::accept(NoticeBody(k, n)));
      }
      const std::string mail = NoticeMail(n, "cgov@example.com", {"ops@example.com"});
      FUZZ_CHECK(mail.find("\r\n\r\n") != std::string::npos && mail.ends_with("--\r\n"));
    }
  }
  return 0;
}
