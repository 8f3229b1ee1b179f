// `cgov runs`: the cross-run showback as text/Markdown, JSON (docs/ci.md) and CSV.
#ifndef CGOV_REPORT_RUNS_REPORT_H_
#define CGOV_REPORT_RUNS_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/run_showback.h"
#include "report/text_style.h"

namespace cgov {

std::string RunsReportText(const RunShowback& s, const TextStyle& style);
nlohmann::json RunsReportJson(const RunShowback& s);
// kind (group or total), the tag value, runs, failed_runs, gpu_hours, waste_pct, usd, work, unit,
// cost_per_unit_usd. The usd column of the groups adds up to the total's.
std::string RunsReportCsv(const RunShowback& s);

}  // namespace cgov

#endif  // CGOV_REPORT_RUNS_REPORT_H_
