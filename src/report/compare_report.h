// A run against its baseline (`cgov run --baseline`, `cgov compare`): the `baseline` block of
// summary.json, and the section of the terminal/Markdown report. docs/ci.md.
#ifndef CGOV_REPORT_COMPARE_REPORT_H_
#define CGOV_REPORT_COMPARE_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/phases.h"
#include "analysis/run_compare.h"
#include "report/text_style.h"

namespace cgov {

// `baseline_paths`: where the baselines were read from, in the comparison's order.
nlohmann::json ComparisonJson(const RunComparison& c,
                              const std::vector<std::string>& baseline_paths);

std::string ComparisonText(const RunComparison& c, const std::vector<std::string>& baseline_paths,
                           const TextStyle& style);

// The comparison's table, declared once for text, Markdown and HTML (issue 59, item 3): the
// compared figure, the capacity unused, each phase's share; the baseline's, this run's and the
// change.
struct BaselineColumn {
  enum class Kind { kName, kBaseline, kCurrent, kChange };
  std::string header;
  Kind kind;
  bool Numeric() const { return kind != Kind::kName; }
  bool RightAligned() const { return Numeric(); }
};
struct BaselineRow {
  enum class Kind { kFigure, kWaste, kPhase };
  Kind kind;
  Phase phase = Phase::kTrulyIdle;  // kPhase's
};
std::vector<BaselineColumn> BaselineColumns();
std::vector<BaselineRow> BaselineRows();
// A cell: its figure ("12.3", "+1.5", "$0.42") and the unit after it (" %", " pp" or ""); the
// text shows both, the HTML ties the figure to `pointer` in the JSON ("" for none).
struct BaselineCell {
  std::string figure, unit, pointer;
};
BaselineCell BaselineCellOf(const RunComparison& c, const BaselineColumn& column,
                            const BaselineRow& row);

}  // namespace cgov

#endif  // CGOV_REPORT_COMPARE_REPORT_H_
