// Turns each tick's view of the GPUs into notices (docs/notifications.md): a rule fires once
// when its condition has held for its `for`, reminds every `remind_every` while it still holds,
// and resolves once when it no longer does. Pure (no clock, no I/O): the daemon hands it each
// tick, and keeps incidents() where a restart finds them (Restore). Not thread-safe.
#ifndef CGOV_NOTIFY_NOTIFY_ENGINE_H_
#define CGOV_NOTIFY_NOTIFY_ENGINE_H_

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "analysis/phases.h"
#include "notify/notice.h"
#include "store/records.h"

namespace cgov {

// One GPU at one tick.
struct NotifyGpu {
  NoticeGpu id;
  std::optional<double> util_pct;    // unknown: no rule about it fires or resolves
  std::optional<double> memory_pct;  // used / total
  std::optional<Phase> phase;
  double usd_per_hour = 0;
};

// One process holding memory on a GPU at that tick.
struct NotifyProcess {
  size_t gpu_pos = 0;  // into NotifyInput::gpus
  uint32_t pid = 0;
  bool compute = false;
  std::string user;  // "" unknown
  std::string command;
  uint64_t mem_mib = 0;
};

struct NotifyXid {
  size_t gpu_pos = 0;
  uint32_t xid = 0;
  int64_t at_ms = 0;
};

// One budget's current period (cgov daemon --budgets: this host's spend).
struct NotifyBudget {
  std::string name;  // "project vision, monthly"
  std::string key;   // "project/vision/month": unique
  double amount_usd = 0;
  double spent_usd = 0;
  std::vector<int> alert_pcts;
};

// One step `cgov daemon --policy` took (docs/policy.md), as the history records it.
struct NotifyPolicyAction {
  std::optional<size_t> gpu_pos;  // into NotifyInput::gpus
  PolicyActionRecord record;
};

struct NotifyInput {
  int64_t now_ms = 0;
  std::vector<NotifyGpu> gpus;
  std::vector<NotifyProcess> processes;
  std::vector<NotifyXid> xids;
  std::vector<NotifyBudget> budgets;
  std::vector<NotifyPolicyAction> policy_actions;
};

class NotifyEngine {
 public:
  // `sinks`: every sink's name, for the rules that name none.
  NotifyEngine(std::vector<NotifyRule> rules, std::vector<std::string> sinks, std::string host);

  // Incidents a previous daemon left open. Those of rules no longer in the file are dropped
  // (returned, so the caller can say so); the others resolve at the first tick that shows
  // their condition over, and remind on their schedule.
  std::vector<Incident> Restore(std::vector<Incident> open);

  // REQUIRES: ticks in increasing now_ms. The notices this tick brings, in rule order.
  std::vector<Notice> Evaluate(const NotifyInput& in);

  // The open incidents by rule and key; changed by Evaluate only when it returns notices.
  const std::map<std::pair<std::string, std::string>, Incident>& incidents() const {
    return incidents_;
  }

 private:
  // What a rule sees of one key at one tick: whether its condition holds, whether it has held
  // long enough to fire, and the incident's fields.
  struct Candidate {
    std::string key;
    bool unknown = false;  // cannot be told this tick: an open incident stays as it is
    bool fires = false;    // held for `for`: opens an incident if none is open
    int64_t since_ms = 0;
    Incident fields;  // gpu, user, pid, command, price, value
  };
  std::vector<Candidate> Candidates(size_t rule_pos, const NotifyInput& in);
  void Streak(size_t rule_pos, const std::string& key, bool holds, int64_t now_ms,
              int64_t* since_ms);
  bool LowUtilization(size_t rule_pos, const NotifyGpu& gpu, int64_t now_ms, double* mean_pct,
                      bool* full);
  Notice Make(const NotifyRule& rule, const Incident& incident, NoticeEvent event,
              int64_t now_ms) const;

  std::vector<NotifyRule> rules_;
  std::vector<std::string> sinks_;
  std::string host_;
  std::map<std::pair<std::string, std::string>, Incident> incidents_;
  // Per rule and key: since when its condition has held (absent: it does not).
  std::map<std::pair<size_t, std::string>, int64_t> streaks_;
  // low_utilization: per rule and GPU, the readings of the trailing `for` (time, utilization).
  struct Window {
    std::deque<std::pair<int64_t, double>> points;
    double sum = 0;
    int64_t first_ms = 0;  // since when the GPU has been in use without a gap
  };
  std::map<std::pair<size_t, std::string>, Window> windows_;
};

// The notice's text: summary and next step, from its fields (rendered for every sink alike).
void WriteNoticeText(Notice* notice);

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTIFY_ENGINE_H_
