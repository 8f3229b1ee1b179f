// `cgov report --db` output: the HistorySummary as a terminal/Markdown report or as the versioned
// JSON document of docs/report-json.md. Renderers only format; every number comes from the summary.
#ifndef CGOV_REPORT_HISTORY_REPORT_H_
#define CGOV_REPORT_HISTORY_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/history_summary.h"

namespace cgov {

// `markdown`: Markdown tables; otherwise aligned plain-text columns for a terminal.
std::string HistoryReportText(const HistorySummary& summary, bool markdown);

nlohmann::json HistoryReportJson(const HistorySummary& summary);

}  // namespace cgov

#endif  // CGOV_REPORT_HISTORY_REPORT_H_
