// The run's per-GPU table, declared once (issue 59, item 3): the text, Markdown and HTML reports
// render these columns in this order, so no format shows a column another lacks. Each column
// says its header, whether it is a figure (right-aligned; sortable as a number in HTML), how its
// cell reads and, for a figure, which value of summary.json (under /gpus/N/) the HTML ties it to.
#ifndef CGOV_REPORT_RUN_GPU_TABLE_H_
#define CGOV_REPORT_RUN_GPU_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/run_summary.h"

namespace cgov {

struct RunGpuColumn {
  enum class Kind { kGpu, kModel, kMetric, kJob };
  const char* header;
  Kind kind;
  RunMetric metric = RunMetric::kGpuUtilPct;  // kMetric: which distribution
  double MetricStats::*stat = nullptr;        // kMetric: which statistic of it
  const char* stat_key = "";                  // its name in summary.json: "p50", "mean", "max"
  bool gpm = false;  // SM active and tensor: shown when some GPU has GPM (Hopper and later)
  bool Numeric() const { return kind == Kind::kMetric; }
  // Text and Markdown align figures and the GPU's label (an index, or its MIG name) right.
  bool RightAligned() const { return kind == Kind::kMetric || kind == Kind::kGpu; }
};

// The columns of this run's table (the GPM ones only when some GPU has GPM).
std::vector<RunGpuColumn> RunGpuColumns(const RunSummary& s);
// A cell as every format reads it: "—" for a figure not measured; the GPU's label with
// " (lost during the run)" when the driver lost it.
std::string RunGpuCellText(const RunGpuColumn& c, const GpuRunSummary& g);
// The JSON pointer a figure's cell stands for (/gpus/N/metrics/KEY/STAT), "" for the others.
std::string RunGpuCellPointer(const RunGpuColumn& c, size_t gpu);

}  // namespace cgov

#endif  // CGOV_REPORT_RUN_GPU_TABLE_H_
