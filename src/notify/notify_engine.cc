#include "notify/notify_engine.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/duration.h"

namespace cgov {
namespace {

// The keys a rule sees at a tick: its condition holds, or cannot be told (a lost GPU, a reading
// the driver does not give): an incident of an undecided key neither resolves nor reminds.
enum class Seen { kHolds, kUnknown };

std::string GpuKey(const NotifyGpu& g) { return g.id.uuid; }

double CostUsd(double usd_per_hour, int64_t since_ms, int64_t at_ms) {
  return usd_per_hour * static_cast<double>(std::max<int64_t>(0, at_ms - since_ms)) / 3.6e6;
}

bool InScope(const NotifyRule& rule, const std::string& user) {
  return rule.users.empty() ||
         std::find(rule.users.begin(), rule.users.end(), user) != rule.users.end();
}

}  // namespace

std::string_view NoticeEventName(NoticeEvent e) {
  switch (e) {
    case NoticeEvent::kFiring:
      return "firing";
    case NoticeEvent::kReminder:
      return "reminder";
    case NoticeEvent::kResolved:
      return "resolved";
    case NoticeEvent::kEscalated:
      return "escalated";
  }
  return "?";
}

NotifyEngine::NotifyEngine(std::vector<NotifyRule> rules, std::vector<std::string> sinks,
                           std::string host)
    : rules_(std::move(rules)), sinks_(std::move(sinks)), host_(std::move(host)) {}

std::vector<Incident> NotifyEngine::Restore(std::vector<Incident> open) {
  std::vector<Incident> dropped;
  for (Incident& i : open) {
    const bool known = std::any_of(rules_.begin(), rules_.end(), [&](const NotifyRule& r) {
      return r.name == i.rule && r.kind == i.kind;
    });
    if (!known) {
      dropped.push_back(std::move(i));
      continue;
    }
    auto key = std::pair(i.rule, i.key);
    incidents_[key] = std::move(i);
  }
  return dropped;
}

void NotifyEngine::Streak(size_t rule_pos, const std::string& key, bool holds, int64_t now_ms,
                          int64_t* since_ms) {
  auto at = std::pair(rule_pos, key);
  if (!holds) {
    streaks_.erase(at);
    return;
  }
  *since_ms = streaks_.emplace(at, now_ms).first->second;
}

// Utilization averaged over the trailing `for` of a GPU in use; `full` once it has been in use
// (with readings) for all of that time.
bool NotifyEngine::LowUtilization(size_t rule_pos, const NotifyGpu& gpu, int64_t now_ms,
                                  double* mean_pct, bool* full) {
  const NotifyRule& rule = rules_[rule_pos];
  auto at = std::pair(rule_pos, GpuKey(gpu));
  if (gpu.phase == Phase::kTrulyIdle) {
    windows_.erase(at);
    return false;
  }
  Window& w = windows_[at];
  if (w.points.empty()) w.first_ms = now_ms;
  w.points.emplace_back(now_ms, *gpu.util_pct);
  w.sum += *gpu.util_pct;
  while (w.points.size() > 1 && w.points.front().first < now_ms - rule.for_ms) {
    w.sum -= w.points.front().second;
    w.points.pop_front();
  }
  *mean_pct = w.sum / static_cast<double>(w.points.size());
  *full = now_ms - w.first_ms >= rule.for_ms;
  return *mean_pct < rule.threshold_pct;
}

std::vector<NotifyEngine::Candidate> NotifyEngine::Candidates(size_t rule_pos,
                                                              const NotifyInput& in) {
  const NotifyRule& rule = rules_[rule_pos];
  std::vector<Candidate> out;
  std::set<std::string> holding;
  auto add = [&](std::string key, Seen seen, const NotifyGpu& gpu, double value_pct,
                 bool long_enough = true) -> Candidate& {
    Candidate& c = out.emplace_back();
    c.key = std::move(key);
    c.fields.gpu = gpu.id;
    c.fields.usd_per_hour = gpu.usd_per_hour;
    c.fields.value_pct = value_pct;
    if (seen == Seen::kHolds) {
      holding.insert(c.key);
      Streak(rule_pos, c.key, true, in.now_ms, &c.since_ms);
      c.fires = long_enough && in.now_ms - c.since_ms >= rule.for_ms;
    } else {
      c.unknown = true;
    }
    return c;
  };
  switch (rule.kind) {
    case NotifyRuleKind::kIdleHeld:
      for (const NotifyProcess& p : in.processes) {
        if (p.gpu_pos >= in.gpus.size() || !p.compute || !InScope(rule, p.user)) continue;
        const NotifyGpu& g = in.gpus[p.gpu_pos];
        if (g.phase && *g.phase != Phase::kIdleHeld) continue;
        Candidate& c = add(fmt::format("{}/{}", GpuKey(g), p.pid),
                           g.phase ? Seen::kHolds : Seen::kUnknown, g, g.util_pct.value_or(0));
        c.fields.user = p.user;
        c.fields.pid = p.pid;
        c.fields.command = p.command;
      }
      break;
    case NotifyRuleKind::kTrulyIdle:
      for (const NotifyGpu& g : in.gpus) {
        if (!g.phase)
          add(GpuKey(g), Seen::kUnknown, g, 0);
        else if (*g.phase == Phase::kTrulyIdle)
          add(GpuKey(g), Seen::kHolds, g, g.util_pct.value_or(0));
      }
      break;
    case NotifyRuleKind::kMemoryHigh:
      for (const NotifyGpu& g : in.gpus) {
        if (!g.memory_pct)
          add(GpuKey(g), Seen::kUnknown, g, 0);
        else if (*g.memory_pct >= rule.threshold_pct)
          add(GpuKey(g), Seen::kHolds, g, *g.memory_pct);
      }
      break;
    case NotifyRuleKind::kLowUtilization:
      for (const NotifyGpu& g : in.gpus) {
        double mean = 0;
        bool full = false;
        if (!g.util_pct || !g.phase)
          add(GpuKey(g), Seen::kUnknown, g, 0);
        else if (LowUtilization(rule_pos, g, in.now_ms, &mean, &full)) {
          add(GpuKey(g), Seen::kHolds, g, mean, full);
        }
      }
      break;
    case NotifyRuleKind::kXid:
    case NotifyRuleKind::kPolicy:
      break;  // events, not conditions: Evaluate sends them as they come
    case NotifyRuleKind::kBudget:
      // One incident per budget and alert threshold reached; a new period's spend starts
      // again below them, which resolves it.
      for (const NotifyBudget& b : in.budgets) {
        const double pct = b.amount_usd > 0 ? 100 * b.spent_usd / b.amount_usd : 0;
        for (int alert : b.alert_pcts) {
          if (pct < alert) continue;
          Candidate& c = out.emplace_back();
          c.key = fmt::format("{}/{}", b.key, alert);
          holding.insert(c.key);
          Streak(rule_pos, c.key, true, in.now_ms, &c.since_ms);
          c.fires = in.now_ms - c.since_ms >= rule.for_ms;
          c.fields.value_pct = pct;
          c.fields.budget = b.name;
          c.fields.budget_usd = b.amount_usd;
          c.fields.spent_usd = b.spent_usd;
          c.fields.threshold_pct = alert;
        }
      }
      break;
  }
  // A key not holding this tick starts its streak again when it next holds.
  for (auto it = streaks_.lower_bound({rule_pos, ""});
       it != streaks_.end() && it->first.first == rule_pos;) {
    it = holding.count(it->first.second) > 0 ? std::next(it) : streaks_.erase(it);
  }
  return out;
}

Notice NotifyEngine::Make(const NotifyRule& rule, const Incident& i, NoticeEvent event,
                          int64_t now_ms) const {
  Notice n;
  n.event = event;
  n.rule = rule.name;
  n.kind = rule.kind;
  n.host = host_;
  n.at_ms = now_ms;
  n.since_ms = i.since_ms;
  n.gpu = i.gpu;
  n.user = i.user;
  n.pid = i.pid;
  n.command = i.command;
  n.cost_usd = CostUsd(i.usd_per_hour, i.since_ms, now_ms);
  if (rule.kind != NotifyRuleKind::kXid) n.value_pct = i.value_pct;
  if (rule.kind == NotifyRuleKind::kLowUtilization || rule.kind == NotifyRuleKind::kMemoryHigh) {
    n.threshold_pct = rule.threshold_pct;
  }
  if (rule.kind == NotifyRuleKind::kBudget) {
    n.gpu.reset();
    n.threshold_pct = i.threshold_pct;
    n.budget = i.budget;
    n.budget_usd = i.budget_usd;
    n.spent_usd = i.spent_usd;
  }
  const std::string which = event == NoticeEvent::kReminder
                                ? fmt::format("reminder-{}", i.reminders)
                                : std::string(NoticeEventName(event));
  n.id = fmt::format("{}/{}/{}/{}/{}", host_, rule.name, i.key, i.opened_ms, which);
  n.sinks = rule.sinks.empty() ? sinks_ : rule.sinks;
  n.to_leads = rule.lead_after_ms == 0 || event == NoticeEvent::kEscalated || i.escalated_ms > 0;
  WriteNoticeText(&n);
  return n;
}

std::vector<Notice> NotifyEngine::Evaluate(const NotifyInput& in) {
  std::vector<Notice> notices;
  for (size_t r = 0; r < rules_.size(); ++r) {
    const NotifyRule& rule = rules_[r];
    if (rule.kind == NotifyRuleKind::kXid) {
      for (const NotifyXid& x : in.xids) {
        if (x.gpu_pos >= in.gpus.size()) continue;
        Incident i;
        i.gpu = in.gpus[x.gpu_pos].id;
        i.key = fmt::format("{}/xid{}", GpuKey(in.gpus[x.gpu_pos]), x.xid);
        i.since_ms = i.opened_ms = x.at_ms;
        Notice& n = notices.emplace_back(Make(rule, i, NoticeEvent::kFiring, in.now_ms));
        n.xid = x.xid;
        WriteNoticeText(&n);
      }
      continue;
    }
    if (rule.kind == NotifyRuleKind::kPolicy) {
      for (const NotifyPolicyAction& a : in.policy_actions) {
        const PolicyActionRecord& step = a.record;
        const bool gpu_known = a.gpu_pos && *a.gpu_pos < in.gpus.size();
        Incident i;
        if (gpu_known) i.gpu = in.gpus[*a.gpu_pos].id;
        i.key = fmt::format("{}/{}/{}/{}", step.policy, step.pid, step.action, step.ts_ms);
        i.since_ms = step.ts_ms - step.idle_held_ms;
        i.opened_ms = step.ts_ms;
        i.user = step.user;
        i.pid = step.pid;
        i.command = step.command;
        Notice& n = notices.emplace_back(Make(rule, i, NoticeEvent::kFiring, in.now_ms));
        if (!gpu_known) n.gpu.reset();
        n.value_pct.reset();
        n.policy = step.policy;
        n.policy_action = step.action;
        n.policy_outcome = step.outcome;
        WriteNoticeText(&n);
      }
      continue;
    }
    std::map<std::string, const Candidate*> seen;
    const std::vector<Candidate> candidates = Candidates(r, in);
    for (const Candidate& c : candidates) seen[c.key] = &c;
    // Open incidents first (their keys were seen before), then new ones: a key that resolved
    // cannot open again in the same tick.
    for (auto it = incidents_.lower_bound({rule.name, ""});
         it != incidents_.end() && it->first.first == rule.name;) {
      Incident& i = it->second;
      auto c = seen.find(i.key);
      if (c == seen.end()) {
        notices.push_back(Make(rule, i, NoticeEvent::kResolved, in.now_ms));
        it = incidents_.erase(it);
        continue;
      }
      if (!c->second->unknown) {
        i.value_pct = c->second->fields.value_pct;
        i.spent_usd = c->second->fields.spent_usd;
        // The ladder's T2, once: the lead is told (and the owner again); the next reminder
        // counts from it.
        if (rule.lead_after_ms > 0 && i.escalated_ms == 0 &&
            in.now_ms - i.since_ms >= rule.lead_after_ms) {
          i.escalated_ms = i.last_notice_ms = in.now_ms;
          notices.push_back(Make(rule, i, NoticeEvent::kEscalated, in.now_ms));
        } else if (rule.remind_every_ms > 0 &&
                   in.now_ms - i.last_notice_ms >= rule.remind_every_ms) {
          ++i.reminders;
          i.last_notice_ms = in.now_ms;
          notices.push_back(Make(rule, i, NoticeEvent::kReminder, in.now_ms));
        }
      }
      seen.erase(c);
      ++it;
    }
    for (const auto& [key, c] : seen) {
      if (!c->fires) continue;
      Incident i = c->fields;
      i.rule = rule.name;
      i.kind = rule.kind;
      i.key = key;
      i.since_ms = c->since_ms;
      i.opened_ms = i.last_notice_ms = in.now_ms;
      notices.push_back(Make(rule, i, NoticeEvent::kFiring, in.now_ms));
      incidents_[{rule.name, key}] = std::move(i);
    }
  }
  return notices;
}

}  // namespace cgov
