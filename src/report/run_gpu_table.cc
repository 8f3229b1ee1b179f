#include "report/run_gpu_table.h"

#include <fmt/format.h>

namespace cgov {

std::vector<RunGpuColumn> RunGpuColumns(const RunSummary& s) {
  using K = RunGpuColumn::Kind;
  bool gpm = false;
  for (const GpuRunSummary& g : s.gpus) {
    gpm = gpm || g.metrics[static_cast<size_t>(RunMetric::kSmActivePct)].has_value();
  }
  const std::vector<RunGpuColumn> all = {
      {"GPU", K::kGpu},
      {"Model", K::kModel},
      {"Util % P50", K::kMetric, RunMetric::kGpuUtilPct, &MetricStats::p50, "p50"},
      {"Util % Mean", K::kMetric, RunMetric::kGpuUtilPct, &MetricStats::mean, "mean"},
      {"SM Active % Mean", K::kMetric, RunMetric::kSmActivePct, &MetricStats::mean, "mean", true},
      {"Tensor % Mean", K::kMetric, RunMetric::kTensorActivePct, &MetricStats::mean, "mean", true},
      {"Mem % Max", K::kMetric, RunMetric::kGpuMemPct, &MetricStats::max, "max"},
      {"Power W Mean", K::kMetric, RunMetric::kGpuPowerW, &MetricStats::mean, "mean"},
      {"Temp °C Max", K::kMetric, RunMetric::kGpuTempC, &MetricStats::max, "max"},
      {"Used by the job", K::kJob}};
  std::vector<RunGpuColumn> out;
  for (const RunGpuColumn& c : all) {
    if (!c.gpm || gpm) out.push_back(c);
  }
  return out;
}

std::string RunGpuCellText(const RunGpuColumn& c, const GpuRunSummary& g) {
  switch (c.kind) {
    case RunGpuColumn::Kind::kGpu:
      return (g.label.empty() ? fmt::format("{}", g.index) : g.label) +
             (g.lost ? " (lost during the run)" : "");
    case RunGpuColumn::Kind::kModel:
      return g.name.empty() ? "unknown GPU" : g.name;
    case RunGpuColumn::Kind::kMetric: {
      const std::optional<MetricStats>& m = g.metrics[static_cast<size_t>(c.metric)];
      return m ? fmt::format("{:.1f}", (*m).*c.stat) : "—";
    }
    case RunGpuColumn::Kind::kJob:
      return g.used_by_job ? "yes" : "no";
  }
  return "";
}

std::string RunGpuCellPointer(const RunGpuColumn& c, size_t gpu) {
  if (c.kind != RunGpuColumn::Kind::kMetric) return "";
  return fmt::format("/gpus/{}/metrics/{}/{}", gpu, RunMetricKey(c.metric), c.stat_key);
}

}  // namespace cgov
