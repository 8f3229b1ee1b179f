#include "analysis/budget_tracker.h"

#include "analysis/showback.h"

namespace cgov {

BudgetTracker::BudgetTracker(const std::vector<BudgetStatus>& seeds, int64_t as_of_ms)
    : seeded_before_ms_(as_of_ms) {
  for (const BudgetStatus& s : seeds) {
    Tracked t;
    t.budget = s.budget;
    t.period = PeriodOf(s.budget.period, as_of_ms);
    // Seeded up to a period's very end: the credits from now on belong to the next one.
    if (t.period.start_ms == s.period.start_ms) t.seeded = s.spent;
    by_key_[t.budget.scope][t.budget.name].push_back(tracked_.size());
    tracked_.push_back(std::move(t));
  }
}

MicroUsd BudgetTracker::Tracked::Spent() const {
  MicroUsd spent = seeded;
  for (const auto& [price, ms] : ms_by_price) spent = AddUsd(spent, CostOf(price, ms));
  return spent;
}

void BudgetTracker::Credit(int64_t ts_ms, const IdentityRecord& who, const std::string& hostname,
                           MicroUsd price_per_gpu_hour, int64_t ms) {
  if (ms <= 0 || ts_ms < seeded_before_ms_) return;
  for (const auto& [scope, keys] : by_key_) {
    auto it = keys.find(HistoryKey(scope, who, hostname));
    if (it == keys.end()) continue;
    for (size_t i : it->second) {
      Tracked& t = tracked_[i];
      if (ts_ms >= t.period.end_ms) {  // a new period: its spend starts from nothing
        t.period = PeriodOf(t.budget.period, ts_ms);
        t.seeded = 0;
        t.ms_by_price.clear();
      }
      if (ts_ms < t.period.start_ms) continue;  // a clock stepped back across the boundary
      t.ms_by_price[price_per_gpu_hour] += ms;
    }
  }
}

std::vector<BudgetTracker::Row> BudgetTracker::Rows(int64_t now_ms) const {
  std::vector<Row> rows;
  for (const Tracked& t : tracked_) {
    if (now_ms >= t.period.end_ms) {
      rows.push_back({&t.budget, PeriodOf(t.budget.period, now_ms), 0});
    } else {
      rows.push_back({&t.budget, t.period, t.Spent()});
    }
  }
  return rows;
}

void SharedBudgets::Set(BudgetTracker tracker) {
  std::lock_guard lock(mu_);
  tracker_ = std::move(tracker);
}

void SharedBudgets::Credit(int64_t ts_ms, const IdentityRecord& who, const std::string& hostname,
                           MicroUsd price_per_gpu_hour, int64_t ms) {
  std::lock_guard lock(mu_);
  if (tracker_) tracker_->Credit(ts_ms, who, hostname, price_per_gpu_hour, ms);
}

void SharedBudgets::Read(
    int64_t now_ms, const std::function<void(const std::vector<BudgetTracker::Row>&)>& read) const {
  std::lock_guard lock(mu_);
  if (tracker_) read(tracker_->Rows(now_ms));
}

}  // namespace cgov
