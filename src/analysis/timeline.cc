#include "analysis/timeline.h"

#include <algorithm>
#include <numeric>

namespace cgov {
namespace {

constexpr uint64_t kThermalBits = 0x20 | 0x40;  // SW and HW thermal slowdown
constexpr uint64_t kPowerBits = 0x4 | 0x80;     // SW power cap, HW power brake

int64_t PctX100(double pct) { return static_cast<int64_t>(std::clamp(pct, 0.0, 100.0) + 0.5); }

void AddGpm(const GpuPoint& g, bool bound, int64_t duration_ms, GpuUsage* u) {
  if (!g.sm_active_pct) return;
  const int64_t sm = duration_ms * PctX100(*g.sm_active_pct);
  u->gpm_ms += duration_ms;
  u->sm_active_ms_x100 += sm;
  if (bound) {
    u->bound_gpm_ms += duration_ms;
    u->bound_sm_active_ms_x100 += sm;
  }
  if (!g.tensor_active_pct) return;
  const int64_t tensor = duration_ms * PctX100(*g.tensor_active_pct);
  u->tensor_ms += duration_ms;
  u->tensor_active_ms_x100 += tensor;
  if (bound) {
    u->bound_tensor_ms += duration_ms;
    u->bound_tensor_active_ms_x100 += tensor;
  }
}

}  // namespace

std::optional<Phase> CreditGpuSample(const GpuPoint& g, const SampleHost& host, int64_t duration_ms,
                                     const PhaseThresholds& phases,
                                     const PatternThresholds& patterns, int8_t* swing_state,
                                     GpuUsage* out) {
  GpuUsage& u = *out;
  const int64_t energy = g.power_mw ? EnergyOf(*g.power_mw, duration_ms) : 0;
  if (g.power_mw) u.energy_known_ms += duration_ms;
  if (!g.util_pct) {
    u.unknown_ms += duration_ms;
    u.energy_unknown_mj += energy;
    return std::nullopt;
  }
  const double util = std::clamp(*g.util_pct, 0.0, 100.0);
  const Phase phase = Classify(util, g.compute_memory_bytes, phases, g.allocated);
  const auto pi = static_cast<size_t>(phase);
  u.energy_mj[pi] += energy;
  const int64_t util_x100 = PctX100(util);  // NVML reports whole percents
  u.phase_ms[pi] += duration_ms;
  u.util_ms_x100 += duration_ms * util_x100;
  u.waste_ms_x100[pi] += duration_ms * (100 - util_x100);
  if (phase == Phase::kTrulyIdle && g.graphics_only_memory_bytes > phases.held_memory_bytes) {
    u.graphics_only_ms += duration_ms;
  }
  const bool low = util < phases.idle_util_pct;
  const bool high = util >= patterns.high_util_pct;
  if (low) u.low_ms += duration_ms;
  if (high) u.high_ms += duration_ms;
  if (util >= patterns.band_low_pct && util <= patterns.band_high_pct) u.band_ms += duration_ms;
  if (util < patterns.trough_util_pct || high) {
    const int8_t now = high ? 1 : 0;
    if (*swing_state >= 0 && *swing_state != now) ++u.transitions;
    *swing_state = now;
  }
  AddGpm(g, phase == Phase::kComputeBound, duration_ms, &u);
  const uint64_t reasons = g.clock_reasons.value_or(0);
  if (!low && (reasons & kThermalBits)) u.thermal_ms += duration_ms;
  if (!low && (reasons & kPowerBits)) u.power_capped_ms += duration_ms;
  if (g.memory_pct) {
    u.memory_max_pct = std::max(u.memory_max_pct.value_or(0), *g.memory_pct);
    if (*g.memory_pct > patterns.memory_pressure_pct) u.memory_pressure_ms += duration_ms;
  }
  const bool starved = util < phases.productive_util_pct;
  if (starved && host.cpu_pct && *host.cpu_pct >= patterns.cpu_saturated_pct) {
    // Whose CPU: the job's own processes, or another tenant's when the job used under half.
    if (host.job_cpu_pct && *host.job_cpu_pct < *host.cpu_pct / 2) {
      u.cpu_other_ms += duration_ms;
    } else {
      u.cpu_bound_ms += duration_ms;
    }
  }
  if (starved && host.iowait_pct && *host.iowait_pct >= patterns.iowait_pct) {
    u.iowait_ms += duration_ms;
  }
  return phase;
}

std::optional<Phase> PhaseOf(const GpuPoint& point, const PhaseThresholds& thresholds) {
  if (!point.util_pct) return std::nullopt;
  return Classify(std::clamp(*point.util_pct, 0.0, 100.0), point.compute_memory_bytes, thresholds,
                  point.allocated);
}

std::vector<GpuPoint> GpuPoints(const TickSample& tick) {
  std::vector<GpuPoint> points(tick.gpu_fast.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const GpuFastSample& f = tick.gpu_fast[i];
    GpuPoint& p = points[i];
    p.xid_errors = f.xid_errors;  // known for a lost GPU too: Xid 79 is how it got lost
    p.last_xid = f.last_xid;
    if (f.lost) continue;  // everything else unknown
    if (f.util_gpu_pct) p.util_pct = *f.util_gpu_pct;
    p.power_mw = f.power_mw;
    if (f.mem_used_bytes && f.mem_total_bytes && *f.mem_total_bytes > 0) {
      p.memory_pct =
          100.0 * static_cast<double>(*f.mem_used_bytes) / static_cast<double>(*f.mem_total_bytes);
    }
    p.clock_reasons = f.clock_reasons;
    if (i < tick.gpu_slow.size()) {
      p.sm_active_pct = tick.gpu_slow[i].gpm.sm_active_pct;
      p.tensor_active_pct = tick.gpu_slow[i].gpm.tensor_active_pct;
    }
    if (i < tick.gpu_slow.size() && tick.gpu_slow[i].processes_known) {
      uint64_t compute = 0;
      for (const GpuProcess& proc : tick.gpu_slow[i].processes) {
        const uint64_t used = proc.used_memory_bytes.value_or(0);
        if (proc.compute) {
          compute += used;
        } else if (proc.graphics) {
          p.graphics_only_memory_bytes += used;
        }
      }
      p.compute_memory_bytes = compute;
    }
  }
  return points;
}

int64_t GpuUsage::KnownMs() const {
  return std::accumulate(phase_ms.begin(), phase_ms.end(), int64_t{0});
}

int64_t GpuUsage::EnergyMj() const {
  return std::accumulate(energy_mj.begin(), energy_mj.end(), energy_unknown_mj);
}

int64_t GpuUsage::IdleEnergyMj() const {
  return energy_mj[static_cast<size_t>(Phase::kTrulyIdle)] +
         energy_mj[static_cast<size_t>(Phase::kIdleHeld)];
}

EnergyBlock EnergyBlock::Of(const UsageTotals& usage, std::optional<double> grid_g_per_kwh) {
  EnergyBlock e;
  for (const GpuUsage& u : usage.gpus) {
    for (size_t p = 0; p < kPhaseCount; ++p) e.phase_mj[p] += u.energy_mj[p];
    e.unknown_phase_mj += u.energy_unknown_mj;
    e.total_mj += u.EnergyMj();
    e.idle_mj += u.IdleEnergyMj();
    e.known_ms += u.energy_known_ms;
    e.metered_ms += u.energy_metered_ms;
  }
  e.grid_g_per_kwh = grid_g_per_kwh;
  e.all_ms = usage.HeldMs();
  auto pct = [](int64_t part, int64_t whole) {
    return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  e.known_pct = pct(e.known_ms, e.all_ms);
  e.metered_pct = pct(e.metered_ms, e.all_ms);
  e.idle_pct = pct(e.idle_mj, e.total_mj);
  return e;
}

std::optional<double> GpuUsage::MeanUtilPct() const {
  const int64_t known = KnownMs();
  if (known <= 0) return std::nullopt;
  return static_cast<double>(util_ms_x100) / static_cast<double>(known);
}

std::array<int64_t, kPhaseCount> UsageTotals::PhaseMs() const {
  std::array<int64_t, kPhaseCount> out{};
  for (const GpuUsage& g : gpus) {
    for (size_t p = 0; p < kPhaseCount; ++p) out[p] += g.phase_ms[p];
  }
  return out;
}

int64_t UsageTotals::GraphicsOnlyMs() const {
  int64_t sum = 0;
  for (const GpuUsage& g : gpus) sum += g.graphics_only_ms;
  return sum;
}

int64_t UsageTotals::UnknownMs() const {
  int64_t sum = 0;
  for (const GpuUsage& g : gpus) sum += g.unknown_ms;
  return sum;
}

int64_t UsageTotals::KnownMs() const {
  int64_t sum = 0;
  for (const GpuUsage& g : gpus) sum += g.KnownMs();
  return sum;
}

int64_t UsageTotals::HeldMs() const {
  int64_t sum = 0;
  for (const GpuUsage& g : gpus) sum += g.HeldMs();
  return sum;
}

int64_t UsageTotals::UtilMsX100() const {
  int64_t sum = 0;
  for (const GpuUsage& g : gpus) sum += g.util_ms_x100;
  return sum;
}

UsageAccumulator::UsageAccumulator(size_t gpus, int64_t interval_ms, PhaseThresholds phases,
                                   PatternThresholds patterns)
    : phases_(phases), patterns_(patterns) {
  state_.totals.interval_ms = interval_ms;
  state_.totals.gpus.resize(gpus);
  state_.last_state.assign(gpus, -1);
}

void UsageAccumulator::Add(int64_t t_ms, const std::vector<GpuPoint>& gpus, const HostSample& host,
                           std::optional<double> job_cpu_pct) {
  if (pending_) {
    const int64_t elapsed = std::max<int64_t>(0, t_ms - pending_->t_ms);
    const int64_t cap = 2 * state_.totals.interval_ms;
    state_.totals.gap_ms += std::max<int64_t>(0, elapsed - cap);
    Commit(*pending_, std::min(elapsed, cap), &state_);
  }
  // Assigned into: the GPU vector keeps its capacity from tick to tick.
  // (Not emplace(): clang takes a nested struct with member initializers for one that cannot be
  // default-constructed there.)
  if (!pending_) pending_ = Pending{};
  pending_->t_ms = t_ms;
  pending_->gpus = gpus;
  pending_->host_cpu_pct = host.cpu_pct;
  pending_->host_iowait_pct = host.iowait_pct;
  pending_->job_cpu_pct = job_cpu_pct;
}

UsageTotals UsageAccumulator::Finish(int64_t end_ms) const {
  State state = state_;
  if (pending_) {
    const int64_t elapsed = std::max<int64_t>(0, end_ms - pending_->t_ms);
    const int64_t cap = 2 * state.totals.interval_ms;
    state.totals.gap_ms += std::max<int64_t>(0, elapsed - cap);
    Commit(*pending_, std::min(elapsed, cap), &state);
  }
  UsageTotals totals = state.totals;
  if (state.first_active_ms) {
    totals.idle_head_ms = *state.first_active_ms;
    totals.idle_tail_ms = std::max<int64_t>(0, end_ms - state.last_active_end_ms);
    totals.tail_phase_ms = state.since_active;
  } else {
    totals.idle_head_ms = totals.covered_ms;  // never active: all head, no tail
  }
  return totals;
}

void UsageAccumulator::Commit(const Pending& p, int64_t duration_ms, State* state) const {
  UsageTotals& totals = state->totals;
  totals.covered_ms += duration_ms;
  bool any_active = false;
  std::array<int64_t, kPhaseCount> tick_phase_ms{};
  for (size_t i = 0; i < p.gpus.size() && i < totals.gpus.size(); ++i) {
    const GpuPoint& g = p.gpus[i];
    GpuUsage& u = totals.gpus[i];
    if (g.xid_errors && *g.xid_errors > u.xid_errors) {  // a counter from 0 at the start
      if (u.xid_errors == 0) u.first_xid_ms = p.t_ms;
      u.xid_errors = *g.xid_errors;
      u.last_xid = g.last_xid;
    }
    const SampleHost host{p.host_cpu_pct, p.host_iowait_pct, p.job_cpu_pct};
    const std::optional<Phase> phase =
        CreditGpuSample(g, host, duration_ms, phases_, patterns_, &state->last_state[i], &u);
    if (!phase) continue;
    tick_phase_ms[static_cast<size_t>(*phase)] += duration_ms;
    if (*g.util_pct >= phases_.idle_util_pct) any_active = true;
  }
  if (any_active) {
    if (!state->first_active_ms) state->first_active_ms = p.t_ms;
    state->last_active_end_ms = p.t_ms + duration_ms;
    state->since_active = {};
  } else {
    for (size_t k = 0; k < kPhaseCount; ++k) state->since_active[k] += tick_phase_ms[k];
  }
}

}  // namespace cgov
