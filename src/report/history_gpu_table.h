// The history report's per-GPU table, declared once (issue 59, item 3): the text, Markdown and
// HTML reports render these columns in this order (the HTML once lacked SM active and tensor,
// and the text wrote its shares in other words). Each column says its header (with its unit),
// how its cell reads and which value of the report's JSON (under /gpus/N/) it shows, with the
// scale from that value to the cell (the JSON's joules shown as kWh).
#ifndef CGOV_REPORT_HISTORY_GPU_TABLE_H_
#define CGOV_REPORT_HISTORY_GPU_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/history_summary.h"

namespace cgov {

struct HistoryGpuColumn {
  enum class Kind {
    kGpu,
    kModel,
    kPhaseShare,
    kUtil,
    kSmActive,
    kTensor,
    kMemUsed,
    kPower,
    kEnergy,
    kCost
  };
  std::string header;
  Kind kind;
  Phase phase = Phase::kTrulyIdle;  // kPhaseShare: which phase's share of the GPU's time
  bool Numeric() const { return kind != Kind::kGpu && kind != Kind::kModel; }
  // Text and Markdown align figures and the GPU's label right.
  bool RightAligned() const { return kind != Kind::kModel; }
};

// The columns of this window's table: SM active and tensor where some GPU had GPM (Hopper and
// later), energy where some GPU reported power.
std::vector<HistoryGpuColumn> HistoryGpuColumns(const HistorySummary& s);
// A cell as every format reads it ("—" where not known or not priced).
std::string HistoryGpuCellText(const HistoryGpuColumn& c, const HistoryGpuRow& g);
// The JSON value a figure's cell shows (/gpus/N/KEY), "" for the others; *scale: JSON to cell.
std::string HistoryGpuCellPointer(const HistoryGpuColumn& c, size_t gpu, double* scale);

}  // namespace cgov

#endif  // CGOV_REPORT_HISTORY_GPU_TABLE_H_
