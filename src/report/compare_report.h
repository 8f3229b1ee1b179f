// A run against its baseline (`cgov run --baseline`, `cgov compare`): the `baseline` block of
// summary.json, and the section of the terminal/Markdown report. docs/ci.md.
#ifndef CGOV_REPORT_COMPARE_REPORT_H_
#define CGOV_REPORT_COMPARE_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_compare.h"
#include "report/text_style.h"

namespace cgov {

// `baseline_paths`: where the baselines were read from, in the comparison's order.
nlohmann::json ComparisonJson(const RunComparison& c,
                              const std::vector<std::string>& baseline_paths);

std::string ComparisonText(const RunComparison& c, const std::vector<std::string>& baseline_paths,
                           const TextStyle& style);

}  // namespace cgov

#endif  // CGOV_REPORT_COMPARE_REPORT_H_
