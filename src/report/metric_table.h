// A run's distribution table (each metric's min, P50, P95, max and mean over its samples),
// declared once (issue 59, item 3) for text, Markdown and HTML: the Markdown was laid out by hand
// with fixed widths beside the text's generated table. A row is a metric (SM active and tensor
// only where a GPU had GPM); each figure's cell says which value of the JSON it shows
// (AT/KEY/STAT: /metrics/gpu_util_pct/p95).
#ifndef CGOV_REPORT_METRIC_TABLE_H_
#define CGOV_REPORT_METRIC_TABLE_H_

#include <string>
#include <vector>

#include "analysis/run_summary.h"

namespace cgov {

struct MetricColumn {
  std::string header;
  const char* key = "";                 // the JSON's name of the statistic ("": the label)
  double MetricStats::*stat = nullptr;  // null: the metric's label
  bool Numeric() const { return stat != nullptr; }
  bool RightAligned() const { return Numeric(); }
};

std::vector<MetricColumn> MetricColumns();
// The metrics a table shows: every one but the GPM pair where no GPU had GPM.
std::vector<RunMetric> MetricRows(const MetricSet& metrics);

// A cell as every format reads it (one decimal; "—" where the metric had no sample).
std::string MetricCellText(const MetricSet& metrics, const MetricColumn& c, RunMetric m);
// The JSON value a figure's cell shows under `at` ("/metrics"), "" for the label.
std::string MetricCellPointer(const std::string& at, const MetricColumn& c, RunMetric m);

}  // namespace cgov

#endif  // CGOV_REPORT_METRIC_TABLE_H_
