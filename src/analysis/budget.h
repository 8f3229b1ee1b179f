// Budgets: what a project, team, namespace or user may spend on GPU time in a calendar month or
// an ISO week (UTC); what it has spent so far, a linear forecast to the period's end, and when it
// crosses. The file format and the forecast are documented in docs/budgets.md.
//
// Spend is the GPU time a key's processes were attributed (the report's "Who" cost, the
// estimate showback's rows), priced per GPU: the same micro-dollars, so a budget's spend equals
// `cgov report --by SCOPE --since PERIOD-START` for its key.
#ifndef CGOV_ANALYSIS_BUDGET_H_
#define CGOV_ANALYSIS_BUDGET_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/history_by.h"
#include "core/money.h"

namespace cgov {

struct HistoryInput;  // analysis/history_summary.h

enum class BudgetPeriod { kMonth, kWeek };
const char* BudgetPeriodName(BudgetPeriod period);  // "month", "week"

struct Budget {
  HistoryBy scope = HistoryBy::kProject;  // kProject, kTeam, kNamespace or kUser
  std::string name;                       // the key's value: "vision"
  BudgetPeriod period = BudgetPeriod::kMonth;
  MicroUsd amount = 0;          // > 0
  std::vector<int> alert_pcts;  // ascending, unique, each 1..1000
  int line = 0;                 // its [[budget]] header's line in the file
};

struct BudgetFile {
  std::string path;
  int forecast_days = 7;  // the trailing window the forecast is linear on, 1..90
  std::vector<Budget> budgets;
};

inline constexpr int kDefaultAlertPcts[] = {50, 80, 100};
inline constexpr size_t kMaxBudgets = 10'000;

// Parses a budgets file's TOML text. Every error names `path:line:column` and the field; unknown
// keys, a budget given twice (same scope, name and period), a non-positive or fractional-cent
// amount are errors. Pure.
Result<BudgetFile> ParseBudgets(std::string_view text, const std::string& path);

// [start, end) in Unix milliseconds.
struct PeriodSpan {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

// The calendar month, or the ISO week (Monday 00:00), in UTC, that holds `at_ms`.
PeriodSpan PeriodOf(BudgetPeriod period, int64_t at_ms);

// The earliest time EvaluateBudgets reads at `as_of_ms`: the earliest period start, or the
// forecast's trailing window's start when that is earlier.
int64_t BudgetDataStartMs(const BudgetFile& file, int64_t as_of_ms);

struct BudgetStatus {
  Budget budget;
  PeriodSpan period;
  int64_t as_of_ms = 0;
  MicroUsd spent = 0;  // attributed in [period.start_ms, as_of_ms)
  double spent_pct = 0;
  int alert_pct = 0;  // the highest alert threshold spent has reached; 0 for none
  // The hour (its start) in which spend reached the amount; unset while under it.
  std::optional<int64_t> crossed_hour_ms;
  // The forecast: spend in the trailing window [basis_start_ms, as_of_ms), as a rate carried on
  // to the period's end. Unset with less than an hour of data in that window.
  int64_t basis_start_ms = 0;
  MicroUsd basis_spent = 0;
  std::optional<MicroUsd> per_day;
  std::optional<MicroUsd> forecast;  // at period.end_ms
  double forecast_pct = 0;
  // When the forecast reaches the amount, if before the period ends and not yet crossed.
  std::optional<int64_t> crosses_ms;
};

// Each budget's status at `as_of_ms` from `in`'s hourly buckets, which must cover
// [BudgetDataStartMs(file, as_of_ms), as_of_ms); `gpu_prices` (per GPU-hour, by GPU id) as the
// summary priced them: a GPU without one adds nothing. Pure.
std::vector<BudgetStatus> EvaluateBudgets(const BudgetFile& file, const HistoryInput& in,
                                          const std::map<uint32_t, MicroUsd>& gpu_prices,
                                          int64_t as_of_ms);

// Shows `status`'s spend as `shown` (the cents a report's "Who" allocated for the same key and
// window, which differ from the budget's own micro-dollars by less than a cent): the percentage,
// the alert and the forecast follow it, so that one key's spend is one figure in every table.
void ShowSpentAs(MicroUsd shown, BudgetStatus* status);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_BUDGET_H_
