#include "notify/notice_body.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "core/time_format.h"
#include "notify/mail_message.h"

namespace cgov {
namespace {

using Json = nlohmann::ordered_json;

std::string Rfc3339(int64_t ms) { return FormatRfc3339Utc(ms * 1'000'000); }

Json WebhookJson(const Notice& n) {
  Json j;
  j["schema"] = kNoticeSchema;
  j["id"] = n.id;
  j["event"] = NoticeEventName(n.event);
  j["rule"] = n.rule;
  j["kind"] = NotifyRuleKindName(n.kind);
  j["host"] = n.host;
  j["at"] = Rfc3339(n.at_ms);
  j["since"] = Rfc3339(n.since_ms);
  j["duration_seconds"] = static_cast<double>(std::max<int64_t>(0, n.at_ms - n.since_ms)) / 1000;
  if (n.gpu)
    j["gpu"] = {{"index", n.gpu->index}, {"uuid", n.gpu->uuid}, {"name", n.gpu->name}};
  else
    j["gpu"] = nullptr;
  j["user"] = n.user.empty() ? Json(nullptr) : Json(n.user);
  j["pid"] = n.pid == 0 ? Json(nullptr) : Json(n.pid);
  j["command"] = n.command.empty() ? Json(nullptr) : Json(n.command);
  j["cost_usd"] = std::round(n.cost_usd * 1e6) / 1e6;
  j["value_pct"] = n.value_pct ? Json(std::round(*n.value_pct * 10) / 10) : Json(nullptr);
  j["threshold_pct"] = n.threshold_pct ? Json(*n.threshold_pct) : Json(nullptr);
  j["xid"] = n.xid == 0 ? Json(nullptr) : Json(n.xid);
  j["policy"] =
      n.policy.empty()
          ? Json(nullptr)
          : Json{{"name", n.policy}, {"action", n.policy_action}, {"outcome", n.policy_outcome}};
  j["budget"] = n.budget.empty() ? Json(nullptr)
                                 : Json{{"name", n.budget},
                                        {"amount_usd", std::round(n.budget_usd * 100) / 100},
                                        {"spent_usd", std::round(n.spent_usd * 100) / 100}};
  j["summary"] = n.summary;
  j["next_step"] = n.next_step;
  return j;
}

// Slack's mrkdwn takes &, < and > as markup: escaped as its documentation asks.
std::string SlackEscaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

Json SlackJson(const Notice& n) {
  const char* mark = n.event == NoticeEvent::kResolved ? ":white_check_mark:" : ":warning:";
  return Json{{"text", std::string(mark) + " " + SlackEscaped(n.summary) + "\n" +
                           SlackEscaped(n.next_step)}};
}

Json TeamsJson(const Notice& n) {
  Json facts = Json::array();
  auto fact = [&](const char* title, const std::string& value) {
    if (!value.empty()) facts.push_back({{"title", title}, {"value", value}});
  };
  fact("Event", std::string(NoticeEventName(n.event)));
  fact("Rule", n.rule);
  fact("Host", n.host);
  if (n.gpu) fact("GPU", std::to_string(n.gpu->index) + " " + n.gpu->uuid);
  fact("User", n.user);
  if (n.pid != 0) fact("PID", std::to_string(n.pid));
  fact("Command", n.command);
  fact("Since", Rfc3339(n.since_ms));
  Json card = {
      {"$schema", "http://adaptivecards.io/schemas/adaptive-card.json"},
      {"type", "AdaptiveCard"},
      {"version", "1.4"},
      {"body",
       Json::array(
           {{{"type", "TextBlock"}, {"text", n.summary}, {"wrap", true}, {"weight", "Bolder"}},
            {{"type", "FactSet"}, {"facts", facts}},
            {{"type", "TextBlock"}, {"text", n.next_step}, {"wrap", true}}})}};
  return Json{
      {"type", "message"},
      {"attachments", Json::array({{{"contentType", "application/vnd.microsoft.card.adaptive"},
                                    {"contentUrl", nullptr},
                                    {"content", card}}})}};
}

}  // namespace

std::string NoticeBody(SinkKind sink, const Notice& notice) {
  switch (sink) {
    case SinkKind::kWebhook:
      return WebhookJson(notice).dump();
    case SinkKind::kSlack:
      return SlackJson(notice).dump();
    case SinkKind::kTeams:
      return TeamsJson(notice).dump();
    case SinkKind::kEmail:
      break;  // needs its addresses: NoticeBody(sink, notice)
    case SinkKind::kTerminal:
      return Json{{"user", notice.user},
                  {"text", "cgov: " + notice.summary + "\n" + notice.next_step}}
          .dump();
  }
  return "{}";
}

std::string NoticeBody(const NotifySink& sink, const Notice& notice) {
  if (sink.kind == SinkKind::kEmail) return NoticeMail(notice, sink.from, sink.to);
  return NoticeBody(sink.kind, notice);
}

}  // namespace cgov
