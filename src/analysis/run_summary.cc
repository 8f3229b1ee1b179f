#include "analysis/run_summary.h"

#include <algorithm>

#include <fmt/format.h>

namespace cgov {
namespace {

// Resolution each metric is counted at (see value_histogram.h).
constexpr std::array<double, kRunMetricCount> kResolution = {1, 0.01, 0.1, 1, 0.01, 0.01, 0.1, 0.1};

}  // namespace

const char* RunMetricKey(RunMetric m) {
  switch (m) {
    case RunMetric::kGpuUtilPct:
      return "gpu_util_pct";
    case RunMetric::kGpuMemPct:
      return "gpu_mem_pct";
    case RunMetric::kGpuPowerW:
      return "gpu_power_w";
    case RunMetric::kGpuTempC:
      return "gpu_temp_c";
    case RunMetric::kCpuPct:
      return "cpu_pct";
    case RunMetric::kMemPct:
      return "mem_pct";
    case RunMetric::kSmActivePct:
      return "sm_active_pct";
    case RunMetric::kTensorActivePct:
      return "tensor_active_pct";
  }
  return "";
}

const char* RunMetricLabel(RunMetric m) {
  switch (m) {
    case RunMetric::kGpuUtilPct:
      return "GPU Util %";
    case RunMetric::kGpuMemPct:
      return "GPU Mem %";
    case RunMetric::kGpuPowerW:
      return "GPU Power W";
    case RunMetric::kGpuTempC:
      return "GPU Temp °C";
    case RunMetric::kCpuPct:
      return "CPU %";
    case RunMetric::kMemPct:
      return "Host Mem %";
    case RunMetric::kSmActivePct:
      return "SM Active %";
    case RunMetric::kTensorActivePct:
      return "Tensor %";
  }
  return "";
}

RunAccumulator::Histograms::Histograms()
    : h{ValueHistogram(kResolution[0]), ValueHistogram(kResolution[1]),
        ValueHistogram(kResolution[2]), ValueHistogram(kResolution[3]),
        ValueHistogram(kResolution[4]), ValueHistogram(kResolution[5]),
        ValueHistogram(kResolution[6]), ValueHistogram(kResolution[7])} {}

MetricSet RunAccumulator::Histograms::Stats() const {
  MetricSet out;
  for (size_t i = 0; i < kRunMetricCount; ++i) out[i] = h[i].Stats();
  return out;
}

RunAccumulator::RunAccumulator(const std::vector<GpuInfo>& gpus, int64_t start_mono_ns,
                               int64_t interval_ms)
    : gpus_(gpus),
      per_gpu_(gpus.size()),
      util_series_(gpus.size(), MinMaxSeries(std::max<int64_t>(1, interval_ms))),
      mem_series_(gpus.size(), MinMaxSeries(std::max<int64_t>(1, interval_ms))),
      lost_(gpus.size()),
      used_(gpus.size()),
      health_(gpus.size()),
      start_mono_ns_(start_mono_ns),
      usage_(gpus.size(), interval_ms) {
  for (size_t i = 0; i < gpus.size(); ++i) lost_[i] = gpus[i].lost;
}

void RunAccumulator::AddTick(const TickSample& tick, const JobTreeSample& job) {
  ++ticks_;
  std::vector<GpuPoint> points = GpuPoints(tick);
  points.resize(gpus_.size());
  // The job's CPU as a share of all the host's cores (cpu_pct: 100 = one core busy).
  std::optional<double> job_cpu;
  if (job.cpu_pct && !tick.host.core_pct.empty()) {
    job_cpu = *job.cpu_pct / static_cast<double>(tick.host.core_pct.size());
  }
  usage_.Add((tick.mono_ns - start_mono_ns_) / 1'000'000, points, tick.host, job_cpu);
  for (size_t i = 0; i < tick.gpu_fast.size() && i < per_gpu_.size(); ++i) {
    const GpuFastSample& g = tick.gpu_fast[i];
    if (g.lost) {
      lost_[i] = true;
      continue;
    }
    auto add = [&](RunMetric m, double v) {
      per_gpu_[i].Add(m, v);
      all_.Add(m, v);
    };
    const int64_t t_ms = (tick.mono_ns - start_mono_ns_) / 1'000'000;
    if (g.util_gpu_pct) {
      add(RunMetric::kGpuUtilPct, *g.util_gpu_pct);
      util_series_[i].Add(t_ms, *g.util_gpu_pct);
    }
    if (g.mem_used_bytes && g.mem_total_bytes && *g.mem_total_bytes > 0) {
      const double pct =
          100.0 * static_cast<double>(*g.mem_used_bytes) / static_cast<double>(*g.mem_total_bytes);
      add(RunMetric::kGpuMemPct, pct);
      mem_series_[i].Add(t_ms, pct);
    }
    if (g.power_mw) add(RunMetric::kGpuPowerW, *g.power_mw / 1000.0);
    if (g.temp_c) add(RunMetric::kGpuTempC, *g.temp_c);
  }
  for (size_t i = 0; i < tick.gpu_slow.size() && i < used_.size(); ++i) {
    if (tick.gpu_slow[i].memory_health) health_[i] = tick.gpu_slow[i].memory_health;
    const GpmMetrics& gpm = tick.gpu_slow[i].gpm;
    if (gpm.sm_active_pct) {
      per_gpu_[i].Add(RunMetric::kSmActivePct, *gpm.sm_active_pct);
      all_.Add(RunMetric::kSmActivePct, *gpm.sm_active_pct);
    }
    if (gpm.tensor_active_pct) {
      per_gpu_[i].Add(RunMetric::kTensorActivePct, *gpm.tensor_active_pct);
      all_.Add(RunMetric::kTensorActivePct, *gpm.tensor_active_pct);
    }
    for (const GpuProcess& p : tick.gpu_slow[i].processes) {
      if (std::binary_search(job.pids.begin(), job.pids.end(), static_cast<int>(p.pid))) {
        used_[i] = true;
      }
    }
  }
  if (tick.host.cpu_pct) all_.Add(RunMetric::kCpuPct, *tick.host.cpu_pct);
  if (tick.host.mem_total_bytes && tick.host.mem_available_bytes && *tick.host.mem_total_bytes) {
    const double total = static_cast<double>(*tick.host.mem_total_bytes);
    all_.Add(RunMetric::kMemPct,
             100.0 * (total - static_cast<double>(*tick.host.mem_available_bytes)) / total);
  }
  if (job.rss_bytes) job_rss_max_ = std::max(job_rss_max_.value_or(0), *job.rss_bytes);
}

void RunAccumulator::Finish(int64_t end_mono_ns, RunSummary* summary) const {
  summary->samples = ticks_;
  summary->usage = usage_.Finish((end_mono_ns - start_mono_ns_) / 1'000'000);
  summary->metrics = all_.Stats();
  summary->job_rss_max_bytes = job_rss_max_;
  summary->gpus.clear();
  for (size_t i = 0; i < gpus_.size(); ++i) {
    GpuRunSummary g;
    g.index = gpus_[i].index;
    g.uuid = gpus_[i].uuid;
    g.name = gpus_[i].name;
    g.memory_total_bytes = gpus_[i].memory_total_bytes;
    g.mig = gpus_[i].mig;
    g.label = gpus_[i].Label();
    g.memory_health = health_[i];
    g.lost = lost_[i];
    g.used_by_job = used_[i];
    g.metrics = per_gpu_[i].Stats();
    g.util_histogram = per_gpu_[i].Of(RunMetric::kGpuUtilPct).Bins(10, 10);
    g.util_series = util_series_[i];
    g.mem_series = mem_series_[i];
    summary->gpus.push_back(std::move(g));
  }
}

}  // namespace cgov

namespace cgov {

namespace {
std::optional<uint64_t> MibOf(std::optional<uint64_t> bytes) {
  if (!bytes) return std::nullopt;
  return *bytes >> 20;
}
}  // namespace

Status Analyze(const PriceOptions& price, std::optional<double> work, const std::string& unit,
               const PriceCatalog& catalog, RunSummary* summary) {
  std::vector<ResolvedPrice> prices;
  std::vector<std::string>
      labels;  // findings name GPUs by position unless a MIG instance is among them
  bool mig = false;
  for (const GpuRunSummary& g : summary->gpus) {
    CGOV_ASSIGN_OR_RETURN(ResolvedPrice p, ResolveUnitPrice(price, g.name, g.mig, catalog,
                                                            MibOf(g.memory_total_bytes)));
    prices.push_back(std::move(p));
    labels.push_back(g.label.empty() ? fmt::format("{}", g.index) : g.label);
    mig = mig || g.mig.has_value();
  }
  if (!mig) labels.clear();
  summary->phase_ms = summary->usage.PhaseMs();
  summary->phase_share_pct = SharesPct(summary->phase_ms);
  summary->idle_held = SplitIdleHeld(summary->usage);
  summary->energy = EnergyBlock::Of(summary->usage, std::nullopt);
  summary->cost = ComputeCost(summary->usage, prices, work, unit);
  std::vector<std::optional<MemoryHealth>> health;
  for (const GpuRunSummary& g : summary->gpus) health.push_back(g.memory_health);
  summary->findings = Recommend(summary->usage, summary->cost, prices, {}, labels, health);
  summary->savings = CombineSavings(summary->findings, summary->cost, summary->usage, labels);
  SpendFractionsOntoFindings(summary->savings, &summary->findings);
  return Status::Ok();
}

}  // namespace cgov
