#include "report/budget_report.h"

#include <cmath>

#include <fmt/format.h>

#include "core/text.h"
#include "core/time_format.h"
#include "report/html.h"

namespace cgov {
namespace {

using nlohmann::json;

std::string Day(int64_t ms) { return FormatDateUtc(ms); }

std::string PeriodLabel(const BudgetStatus& b) {
  return b.budget.period == BudgetPeriod::kWeek ? "week of " + Day(b.period.start_ms)
                                                : Day(b.period.start_ms).substr(0, 7);
}

std::string Pct(double pct) { return fmt::format("{:.1f} %", pct); }

// When the amount is reached: already (the hour it was), by the forecast, or not this period.
std::string Crossing(const BudgetStatus& b) {
  if (b.crossed_hour_ms) return "crossed " + FormatMinuteUtc(*b.crossed_hour_ms);
  if (b.crosses_ms) return "forecast " + FormatMinuteUtc(*b.crosses_ms);
  if (!b.forecast) return "— (under an hour of data)";
  return "not this " + std::string(BudgetPeriodName(b.budget.period));
}

std::string Header(const HistorySummary& s) {
  const BudgetStatus& first = s.budgets.front();
  return fmt::format(
      "Budgets ({}; spend to {}, forecast linear on the trailing {} days or the data since)",
      SafeText(s.budgets_file), FormatMinuteUtc(first.as_of_ms), s.budget_forecast_days);
}

json Time(std::optional<int64_t> ms) {
  return ms ? json(FormatRfc3339Utc(*ms * 1'000'000)) : json(nullptr);
}

json ForecastJson(const BudgetStatus& b) {
  if (!b.forecast) return nullptr;
  return {{"basis_start", FormatRfc3339Utc(b.basis_start_ms * 1'000'000)},
          {"basis_spent_usd", UsdNumber(b.basis_spent)},
          {"usd_per_day", UsdNumber(*b.per_day)},
          {"usd", UsdNumber(*b.forecast)},
          {"pct", std::round(b.forecast_pct * 10) / 10},
          {"crosses_at", Time(b.crosses_ms)}};
}

}  // namespace

std::string BudgetsText(const HistorySummary& s, const TextStyle& st) {
  if (s.budgets.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{"Budget", "Period", "Amount", "Spent", "Spent %",
                                                 "Alert", "Per day", "Forecast", "Forecast %",
                                                 "Reaches the amount"}};
  for (const BudgetStatus& b : s.budgets) {
    rows.push_back({fmt::format("{} {}", HistoryByName(b.budget.scope), b.budget.name),
                    PeriodLabel(b), FormatUsd(b.budget.amount), FormatUsd(b.spent),
                    Pct(b.spent_pct), b.alert_pct > 0 ? fmt::format("≥ {} %", b.alert_pct) : "—",
                    b.per_day ? FormatUsd(*b.per_day) : "—",
                    b.forecast ? FormatUsd(*b.forecast) : "—",
                    b.forecast ? Pct(b.forecast_pct) : "—", Crossing(b)});
  }
  return TextHeading(Header(s), st) + TextTable(rows, "llrrrrrrrl", st.markdown) +
         "\nSpent: the GPU time its processes were attributed this period (UTC), priced as "
         "above; the forecast carries the trailing rate on to the period's end (an estimate).\n";
}

std::string BudgetsHtml(const HistorySummary& s) {
  if (s.budgets.empty()) return "";
  using html::Esc;
  using html::Num;
  html::Table t;
  t.caption = Header(s);
  t.headers = {"Budget",  "Period",  "Amount",   "Spent",      "Spent %",
               "Alert %", "Per day", "Forecast", "Forecast %", "Reaches the amount"};
  t.numeric = {false, false, true, true, true, true, true, true, true, false};
  for (size_t i = 0; i < s.budgets.size(); ++i) {
    const BudgetStatus& b = s.budgets[i];
    const std::string at = fmt::format("/budgets/rows/{}/", i);
    t.rows.push_back(
        {Esc(fmt::format("{} {}", HistoryByName(b.budget.scope), b.budget.name)),
         Esc(PeriodLabel(b)), Num(FormatUsd(b.budget.amount), at + "amount_usd"),
         Num(FormatUsd(b.spent), at + "spent_usd"),
         Num(fmt::format("{:.1f}", b.spent_pct), at + "spent_pct"),
         b.alert_pct > 0 ? Num(fmt::format("{}", b.alert_pct), at + "alert_pct") : "—",
         b.per_day ? Num(FormatUsd(*b.per_day), at + "forecast/usd_per_day") : "—",
         b.forecast ? Num(FormatUsd(*b.forecast), at + "forecast/usd") : "—",
         b.forecast ? Num(fmt::format("{:.1f}", b.forecast_pct), at + "forecast/pct") : "—",
         Esc(Crossing(b))});
  }
  return "<section id=\"budgets\"><h2>Budgets</h2>" + t.Render() +
         "<p class=\"muted\">Spent: the GPU time its processes were attributed this period (UTC), "
         "priced as above; the forecast carries the trailing rate on to the period's end (an "
         "estimate).</p></section>\n";
}

json BudgetsJson(const HistorySummary& s) {
  if (s.budgets_file.empty()) return nullptr;
  json rows = json::array();
  for (const BudgetStatus& b : s.budgets) {
    rows.push_back({{"scope", HistoryByName(b.budget.scope)},
                    {"name", b.budget.name},
                    {"period", BudgetPeriodName(b.budget.period)},
                    {"period_start", FormatRfc3339Utc(b.period.start_ms * 1'000'000)},
                    {"period_end", FormatRfc3339Utc(b.period.end_ms * 1'000'000)},
                    {"as_of", FormatRfc3339Utc(b.as_of_ms * 1'000'000)},
                    {"amount_usd", UsdNumber(b.budget.amount)},
                    {"spent_usd", UsdNumber(b.spent)},
                    {"spent_pct", std::round(b.spent_pct * 10) / 10},
                    {"alerts_pct", b.budget.alert_pcts},
                    {"alert_pct", b.alert_pct > 0 ? json(b.alert_pct) : json(nullptr)},
                    {"crossed_at", Time(b.crossed_hour_ms)},
                    {"forecast", ForecastJson(b)}});
  }
  return {{"file", SafeText(s.budgets_file)},
          {"forecast_days", s.budget_forecast_days},
          {"rows", std::move(rows)}};
}

}  // namespace cgov
