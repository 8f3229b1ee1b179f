// What a notice says to people: one summary line and one next step, the same in every sink.
#include <fmt/format.h>

#include "core/duration.h"
#include "notify/notify_engine.h"

namespace cgov {
namespace {

std::string Gpu(const Notice& n) {
  if (!n.gpu) return "a GPU";
  return n.gpu->name.empty() ? fmt::format("GPU {}", n.gpu->index)
                             : fmt::format("GPU {} ({})", n.gpu->index, n.gpu->name);
}

std::string Holder(const Notice& n) {
  const std::string who = n.user.empty() ? "a process of unknown user" : n.user + "'s process";
  return n.command.empty() ? fmt::format("{} {}", who, n.pid)
                           : fmt::format("{} {} ({})", who, n.pid, n.command);
}

// The condition, as "<what> for <how long>" reads: "has held it idle", ...
std::string Condition(const Notice& n) {
  const std::string gpu = Gpu(n);
  switch (n.kind) {
    case NotifyRuleKind::kIdleHeld:
      return fmt::format("{} holds memory on {} while it computes nothing", Holder(n), gpu);
    case NotifyRuleKind::kTrulyIdle:
      return fmt::format("{} runs nothing at all", gpu);
    case NotifyRuleKind::kLowUtilization:
      return fmt::format("{} averages {:.0f}% utilization (the rule: below {:.0f}%)", gpu,
                         n.value_pct.value_or(0), n.threshold_pct.value_or(0));
    case NotifyRuleKind::kMemoryHigh:
      return fmt::format("{} memory is {:.0f}% full (the rule: above {:.0f}%)", gpu,
                         n.value_pct.value_or(0), n.threshold_pct.value_or(0));
    case NotifyRuleKind::kXid:
      return fmt::format("the driver reported Xid {} on {}", n.xid, gpu);
    case NotifyRuleKind::kPolicy:
      return fmt::format(
          "policy {:?}, {}: {} on {}, idle-held for {}: {}", n.policy, n.policy_action, Holder(n),
          gpu, FormatDuration(std::chrono::milliseconds(n.at_ms - n.since_ms)), n.policy_outcome);
    case NotifyRuleKind::kBudget:
      return fmt::format(
          "the {} budget of ${:.2f} is {:.0f}% spent on this host (${:.2f}; its {:.0f}% alert)",
          n.budget, n.budget_usd, n.value_pct.value_or(0), n.spent_usd,
          n.threshold_pct.value_or(0));
  }
  return "";
}

std::string NextStep(const Notice& n) {
  if (n.event == NoticeEvent::kResolved) return "Nothing: the condition is over.";
  if (n.event == NoticeEvent::kEscalated) {
    return fmt::format(
        "Its owner was told when it began and has not stopped it: ask {} to save its work and stop "
        "it (pid {}), before the policy does, if one is set.",
        n.user.empty() ? "its owner" : n.user, n.pid);
  }
  switch (n.kind) {
    case NotifyRuleKind::kIdleHeld:
      return fmt::format(
          "If it will not compute again soon, save its work and stop it (pid {}): that frees the "
          "GPU for others.",
          n.pid);
    case NotifyRuleKind::kTrulyIdle:
      return "Schedule work on it, or stop paying for it (stop the instance, scale the node pool "
             "down).";
    case NotifyRuleKind::kLowUtilization:
      return "Find what starves it: data loading (more DataLoader workers, DALI), small batches, "
             "or share it (MPS, MIG); `cgov report` names what it sees.";
    case NotifyRuleKind::kMemoryHigh:
      return "The next allocation may fail (out of memory): lower the batch size or use "
             "activation checkpointing.";
    case NotifyRuleKind::kXid:
      return "Look the Xid up in NVIDIA's Xid catalog and run `cgov doctor`; repeated Xids call "
             "for draining the node.";
    case NotifyRuleKind::kPolicy:
      if (n.policy_action == "would_stop") {
        return "A dry run: nothing was signalled. Without --policy-dry-run the process would be "
               "stopped.";
      }
      if (n.policy_action == "sigterm") {
        return "Save what you need now: SIGKILL follows after the policy's grace if it still "
               "runs.";
      }
      if (n.policy_action == "sigkill" || n.policy_action == "exited") {
        return "The GPU is free; start the work again when it is ready to compute.";
      }
      return "Nothing more will be done to this process.";
    case NotifyRuleKind::kBudget:
      return "See who spends it and its forecast: `cgov report --budgets FILE --by` the budget's "
             "scope.";
  }
  return "";
}

}  // namespace

void WriteNoticeText(Notice* n) {
  const std::string lasted =
      FormatDuration(std::chrono::milliseconds(std::max<int64_t>(0, n->at_ms - n->since_ms)));
  const std::string cost = n->cost_usd > 0 ? fmt::format(", ${:.2f}", n->cost_usd) : "";
  switch (n->event) {
    case NoticeEvent::kFiring:
      n->summary = n->kind == NotifyRuleKind::kXid || n->kind == NotifyRuleKind::kBudget ||
                           n->kind == NotifyRuleKind::kPolicy
                       ? fmt::format("{}: {}", n->host, Condition(*n))
                       : fmt::format("{}: {}, for {}{}", n->host, Condition(*n), lasted, cost);
      break;
    case NoticeEvent::kReminder:
      n->summary = fmt::format("{}: still, {}, for {}{}", n->host, Condition(*n), lasted, cost);
      break;
    case NoticeEvent::kResolved:
      n->summary = fmt::format("{}: resolved after {}{}: {}", n->host, lasted, cost, Condition(*n));
      break;
    case NoticeEvent::kEscalated:
      n->summary = fmt::format("{}: escalated to the lead: {}, for {}{}", n->host, Condition(*n),
                               lasted, cost);
      break;
  }
  n->next_step = NextStep(*n);
}

}  // namespace cgov
