// The phase table ("Where the GPU-time went"), declared once (issue 59, item 3) for a run's
// report and a history's, in text, Markdown and HTML: the same rows (every phase, in order),
// words, decimals and "—" for an unpriced cost (the history's text once showed hours to two
// places where the run's and the HTML showed three, a share "12.3 %" beside "12.3"). Each cell
// says which value of the report's JSON it shows (/phases/KEY/...).
#ifndef CGOV_REPORT_PHASE_TABLE_H_
#define CGOV_REPORT_PHASE_TABLE_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/phases.h"

namespace cgov {

struct PhaseColumn {
  enum class Kind { kPhase, kShare, kHours, kCost };
  std::string header;
  Kind kind;
  bool Numeric() const { return kind != Kind::kPhase; }
  bool RightAligned() const { return Numeric(); }
};

std::vector<PhaseColumn> PhaseColumns();
// Every phase, in the order of the bar above the table.
std::vector<Phase> PhaseRows();

// A run's or a history's phases: each phase's share of the GPU-time, its milliseconds, and the
// cost block that prices them.
struct PhaseFigures {
  const std::array<double, kPhaseCount>& share_pct;
  const std::array<int64_t, kPhaseCount>& ms;
  const CostBlock& cost;
};

// A cell as every format reads it ("—": not priced).
std::string PhaseCellText(const PhaseFigures& f, const PhaseColumn& c, Phase p);
// The JSON value a figure's cell shows ("" for none), and *scale: JSON to cell.
std::string PhaseCellPointer(const PhaseColumn& c, Phase p, double* scale);

}  // namespace cgov

#endif  // CGOV_REPORT_PHASE_TABLE_H_
