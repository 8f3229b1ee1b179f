#include "analysis/budget.h"

#include <algorithm>
#include <chrono>
#include <set>

#include <date/date.h>

#include "analysis/history_summary.h"
#include "analysis/showback.h"
#include "core/time_format.h"
#include "store/records.h"

namespace cgov {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Spend by hour of each budgeted key of one scope.
using HourlySpend = std::map<int64_t, MicroUsd>;

std::map<std::string, HourlySpend> SpendByKey(const HistoryInput& in, HistoryBy scope,
                                              const std::set<std::string>& names,
                                              const std::map<uint32_t, MicroUsd>& gpu_prices) {
  std::map<std::string, HourlySpend> spend;
  const IdentityRecord none;
  for (const HourBucket& b : in.hours) {
    for (const auto& [key, h] : b.identities) {
      auto price = gpu_prices.find(key.second);
      if (price == gpu_prices.end()) continue;
      auto id = in.identities.find(key.first);
      std::string name =
          HistoryKey(scope, id != in.identities.end() ? id->second : none, in.hostname);
      if (!names.count(name)) continue;
      int64_t ms = h.attributed_unknown_ms;
      for (int64_t phase_ms : h.attributed_ms) ms += phase_ms;
      MicroUsd& hour = spend[std::move(name)][b.hour];
      hour = AddUsd(hour, CostOf(price->second, ms));
    }
  }
  return spend;
}

// a × b / c for non-negative a, b and positive c, saturating.
MicroUsd Scale(MicroUsd a, int64_t b, int64_t c) {
  const Int128 v = Int128{a} * b / c;
  return v > std::numeric_limits<MicroUsd>::max() ? std::numeric_limits<MicroUsd>::max()
                                                  : static_cast<MicroUsd>(v);
}

void Forecast(const HourlySpend& hours, int64_t data_start_ms, int forecast_days, BudgetStatus* s) {
  const int64_t trailing = FloorDiv(s->as_of_ms - forecast_days * kDayMs, kHourMs) * kHourMs;
  s->basis_start_ms = std::max(trailing, data_start_ms);
  const int64_t basis_ms = s->as_of_ms - s->basis_start_ms;
  if (basis_ms < kHourMs) return;  // too little data to carry a rate a month on
  for (auto it = hours.lower_bound(s->basis_start_ms / kHourMs); it != hours.end(); ++it) {
    s->basis_spent = AddUsd(s->basis_spent, it->second);
  }
  s->per_day = Scale(s->basis_spent, kDayMs, basis_ms);
  s->forecast = AddUsd(s->spent, Scale(s->basis_spent, s->period.end_ms - s->as_of_ms, basis_ms));
  s->forecast_pct =
      100.0 * static_cast<double>(*s->forecast) / static_cast<double>(s->budget.amount);
  if (!s->crossed_hour_ms && s->basis_spent > 0) {
    const int64_t to_go = Scale(s->budget.amount - s->spent, basis_ms, s->basis_spent);
    if (to_go < s->period.end_ms - s->as_of_ms) s->crosses_ms = s->as_of_ms + to_go;
  }
}

void SetSpentPct(BudgetStatus* s) {
  s->spent_pct = 100.0 * static_cast<double>(s->spent) / static_cast<double>(s->budget.amount);
  s->alert_pct = 0;
  for (int pct : s->budget.alert_pcts) {
    if (Int128{s->spent} * 100 >= Int128{s->budget.amount} * pct) s->alert_pct = pct;
  }
}

BudgetStatus Evaluate(const Budget& b, const HourlySpend& hours, int64_t data_start_ms,
                      int forecast_days, int64_t as_of_ms) {
  BudgetStatus s;
  s.budget = b;
  s.as_of_ms = as_of_ms;
  s.period = PeriodOf(b.period, as_of_ms - 1);  // at a period's very end, that period
  for (auto it = hours.lower_bound(s.period.start_ms / kHourMs); it != hours.end(); ++it) {
    s.spent = AddUsd(s.spent, it->second);
    if (!s.crossed_hour_ms && s.spent >= b.amount) s.crossed_hour_ms = it->first * kHourMs;
  }
  SetSpentPct(&s);
  Forecast(hours, data_start_ms, forecast_days, &s);
  return s;
}

}  // namespace

const char* BudgetPeriodName(BudgetPeriod period) {
  return period == BudgetPeriod::kWeek ? "week" : "month";
}

PeriodSpan PeriodOf(BudgetPeriod period, int64_t at_ms) {
  // Howard Hinnant's date library, which became C++20's calendar: libstdc++ has the calendar from
  // GCC 11, and the portable build compiles with GCC 10 (docs/install.md). Days as an int: any
  // time within ±10 million days (27,000 years), beyond what a calendar year holds anyway.
  constexpr int64_t kDayBound = 10'000'000;
  const auto day_count =
      static_cast<int>(std::clamp(FloorDiv(at_ms, kDayMs), -kDayBound, kDayBound));
  const date::sys_days day{date::days{day_count}};
  if (period == BudgetPeriod::kWeek) {
    const date::sys_days monday = day - (date::weekday{day} - date::Monday);
    const int64_t start = monday.time_since_epoch().count() * kDayMs;
    return {start, start + 7 * kDayMs};
  }
  const date::year_month_day ymd{day};
  const date::sys_days first{ymd.year() / ymd.month() / 1};
  const date::sys_days next{(ymd.year() / ymd.month() + date::months{1}) / 1};
  return {first.time_since_epoch().count() * kDayMs, next.time_since_epoch().count() * kDayMs};
}

int64_t BudgetDataStartMs(const BudgetFile& file, int64_t as_of_ms) {
  int64_t start = FloorDiv(as_of_ms - file.forecast_days * kDayMs, kHourMs) * kHourMs;
  for (const Budget& b : file.budgets) {
    start = std::min(start, PeriodOf(b.period, as_of_ms - 1).start_ms);
  }
  return start;
}

std::vector<BudgetStatus> EvaluateBudgets(const BudgetFile& file, const HistoryInput& in,
                                          const std::map<uint32_t, MicroUsd>& gpu_prices,
                                          int64_t as_of_ms) {
  std::map<HistoryBy, std::set<std::string>> names;
  for (const Budget& b : file.budgets) names[b.scope].insert(b.name);
  std::map<HistoryBy, std::map<std::string, HourlySpend>> spend;
  for (const auto& [scope, keys] : names) spend[scope] = SpendByKey(in, scope, keys, gpu_prices);
  // Where the data begins, so that a history younger than the trailing window is not read as
  // days of zero spend.
  int64_t data_start_ms = as_of_ms;
  for (const HourBucket& b : in.hours) {
    if (!b.gpus.empty()) data_start_ms = std::min(data_start_ms, b.hour * kHourMs);
  }
  data_start_ms = std::max(data_start_ms, in.since_ms);
  const HourlySpend nothing;
  std::vector<BudgetStatus> out;
  for (const Budget& b : file.budgets) {
    const auto& by_key = spend[b.scope];
    auto it = by_key.find(b.name);
    out.push_back(Evaluate(b, it != by_key.end() ? it->second : nothing, data_start_ms,
                           file.forecast_days, as_of_ms));
  }
  return out;
}

void ShowSpentAs(MicroUsd shown, BudgetStatus* s) {
  if (s->forecast) {
    s->forecast = std::max<MicroUsd>(0, AddUsd(*s->forecast, shown - s->spent));
    s->forecast_pct =
        100.0 * static_cast<double>(*s->forecast) / static_cast<double>(s->budget.amount);
  }
  s->spent = shown;
  SetSpentPct(s);
}

}  // namespace cgov
