// A notice: what `cgov daemon --notify` tells the people who can act (docs/notifications.md,
// the webhook body's schema docs/notice.schema.json), and the open incident it belongs to.
#ifndef CGOV_NOTIFY_NOTICE_H_
#define CGOV_NOTIFY_NOTICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "notify/notify_file.h"

namespace cgov {

// kEscalated: an idle_held rule's ladder reached lead_after (T2): the owner's lead is told.
enum class NoticeEvent { kFiring, kReminder, kResolved, kEscalated };
// "firing", "reminder", "resolved", "escalated"
std::string_view NoticeEventName(NoticeEvent e);

struct NoticeGpu {
  uint32_t index = 0;
  std::string uuid;
  std::string name;
  bool operator==(const NoticeGpu&) const = default;
};

// A condition that fired and has not resolved: one per rule and key (a process on a GPU, a
// GPU). Kept in the notifications state database, so a restart neither repeats its notice nor
// forgets to resolve it.
struct Incident {
  std::string rule;  // the rule's name
  NotifyRuleKind kind = NotifyRuleKind::kIdleHeld;
  std::string key;        // what it is about, unique within the rule ("GPU-…/4242", "GPU-…")
  int64_t since_ms = 0;   // when the condition began
  int64_t opened_ms = 0;  // when it fired
  int64_t last_notice_ms = 0;  // the firing notice or the latest reminder
  int reminders = 0;
  int64_t escalated_ms = 0;  // the ladder's lead was told (0: not yet, or no ladder)
  NoticeGpu gpu;
  std::string user;
  uint32_t pid = 0;
  std::string command;
  double usd_per_hour = 0;  // the GPU's price, for the cost so far
  double value_pct = 0;     // the latest reading the rule compares (utilization, memory)
  std::string budget;       // kBudget: its name, amount and spend
  double budget_usd = 0, spent_usd = 0, threshold_pct = 0;
  bool operator==(const Incident&) const = default;
};

struct Notice {
  std::string id;  // unique and stable: a receiver that sees it twice has seen one notice
  NoticeEvent event = NoticeEvent::kFiring;
  std::string rule;
  NotifyRuleKind kind = NotifyRuleKind::kIdleHeld;
  std::string host;
  int64_t at_ms = 0;
  int64_t since_ms = 0;
  std::optional<NoticeGpu> gpu;
  std::string user;  // "" unknown
  uint32_t pid = 0;  // 0: not about one process
  std::string command;
  double cost_usd = 0;  // the GPU's price over since..at
  std::optional<double> value_pct, threshold_pct;
  uint32_t xid = 0;
  std::string budget;                                 // kBudget: "project vision, monthly"
  std::string policy, policy_action, policy_outcome;  // kPolicy
  double budget_usd = 0, spent_usd = 0;
  std::string summary;             // one line, for people
  std::string next_step;           // the one thing to do
  std::vector<std::string> sinks;  // where it goes
  // An email sink's "lead" is sent it: every notice of a rule without a ladder; with one
  // (lead_after), the escalation and the notices after it.
  bool to_leads = true;
};

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTICE_H_
