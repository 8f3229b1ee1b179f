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

// The showback as CSV for a spreadsheet: kind (row, idle, unmatched, total_billed or
// total_estimate), the --by key, gpu_hours, share_pct, usd. The usd column adds up to the total.
std::string HistoryShowbackCsv(const HistorySummary& summary);

}  // namespace cgov

#endif  // CGOV_REPORT_HISTORY_REPORT_H_
