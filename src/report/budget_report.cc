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

// The budgets table, declared once for text, Markdown and HTML (issue 59, item 3: the text
// once showed "12.3 %" and "≥ 80 %" where the HTML showed 12.3 and 80).
struct BudgetColumn {
  enum class Kind {
    kBudget,
    kPeriod,
    kAmount,
    kSpent,
    kSpentPct,
    kAlert,
    kPerDay,
    kForecast,
    kForecastPct,
    kReaches
  };
  std::string header;
  Kind kind;
  bool Numeric() const {
    return kind != Kind::kBudget && kind != Kind::kPeriod && kind != Kind::kReaches;
  }
  bool RightAligned() const { return Numeric(); }
};

std::vector<BudgetColumn> BudgetColumns() {
  using K = BudgetColumn::Kind;
  return {{"Budget", K::kBudget},          {"Period", K::kPeriod},
          {"Amount", K::kAmount},          {"Spent", K::kSpent},
          {"Spent %", K::kSpentPct},       {"Alert %", K::kAlert},
          {"Per day", K::kPerDay},         {"Forecast", K::kForecast},
          {"Forecast %", K::kForecastPct}, {"Reaches the amount", K::kReaches}};
}

std::string BudgetCellText(const BudgetColumn& c, const BudgetStatus& b) {
  using K = BudgetColumn::Kind;
  switch (c.kind) {
    case K::kBudget:
      return fmt::format("{} {}", HistoryByName(b.budget.scope), b.budget.name);
    case K::kPeriod:
      return PeriodLabel(b);
    case K::kAmount:
      return FormatUsd(b.budget.amount);
    case K::kSpent:
      return FormatUsd(b.spent);
    case K::kSpentPct:
      return fmt::format("{:.1f}", b.spent_pct);
    case K::kAlert:
      return b.alert_pct > 0 ? fmt::format("{}", b.alert_pct) : "—";
    case K::kPerDay:
      return b.per_day ? FormatUsd(*b.per_day) : "—";
    case K::kForecast:
      return b.forecast ? FormatUsd(*b.forecast) : "—";
    case K::kForecastPct:
      return b.forecast ? fmt::format("{:.1f}", b.forecast_pct) : "—";
    case K::kReaches:
      return Crossing(b);
  }
  return "";
}

// Row `i`'s figure in the report's JSON ("" for none).
std::string BudgetCellPointer(const BudgetColumn& c, size_t i) {
  using K = BudgetColumn::Kind;
  const std::string at = fmt::format("/budgets/rows/{}/", i);
  switch (c.kind) {
    case K::kAmount:
      return at + "amount_usd";
    case K::kSpent:
      return at + "spent_usd";
    case K::kSpentPct:
      return at + "spent_pct";
    case K::kAlert:
      return at + "alert_pct";
    case K::kPerDay:
      return at + "forecast/usd_per_day";
    case K::kForecast:
      return at + "forecast/usd";
    case K::kForecastPct:
      return at + "forecast/pct";
    default:
      return "";
  }
}

constexpr char kSpentNote[] =
    "Spent: the GPU time its processes were attributed this period (UTC), priced as above; the "
    "forecast carries the trailing rate on to the period's end (an estimate).";

}  // namespace

std::string BudgetsText(const HistorySummary& s, const TextStyle& st) {
  if (s.budgets.empty()) return "";
  return TextHeading(Header(s), st) +
         DeclaredTextTable(BudgetColumns(), s.budgets, BudgetCellText, st.markdown) + "\n" +
         kSpentNote + "\n";
}

std::string BudgetsHtml(const HistorySummary& s) {
  if (s.budgets.empty()) return "";
  html::Table t;
  t.caption = Header(s);
  html::FillDeclaredTable(
      BudgetColumns(), s.budgets.size(),
      [&](const BudgetColumn& c, size_t i) { return BudgetCellText(c, s.budgets[i]); },
      [&](const BudgetColumn& c, size_t i, double* scale) {
        *scale = 1;
        return BudgetCellPointer(c, i);
      },
      &t);
  return "<section id=\"budgets\"><h2>Budgets</h2>" + t.Render() + "<p class=\"muted\">" +
         html::Esc(kSpentNote) + "</p></section>\n";
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
