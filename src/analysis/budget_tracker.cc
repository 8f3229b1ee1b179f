#include "analysis/budget_tracker.h"

#include <algorithm>
#include <array>

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
    tracked_.push_back(std::move(t));
    if (std::find(scopes_.begin(), scopes_.end(), s.budget.scope) == scopes_.end()) {
      scopes_.push_back(s.budget.scope);
    }
  }
}

MicroUsd BudgetTracker::Tracked::Spent() const {
  MicroUsd spent = seeded;
  for (const auto& [price, ms] : ms_by_price) spent = AddUsd(spent, CostOf(price, ms));
  return spent;
}

void BudgetTracker::Credit(int64_t ts_ms, const IdentityRecord& who, const std::string& hostname,
                           MicroUsd price_per_gpu_hour, int64_t ms) {
  if (ms <= 0 || tracked_.empty() || ts_ms < seeded_before_ms_) return;
  std::array<std::string, 4> keys;  // by position in scopes_ (at most project, team, ns, user)
  for (size_t i = 0; i < scopes_.size() && i < keys.size(); ++i) {
    keys[i] = HistoryKey(scopes_[i], who, hostname);
  }
  for (Tracked& t : tracked_) {
    const size_t scope = static_cast<size_t>(
        std::find(scopes_.begin(), scopes_.end(), t.budget.scope) - scopes_.begin());
    if (scope >= keys.size() || keys[scope] != t.budget.name) continue;
    if (ts_ms >= t.period.end_ms) {  // a new period: its spend starts from nothing
      t.period = PeriodOf(t.budget.period, ts_ms);
      t.seeded = 0;
      t.ms_by_price.clear();
    }
    if (ts_ms < t.period.start_ms) continue;  // a clock stepped back across the boundary
    t.ms_by_price[price_per_gpu_hour] += ms;
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

}  // namespace cgov
