#include "app/fleet/fleet_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "app/fleet/fleet_queries.h"

namespace cgov {
namespace {

constexpr double kMib = 1024.0 * 1024.0;
// A store's answer is at most 1e15 (PrometheusSource); bounded again where it is converted.
constexpr double kLargestValue = 1e15;

bool Plausible(double v) { return std::isfinite(v) && v >= 0 && v <= kLargestValue; }

// A GPU's series, and where a walk through the steps stands in each.
struct GpuSeries {
  uint32_t gpu_id = 0;
  const PromSeries* memory = nullptr;
  const PromSeries* compute = nullptr;
  bool sm_active = false;  // compute is SM activity (else utilization)
  size_t at_memory = 0, at_compute = 0;
};

// A point's time in whole milliseconds (Prometheus answers them to the millisecond).
int64_t PointMs(const std::pair<double, double>& point) { return std::llround(point.first * 1000); }

// The value of `s` at step time `t_ms` (its points are in time order), advancing `*at`.
std::optional<double> ValueAt(const PromSeries* s, int64_t t_ms, size_t* at) {
  if (s == nullptr) return std::nullopt;
  while (*at < s->points.size() && PointMs(s->points[*at]) < t_ms) ++*at;
  if (*at < s->points.size() && PointMs(s->points[*at]) == t_ms) {
    const double v = s->points[*at].second;
    if (Plausible(v)) return v;
  }
  return std::nullopt;
}

// Feeds `add` one tick a step: each GPU with a memory point at that step. Steps are counted in
// whole milliseconds from the first, as Prometheus evaluates a range (start + k x step), never
// by adding a step to a float a thousand times.
template <class Add>
void EachStep(std::vector<GpuSeries>& gpus, int64_t start_ms, int64_t end_ms, int64_t step_ms,
              const RunRecord& run, Add add) {
  for (GpuSeries& g : gpus) g.at_memory = g.at_compute = 0;
  StoredTick tick;
  for (int64_t t = start_ms; t <= end_ms; t += step_ms) {
    tick.gpus.clear();
    for (GpuSeries& g : gpus) {
      const std::optional<double> mem = ValueAt(g.memory, t, &g.at_memory);
      const std::optional<double> compute = ValueAt(g.compute, t, &g.at_compute);
      if (!mem) continue;
      StoredGpu& sg = tick.gpus.emplace_back();
      sg.gpu_id = g.gpu_id;
      sg.processes_known = false;  // Prometheus has the GPU's memory, not its processes'
      sg.set(StoredGpuField::kMemUsedMib, static_cast<uint64_t>(*mem / kMib));
      if (compute) {
        const double pct = std::clamp(*compute, 0.0, 1.0) * 100;
        if (g.sm_active) {
          sg.set(StoredGpuField::kSmActivePctX10, static_cast<uint64_t>(std::lround(pct * 10)));
        } else {
          sg.set(StoredGpuField::kUtilPct, static_cast<uint64_t>(std::lround(pct)));
        }
      }
    }
    // The point at t stands for the step before it.
    add(t - step_ms, run, tick);
  }
}

}  // namespace

int64_t FleetPlanStepMs(int64_t since_ms, int64_t until_ms, size_t gpus, int64_t point_budget) {
  const int64_t window = std::max<int64_t>(1, until_ms - since_ms);
  int64_t step = std::max<int64_t>(1000, (window + 9'999) / 10'000);
  if (gpus > 0) {
    const int64_t points = point_budget / static_cast<int64_t>(gpus);
    step =
        std::max(step, (window + std::max<int64_t>(1, points) - 1) / std::max<int64_t>(1, points));
  }
  return (step + 999) / 1000 * 1000;  // whole seconds
}

Result<PlanInput> LoadFleetPlan(const PromQuery& prometheus, const HistoryInput& fleet,
                                int64_t since_ms, int64_t until_ms, const PlanOptions& options) {
  PlanInput in;
  in.options = options;
  size_t whole = 0;
  for (const GpuRecord& g : fleet.gpus) whole += g.mig ? 0 : 1;
  const int64_t step_ms = FleetPlanStepMs(since_ms, until_ms, whole);
  // The first step ends a step after the window's start.
  const int64_t start_ms = since_ms + step_ms;
  if (start_ms > until_ms) return in;  // a window shorter than a step: nothing to plan
  const double end_s = static_cast<double>(until_ms) / 1000;
  auto range = [&](std::string expr) {
    return PromRequest{.expr = std::move(expr),
                       .start_s = static_cast<double>(start_ms) / 1000,
                       .end_s = end_s,
                       .step_s = static_cast<double>(step_ms) / 1000};
  };
  CGOV_ASSIGN_OR_RETURN(
      auto answers,
      prometheus.QueryAll({range(PlanStep("cgov_gpu_memory_used_bytes", true, step_ms)),
                           range(PlanStep("cgov_gpu_sm_active_ratio", false, step_ms)),
                           range(PlanStep("cgov_gpu_utilization_ratio", false, step_ms)),
                           {.expr = PlanMemoryTotal(until_ms - since_ms), .time_s = end_s}}));
  // Whole GPUs by (host, UUID) as the fleet report numbered them.
  std::map<std::pair<std::string, std::string>, uint32_t> ids;
  for (const GpuRecord& g : fleet.gpus) {
    if (!g.mig) ids[{g.host, g.uuid}] = g.id;
  }
  auto id_of = [&](const PromSeries& s) -> std::optional<uint32_t> {
    if (!s.Label("GPU_I_ID").empty()) return std::nullopt;  // MIG instances are not moved
    auto it = ids.find({s.Label("Hostname"), s.Label("UUID")});
    return it == ids.end() ? std::nullopt : std::optional<uint32_t>(it->second);
  };
  std::map<uint32_t, GpuSeries> series;
  for (const PromSeries& s : answers[0]) {
    if (auto id = id_of(s)) series[*id].memory = &s, series[*id].gpu_id = *id;
  }
  for (int k : {1, 2}) {
    for (const PromSeries& s : answers[static_cast<size_t>(k)]) {
      auto id = id_of(s);
      if (!id || !series.count(*id) || series[*id].compute != nullptr) continue;
      series[*id].compute = &s;
      series[*id].sm_active = k == 1;
    }
  }
  // Each GPU's record with its whole memory, which the packing fills.
  std::vector<GpuRecord> gpus;
  std::map<uint32_t, uint64_t> total_mib;
  for (const PromSeries& s : answers[3]) {
    auto id = id_of(s);
    if (id && !s.points.empty() && Plausible(s.points[0].second) && s.points[0].second > 0) {
      total_mib[*id] = static_cast<uint64_t>(s.points[0].second / kMib);
    }
  }
  for (GpuRecord g : fleet.gpus) {
    if (auto t = total_mib.find(g.id); t != total_mib.end()) g.mem_total_mib = t->second;
    gpus.push_back(std::move(g));
  }
  std::vector<GpuSeries> walk;
  for (auto& [id, g] : series) walk.push_back(g);
  const RunRecord run{1, since_ms, step_ms, "prometheus", ""};
  PlanProfiler profiler;
  EachStep(walk, start_ms, until_ms, step_ms, run,
           [&](int64_t ts, const RunRecord& r, const StoredTick& t) { profiler.Add(ts, r, t); });
  profiler.Finish(until_ms);
  in.profile = profiler.profile();
  in.groups = PackGroups(in.profile, gpus, options);
  PlanReplay replay(&in.groups, options);
  EachStep(walk, start_ms, until_ms, step_ms, run,
           [&](int64_t ts, const RunRecord& r, const StoredTick& t) { replay.Add(ts, r, t); });
  replay.Finish(until_ms);
  in.source_note = fmt::format(
      "from Prometheus at a {} s step: each GPU's memory used (the step's highest) and compute "
      "(the step's mean{}); no workloads (Prometheus keeps no memory per process)",
      step_ms / 1000, step_ms > 1000 ? ": bursts shorter than a step are averaged" : "");
  return in;
}

}  // namespace cgov
