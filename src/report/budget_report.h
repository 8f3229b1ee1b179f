// The budgets of `cgov report --budgets FILE` as a text/Markdown section, a JSON object and an
// HTML section. Renderers only: every figure comes from HistorySummary::budgets.
#ifndef CGOV_REPORT_BUDGET_REPORT_H_
#define CGOV_REPORT_BUDGET_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/history_summary.h"
#include "report/text_style.h"

namespace cgov {

// "" when the report was given no budgets file.
std::string BudgetsText(const HistorySummary& summary, const TextStyle& style);
std::string BudgetsHtml(const HistorySummary& summary);

// The "budgets" member of the report JSON (docs/report-json.md); null without a budgets file.
nlohmann::json BudgetsJson(const HistorySummary& summary);

}  // namespace cgov

#endif  // CGOV_REPORT_BUDGET_REPORT_H_
