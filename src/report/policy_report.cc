#include "report/policy_report.h"

#include <fmt/format.h>

#include "core/duration.h"
#include "core/text.h"
#include "core/time_format.h"
#include "report/html.h"

namespace cgov {
namespace {

using nlohmann::json;

std::string Gpu(const HistorySummary::PolicyAction& a) {
  return a.gpu_index >= 0 ? std::to_string(a.gpu_index) : "?";
}

std::string IdleFor(const PolicyActionRecord& r) {
  return FormatDuration(std::chrono::milliseconds(r.idle_held_ms));
}

std::vector<std::string> Cells(const HistorySummary::PolicyAction& a) {
  const PolicyActionRecord& r = a.record;
  return {FormatMinuteUtc(r.ts_ms),
          SafeText(r.policy),
          r.action,
          Gpu(a),
          SafeText(r.user.empty() ? "?" : r.user),
          std::to_string(r.pid),
          SafeText(r.command),
          IdleFor(r),
          SafeText(r.outcome)};
}

const char* const kHeaders[] = {"When", "Policy",  "Action",    "GPU",    "User",
                                "PID",  "Command", "Idle-held", "Outcome"};
constexpr char kNote[] =
    "Each step cgov daemon --policy took (would_stop: a dry run), and each of a --notify "
    "ladder's (told_user, told_lead), kept in the history database.";

}  // namespace

std::string PolicyActionsText(const HistorySummary& s, const TextStyle& st) {
  if (s.policy_actions.empty()) return "";
  std::vector<std::vector<std::string>> rows = {
      std::vector<std::string>(std::begin(kHeaders), std::end(kHeaders))};
  for (const auto& a : s.policy_actions) rows.push_back(Cells(a));
  return TextHeading(fmt::format("Policy actions ({})", s.policy_actions.size()), st) +
         TextTable(rows, "lllrlrlrl", st.markdown) + "\n" + kNote + "\n";
}

std::string PolicyActionsHtml(const HistorySummary& s) {
  if (s.policy_actions.empty()) return "";
  html::Table t;
  t.caption = fmt::format("Policy actions ({})", s.policy_actions.size());
  t.headers.assign(std::begin(kHeaders), std::end(kHeaders));
  t.numeric = {false, false, false, true, false, true, false, true, false};
  for (const auto& a : s.policy_actions) {
    std::vector<std::string> row;
    for (const std::string& cell : Cells(a)) row.push_back(html::Esc(cell));
    t.rows.push_back(std::move(row));
  }
  return "<section id=\"policy-actions\"><h2>Policy actions</h2>" + t.Render() +
         "<p class=\"muted\">" + html::Esc(kNote) + "</p></section>\n";
}

json PolicyActionsJson(const HistorySummary& s) {
  json out = json::array();
  for (const auto& a : s.policy_actions) {
    const PolicyActionRecord& r = a.record;
    out.push_back({{"at", FormatRfc3339Utc(r.ts_ms * 1'000'000)},
                   {"policy", SafeText(r.policy)},
                   {"action", r.action},
                   {"gpu_index", a.gpu_index >= 0 ? json(a.gpu_index) : json(nullptr)},
                   {"pid", r.pid},
                   {"user", r.user.empty() ? json(nullptr) : json(SafeText(r.user))},
                   {"command", SafeText(r.command)},
                   {"idle_held_seconds", static_cast<double>(r.idle_held_ms) / 1000},
                   {"outcome", SafeText(r.outcome)},
                   {"uids", r.uids.empty() ? json(nullptr) : json(r.uids)}});
  }
  return out;
}

}  // namespace cgov
