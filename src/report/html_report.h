// The HTML report: one self-contained file (inline CSS and SVG, a little inline JavaScript only
// to sort tables; no network) for `cgov report --format html` and each run's report.html. It
// renders the same summary the JSON does, and every number a test checks names its place in that
// JSON (data-json, a JSON pointer); docs/html-report.md describes the page.
#ifndef CGOV_REPORT_HTML_REPORT_H_
#define CGOV_REPORT_HTML_REPORT_H_

#include <string>

#include "analysis/history_summary.h"
#include "analysis/run_summary.h"

namespace cgov {

// Pointers refer to summary.json (docs/summary-json.md).
std::string RunReportHtml(const RunSummary& summary);

// Pointers refer to `cgov report --format json` (docs/report-json.md).
std::string HistoryReportHtml(const HistorySummary& summary);

}  // namespace cgov

#endif  // CGOV_REPORT_HTML_REPORT_H_
