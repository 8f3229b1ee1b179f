// The daemon's live view of its budgets (`cgov daemon --budgets FILE`): each budget's spend in
// its current period on this host, seeded from the history at start and carried on by each
// tick's credits; a new period starts from zero. What /metrics serves as cgov_budget_spent_usd.
//
// Not thread-safe; SharedBudgets (below) is the daemon's thread-safe holder of one.
#ifndef CGOV_ANALYSIS_BUDGET_TRACKER_H_
#define CGOV_ANALYSIS_BUDGET_TRACKER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/budget.h"
#include "store/records.h"

namespace cgov {

class BudgetTracker {
 public:
  // `seeds`: EvaluateBudgets at `as_of_ms` over the history, one per budget of the file.
  BudgetTracker(const std::vector<BudgetStatus>& seeds, int64_t as_of_ms);

  // `ms` of GPU time attributed to `who` by the tick at `ts_ms`, on a GPU priced
  // `price_per_gpu_hour`. A tick before `as_of_ms` is in the seed already and adds nothing (a
  // reopened writer credits the last tick it replayed when the next one comes).
  void Credit(int64_t ts_ms, const IdentityRecord& who, const std::string& hostname,
              MicroUsd price_per_gpu_hour, int64_t ms);

  struct Row {
    const Budget* budget = nullptr;
    PeriodSpan period;
    MicroUsd spent = 0;
  };
  // Each budget's period as of `now_ms` (a period that ended with no credit since reads 0).
  std::vector<Row> Rows(int64_t now_ms) const;

 private:
  struct Tracked {
    Budget budget;
    PeriodSpan period;
    MicroUsd seeded = 0;
    // Credited GPU time by price, priced once when read: one rounding, as the report's.
    std::map<MicroUsd, int64_t> ms_by_price;
    MicroUsd Spent() const;
  };
  int64_t seeded_before_ms_ = 0;
  std::vector<Tracked> tracked_;
  // The budgets of each scope's key (a key may have a monthly and a weekly one), by position in
  // tracked_: a credit costs one key and one look-up per scope the budgets use.
  std::map<HistoryBy, std::map<std::string, std::vector<size_t>, std::less<>>> by_key_;
};

// The daemon's budgets (--budgets), whether or not it serves /metrics: credited by its tick,
// read by /metrics' threads and by its notices. Every call under one lock. Empty until Set.
class SharedBudgets {
 public:
  void Set(BudgetTracker tracker);
  void Credit(int64_t ts_ms, const IdentityRecord& who, const std::string& hostname,
              MicroUsd price_per_gpu_hour, int64_t ms);
  // Calls `read` with each budget's period as of `now_ms`, under the lock (the rows point into
  // the tracker: use them inside `read` only). Not called before Set.
  void Read(int64_t now_ms,
            const std::function<void(const std::vector<BudgetTracker::Row>&)>& read) const;

 private:
  mutable std::mutex mu_;
  std::optional<BudgetTracker> tracker_;
};

}  // namespace cgov

#endif  // CGOV_ANALYSIS_BUDGET_TRACKER_H_
