// The summary of one wrapped run: the value every renderer (terminal, report.md, summary.json)
// reads. No renderer computes a number of its own.
#ifndef CGOV_ANALYSIS_RUN_SUMMARY_H_
#define CGOV_ANALYSIS_RUN_SUMMARY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/findings.h"
#include "analysis/run_compare.h"
#include "analysis/savings.h"
#include "analysis/series.h"
#include "analysis/timeline.h"
#include "analysis/value_histogram.h"
#include "core/tags.h"
#include "telemetry/gpu_sample.h"
#include "telemetry/job_tree.h"
#include "telemetry/sampler.h"

namespace cgov {

// The six distribution metrics, in report order. Names are the summary.json keys.
// kSmActivePct and kTensorActivePct come from NVML GPM (Hopper and later): unknown elsewhere.
enum class RunMetric {
  kGpuUtilPct,
  kGpuMemPct,
  kGpuPowerW,
  kGpuTempC,
  kCpuPct,
  kMemPct,
  kSmActivePct,
  kTensorActivePct
};
inline constexpr size_t kRunMetricCount = 8;
const char* RunMetricKey(RunMetric m);    // "gpu_util_pct", ...
const char* RunMetricLabel(RunMetric m);  // "GPU Util %", ...

using MetricSet = std::array<std::optional<MetricStats>, kRunMetricCount>;

struct GpuRunSummary {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<MigInstance> mig;             // a MIG instance of GPU `index`
  std::string label;                          // GpuInfo::Label(): "0", "0 MIG 3g.40gb GI 1"
  std::optional<MemoryHealth> memory_health;  // as last read during the run
  bool lost = false;                          // lost at some point of the run
  bool used_by_job = false;                   // a process of the job held memory on it
  MetricSet metrics;  // the GPU metrics only (CPU and host memory stay unset)
  // The distribution behind metrics' utilization P50/P95: samples with utilization in
  // [0, 10), [10, 20) ... [90, 100] %.
  std::vector<uint64_t> util_histogram;
  // Utilization and memory used (% of total) over the run, in ms since its start, for charts
  // (the HTML report). Not in summary.json: samples.jsonl has every sample.
  MinMaxSeries util_series, mem_series;
};

// The CI gate's verdict: whether it fired and the exit status it gave. The status alone cannot
// tell a job that exits 3 from the gate; this can (docs/run.md, "the gate's contract").
struct RunGate {
  bool fired = false;
  int exit_status = 0;  // cgov run's: the gate's code when fired, else the job's
  std::string reason;   // what fired ("" when none did)
};

struct RunSummary {
  static constexpr int kSchemaVersion = 1;
  // run
  std::vector<std::string> command;
  std::optional<int> exit_code;  // unknown if the job could not be waited for
  int64_t started_at_ns = 0;     // wall clock, Unix ns
  int64_t ended_at_ns = 0;
  double duration_s = 0;
  Tags tags;
  HostInfo host;
  // sampling
  double interval_s = 0;
  uint64_t samples = 0;
  // Fewer samples than kMinMeasuredSamples: the run ended before cgov could measure it (its
  // figures are shown as "too short to measure", not as $0.00 phases and a start-up CPU spike).
  static constexpr uint64_t kMinMeasuredSamples = 3;
  bool TooShortToMeasure() const { return samples < kMinMeasuredSamples; }
  // GPUs: empty with gpu_unavailable_reason set when there was no GPU data at all.
  std::string gpu_unavailable_reason;
  std::string driver_version;
  std::vector<GpuRunSummary> gpus;
  MetricSet metrics;  // GPU metrics over every GPU-sample; host metrics over every tick
  // the job's process tree
  std::optional<double> job_cpu_seconds;
  std::optional<uint64_t> job_rss_max_bytes;
  // cgov itself
  double agent_cpu_seconds = 0;
  double agent_cpu_pct = 0;  // of one core, over the run
  uint64_t agent_rss_max_bytes = 0;
  // Where the GPU-time went, what it cost, what to change.
  UsageTotals usage;
  std::array<int64_t, kPhaseCount> phase_ms{};        // over all GPUs
  std::array<double, kPhaseCount> phase_share_pct{};  // sums to exactly 100 (largest remainder)
  // The idle-held phase as the findings claim it: the input-pipeline finding's share (pauses on
  // bursty GPUs) and the idle-held finding's (the rest); no action list in a run.
  IdleHeldParts idle_held;
  EnergyBlock energy;  // the GPUs' energy, power x time (no grid intensity in a run)
  CostBlock cost;
  std::vector<Finding> findings;
  SavingsBlock savings;
  // The CI gate (--fail-on, --fail-on-regression), when one was asked for.
  std::optional<RunGate> gate;
  // Against --baseline runs, when given (their paths in `baseline_paths`).
  std::optional<RunComparison> baseline;
  std::vector<std::string> baseline_paths;
  // What went wrong inside cgov and degraded this summary (never the job).
  std::vector<std::string> warnings;
};

// Prices, costs, findings and savings from summary->usage and the GPUs' names (pure).
Status Analyze(const PriceOptions& price, std::optional<double> work, const std::string& unit,
               const PriceCatalog& catalog, RunSummary* summary);

// Builds the distribution parts of a RunSummary tick by tick, in memory bounded by the metrics'
// ranges (see ValueHistogram). Not thread-safe.
class RunAccumulator {
 public:
  // `start_mono_ns` and `interval_ms` place ticks on the run's timeline.
  RunAccumulator(const std::vector<GpuInfo>& gpus, int64_t start_mono_ns, int64_t interval_ms);

  void AddTick(const TickSample& tick, const JobTreeSample& job);
  uint64_t ticks() const { return ticks_; }

  // Fills summary->samples, gpus, metrics, job_rss_max_bytes and usage (the last sample closed at
  // `end_mono_ns`).
  void Finish(int64_t end_mono_ns, RunSummary* summary) const;

 private:
  struct Histograms {
    Histograms();
    std::array<ValueHistogram, kRunMetricCount> h;
    void Add(RunMetric m, double v) { h[static_cast<size_t>(m)].Add(v); }
    MetricSet Stats() const;
    const ValueHistogram& Of(RunMetric m) const { return h[static_cast<size_t>(m)]; }
  };

  std::vector<GpuInfo> gpus_;
  std::vector<Histograms> per_gpu_;
  std::vector<MinMaxSeries> util_series_, mem_series_;
  std::vector<bool> lost_, used_;
  std::vector<std::optional<MemoryHealth>> health_;  // the last read of each GPU
  Histograms all_;
  int64_t start_mono_ns_;
  UsageAccumulator usage_;
  uint64_t ticks_ = 0;
  std::optional<uint64_t> job_rss_max_;
};

}  // namespace cgov

#endif  // CGOV_ANALYSIS_RUN_SUMMARY_H_
