// What `cgov daemon --policy` did in the report's window (docs/policy.md), as a text/Markdown
// section, an HTML section and the report JSON's "policy_actions". Renderers only.
#ifndef CGOV_REPORT_POLICY_REPORT_H_
#define CGOV_REPORT_POLICY_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/history_summary.h"
#include "report/text_style.h"

namespace cgov {

// "" when the window holds no policy action.
std::string PolicyActionsText(const HistorySummary& summary, const TextStyle& style);
std::string PolicyActionsHtml(const HistorySummary& summary);
nlohmann::json PolicyActionsJson(const HistorySummary& summary);  // an array, oldest first

}  // namespace cgov

#endif  // CGOV_REPORT_POLICY_REPORT_H_
