#include "report/metric_table.h"

#include <fmt/format.h>

namespace cgov {

std::vector<MetricColumn> MetricColumns() {
  return {{"Metric", "", nullptr},           {"Min", "min", &MetricStats::min},
          {"P50", "p50", &MetricStats::p50}, {"P95", "p95", &MetricStats::p95},
          {"Max", "max", &MetricStats::max}, {"Mean", "mean", &MetricStats::mean}};
}

std::vector<RunMetric> MetricRows(const MetricSet& metrics) {
  std::vector<RunMetric> out;
  for (size_t i = 0; i < kRunMetricCount; ++i) {
    const auto m = static_cast<RunMetric>(i);
    const bool gpm = m == RunMetric::kSmActivePct || m == RunMetric::kTensorActivePct;
    if (gpm && !metrics[i]) continue;  // only GPUs with GPM (Hopper and later) have these rows
    out.push_back(m);
  }
  return out;
}

std::string MetricCellText(const MetricSet& metrics, const MetricColumn& c, RunMetric m) {
  if (c.stat == nullptr) return RunMetricLabel(m);
  const std::optional<MetricStats>& stats = metrics[static_cast<size_t>(m)];
  return stats ? fmt::format("{:.1f}", (*stats).*c.stat) : "—";
}

std::string MetricCellPointer(const std::string& at, const MetricColumn& c, RunMetric m) {
  return c.stat == nullptr ? "" : fmt::format("{}/{}/{}", at, RunMetricKey(m), c.key);
}

}  // namespace cgov
