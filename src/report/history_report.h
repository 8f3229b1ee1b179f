// `cgov report --db` output: the HistorySummary as a terminal/Markdown report or as the versioned
// JSON document of docs/report-json.md. Renderers only format; every number comes from the summary.
#ifndef CGOV_REPORT_HISTORY_REPORT_H_
#define CGOV_REPORT_HISTORY_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/history_summary.h"
#include "report/text_style.h"

namespace cgov {

// Markdown (`--format md`), or plain text for a terminal (`--format text`): aligned columns, no
// Markdown syntax, colour only when `style.color`.
std::string HistoryReportText(const HistorySummary& summary, const TextStyle& style);

nlohmann::json HistoryReportJson(const HistorySummary& summary);

// How the GPU time of the "Who" table was split between holders, with the window's shared
// GPU-hours split each way when there were any (one sentence, for every view).
std::string SharedSplitText(const HistorySummary& summary);

// The showback as CSV for a spreadsheet: kind (row, idle, unmatched with a bill, total_billed or
// total_estimate), the --by key, gpu_hours, share_pct, usd; the rows of every format's showback
// table (report/showback_table.h). The usd column adds up to the total.
std::string HistoryShowbackCsv(const HistorySummary& summary);

}  // namespace cgov

#endif  // CGOV_REPORT_HISTORY_REPORT_H_
