// Where the GPU-milliseconds of a run went: phases, effective use, waste, and the evidence the
// findings need (patterns over time), accumulated tick by tick in memory independent of length.
//
// Each GPU-sample stands for the time to the next tick, at most 2x the interval; time beyond that
// is a gap: reported, never filled. The last sample stands for the time to the end of the run,
// with the same cap. A sample without a utilization reading (lost GPU, unsupported field) counts
// as held-but-unknown time: billed, never classified.
#ifndef CGOV_ANALYSIS_TIMELINE_H_
#define CGOV_ANALYSIS_TIMELINE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "analysis/phases.h"
#include "core/money.h"
#include "telemetry/tick_sample.h"

namespace cgov {

// What the analysis needs of one GPU at one tick.
struct GpuPoint {
  std::optional<double> util_pct;
  std::optional<uint64_t>
      compute_memory_bytes;                 // held by compute processes; unknown without a list
  uint64_t graphics_only_memory_bytes = 0;  // held by processes that only draw
  bool allocated = false;  // the kubelet allocated it to a pod (a stored tick's allocations)
  std::optional<double> memory_pct;  // device memory used / total
  std::optional<uint64_t> clock_reasons;
  std::optional<uint64_t> xid_errors;  // counter since the sampler started watching
  std::optional<uint32_t> last_xid;
  std::optional<double> sm_active_pct;  // NVML GPM (Hopper and later)
  std::optional<double> tensor_active_pct;
  std::optional<uint32_t> power_mw;  // the board's power draw (the energy a sample is credited)
};

// The energy of `duration_ms` at `power_mw`, mJ (rounded to the nearest), at most
// kMaxSampleEnergyMj: a sample's duration comes from a database, which may be anyone's file.
inline constexpr int64_t kMaxSampleEnergyMj = 1'000'000'000'000;  // 1 GJ: a GPU-week at 1.6 kW
inline int64_t EnergyOf(uint32_t power_mw, int64_t duration_ms) {
  if (duration_ms <= 0) return 0;
  const Int128 mj = (static_cast<Int128>(power_mw) * duration_ms + 500) / 1000;
  return mj > kMaxSampleEnergyMj ? kMaxSampleEnergyMj : static_cast<int64_t>(mj);
}

// Reduces a tick to what the analysis needs (pure).
std::vector<GpuPoint> GpuPoints(const TickSample& tick);

// The phase of one GPU-sample (its utilization clamped to 0-100); nullopt when the utilization
// is unknown.
std::optional<Phase> PhaseOf(const GpuPoint& point, const PhaseThresholds& thresholds);

// Pattern thresholds (docs/analysis.md explains each).
struct PatternThresholds {
  double high_util_pct = 70;    // "near 100" side of a burst
  double trough_util_pct = 50;  // the other side: a swing from below this to high_util_pct
                                // is a burst (15 <-> 95 and 30 <-> 100 are, 55 <-> 75 not)
  double band_low_pct = 30;     // steady-low band, both ends included
  double band_high_pct = 60;
  double memory_pressure_pct = 85;
  double cpu_saturated_pct = 90;
  double iowait_pct = 20;
};

struct GpuUsage {
  std::array<int64_t, kPhaseCount> phase_ms{};
  std::array<int64_t, kPhaseCount> waste_ms_x100{};  // sum of ms x (100 - util), per phase
  int64_t util_ms_x100 = 0;                          // sum of ms x util: effective time x 100
  int64_t unknown_ms = 0;                            // held, utilization unknown
  int64_t graphics_only_ms = 0;                      // idle, only a graphics process held memory
  int64_t low_ms = 0, high_ms = 0, band_ms = 0;  // u < idle, u >= high, band_low <= u <= band_high
  int transitions = 0;  // trough (< trough_util_pct) <-> high switches (mid values skipped)
  int64_t thermal_ms = 0, power_capped_ms = 0;  // busy while those clock reasons were set
  int64_t memory_pressure_ms = 0;
  std::optional<double> memory_max_pct;
  int64_t cpu_bound_ms = 0;  // not productive while the host CPU was saturated (by the job, or
                             // by whom is unknown)
  int64_t cpu_other_ms = 0;  // ... saturated by processes outside the job (it used < half);
                             // known in `cgov run` only (not kept in history rollups)
  int64_t iowait_ms = 0;     // not productive while the host waited for I/O
  uint64_t xid_errors = 0;   // Xid critical errors in the window
  std::optional<uint32_t> last_xid;  // the code of the last one
  int64_t first_xid_ms = -1;         // when the first was seen (since the start); -1: none
  // NVML GPM, over the time it was known (utilization known too): ms and sums of ms x percent.
  int64_t gpm_ms = 0;
  int64_t sm_active_ms_x100 = 0;
  int64_t tensor_ms = 0;  // of gpm_ms, with tensor activity known
  int64_t tensor_active_ms_x100 = 0;
  // The same over the compute-bound time (utilization.gpu >= 90 %).
  int64_t bound_gpm_ms = 0;
  int64_t bound_sm_active_ms_x100 = 0;
  int64_t bound_tensor_ms = 0;
  int64_t bound_tensor_active_ms_x100 = 0;
  // Energy (issue 62): power x time, mJ, over the time the power reading was known
  // (energy_known_ms), by the phase the GPU was in; energy_unknown_mj while its utilization
  // (so its phase) was not known. EnergyOf is the one rounding.
  std::array<int64_t, kPhaseCount> energy_mj{};
  int64_t energy_unknown_mj = 0;
  int64_t energy_known_ms = 0;
  // Of the time, what lay in windows the driver's energy counter measured (the history: its
  // energy there is the counter's, GpuRunState); the rest is power x time alone.
  int64_t energy_metered_ms = 0;

  int64_t KnownMs() const;
  int64_t EnergyMj() const;      // all of it
  int64_t IdleEnergyMj() const;  // burned while truly idle or idle-held
  int64_t HeldMs() const { return KnownMs() + unknown_ms; }
  std::optional<double> MeanUtilPct() const;
};

// The patterns of a GpuUsage the findings read, by the key /metrics serves each under
// (cgov_gpu_pattern_seconds_total{pattern}) and the fleet report reads back: seconds, or for a
// field of ms x percent (`x100`), seconds x ratio. `gpm`: known on GPUs with NVML GPM only (served
// once the GPU has GPM time). Swings (`transitions`) are a count: cgov_gpu_swings_total.
struct UsagePattern {
  const char* key;
  int64_t GpuUsage::*field;
  bool x100 = false;
  bool gpm = false;
};
inline constexpr UsagePattern kUsagePatterns[] = {
    {"low", &GpuUsage::low_ms},
    {"high", &GpuUsage::high_ms},
    {"band", &GpuUsage::band_ms},
    {"graphics_only", &GpuUsage::graphics_only_ms},
    {"thermal", &GpuUsage::thermal_ms},
    {"power_capped", &GpuUsage::power_capped_ms},
    {"memory_pressure", &GpuUsage::memory_pressure_ms},
    {"cpu_bound", &GpuUsage::cpu_bound_ms},
    {"iowait", &GpuUsage::iowait_ms},
    {"gpm", &GpuUsage::gpm_ms, false, true},
    {"sm_active", &GpuUsage::sm_active_ms_x100, true, true},
    {"tensor", &GpuUsage::tensor_ms, false, true},
    {"tensor_active", &GpuUsage::tensor_active_ms_x100, true, true},
    {"bound_gpm", &GpuUsage::bound_gpm_ms, false, true},
    {"bound_sm_active", &GpuUsage::bound_sm_active_ms_x100, true, true},
    {"bound_tensor", &GpuUsage::bound_tensor_ms, false, true},
    {"bound_tensor_active", &GpuUsage::bound_tensor_active_ms_x100, true, true},
};

struct UsageTotals {
  int64_t interval_ms = 0;
  int64_t covered_ms = 0;  // wall time the samples stand for
  int64_t gap_ms = 0;      // wall time without data
  std::vector<GpuUsage> gpus;
  // Wall time before the first sample with any GPU at or above the idle threshold (the whole
  // covered time when none was), and after the last one.
  int64_t idle_head_ms = 0;
  int64_t idle_tail_ms = 0;
  std::array<int64_t, kPhaseCount> tail_phase_ms{};  // GPU-ms of the tail, by phase

  std::array<int64_t, kPhaseCount> PhaseMs() const;  // over all GPUs
  int64_t GraphicsOnlyMs() const;
  int64_t UnknownMs() const;
  int64_t KnownMs() const;
  int64_t HeldMs() const;
  int64_t UtilMsX100() const;
};

// A window's energy (issue 62), power x time by the one per-sample rule (CreditGpuSample;
// docs/analysis.md, "Energy"): mJ, as credited. Of(): the GPUs' sums (`cgov run`'s, and the
// history report's before its holders are known).
struct EnergyBlock {
  int64_t total_mj = 0;
  std::array<int64_t, kPhaseCount> phase_mj{};
  int64_t unknown_phase_mj = 0;  // while a GPU's utilization was unknown
  int64_t idle_mj = 0;           // burned while truly idle or idle-held
  int64_t unattributed_mj = 0;   // while no compute process held the GPU (history only)
  int64_t known_ms = 0;          // the GPU-time with a power reading
  int64_t metered_ms = 0;        // of the time, what the driver's counter measured (history)
  int64_t all_ms = 0;            // all of the GPU-time (held: utilization known or not)
  // The shares every view shows: of all the GPU-time, with a power reading and measured by the
  // counter; of the energy, idle.
  double known_pct = 0, metered_pct = 0, idle_pct = 0;
  std::optional<double> grid_g_per_kwh;  // as given (--grid-intensity)
  // --energy-price: dollars a kWh (none assumed). The energy's cost is its own figure, beside
  // the GPU-time dollars, never added to them (those are what the savings are bounded by).
  std::optional<MicroUsd> price_per_kwh;
  // kWh of `mj`, and its CO2e in kg at the grid intensity given (none without one).
  static double Kwh(int64_t mj) { return static_cast<double>(mj) / 3.6e9; }
  std::optional<double> Co2eKg(int64_t mj) const {
    if (!grid_g_per_kwh) return std::nullopt;
    return Kwh(mj) * *grid_g_per_kwh / 1000.0;
  }
  // What `mj` cost at the price given (EnergyCostOf: the one rounding), none without one.
  std::optional<MicroUsd> CostOf(int64_t mj) const {
    if (!price_per_kwh) return std::nullopt;
    return EnergyCostOf(*price_per_kwh, mj);
  }
  static EnergyBlock Of(const UsageTotals& usage, std::optional<double> grid_g_per_kwh);
};

// What a sample's host was doing (the patterns that blame the host need it).
struct SampleHost {
  std::optional<double> cpu_pct, iowait_pct;
  std::optional<double> job_cpu_pct;  // the job's own processes' share (cgov run only)
};

// One GPU's sample standing for `duration_ms`, added to `u`: its phase time, utilization and
// waste, the patterns (low/high/band, swings between trough and high, clock reasons, memory
// pressure, a saturated host CPU or I/O) and GPM; not its Xid counter (a running count, kept by
// UsageAccumulator; the history keeps Xids as events). `swing_state`: the GPU's last trough (0)
// or high (1) state in this run, -1 before any; a change is a swing, counted in the sample that
// makes it. The one rule every source counts by: `cgov run`'s totals, the history's rollups and
// /metrics' counters (analysis/history_aggregator.h CreditOf). Returns the phase (none:
// utilization unknown, counted as unknown time).
std::optional<Phase> CreditGpuSample(const GpuPoint& g, const SampleHost& host, int64_t duration_ms,
                                     const PhaseThresholds& phases,
                                     const PatternThresholds& patterns, int8_t* swing_state,
                                     GpuUsage* u);

// Not thread-safe.
class UsageAccumulator {
 public:
  UsageAccumulator(size_t gpus, int64_t interval_ms, PhaseThresholds phases = {},
                   PatternThresholds patterns = {});

  // `t_ms`: the tick's time since the start of the run; ticks arrive in order. `job_cpu_pct`:
  // the job's own processes' share of all the host's cores (0..100), when known (cgov run).
  void Add(int64_t t_ms, const std::vector<GpuPoint>& gpus, const HostSample& host,
           std::optional<double> job_cpu_pct = std::nullopt);
  // The totals with the last sample closed at `end_ms`.
  UsageTotals Finish(int64_t end_ms) const;

 private:
  struct Pending {
    int64_t t_ms = 0;
    std::vector<GpuPoint> gpus;
    std::optional<double> host_cpu_pct, host_iowait_pct;
    std::optional<double> job_cpu_pct;
  };
  struct State {
    UsageTotals totals;
    std::vector<int8_t> last_state;  // per GPU: CreditGpuSample's swing state
    std::optional<int64_t> first_active_ms;
    int64_t last_active_end_ms = 0;
    std::array<int64_t, kPhaseCount> since_active{};  // GPU-ms by phase after the last active tick
  };
  void Commit(const Pending& p, int64_t duration_ms, State* state) const;

  PhaseThresholds phases_;
  PatternThresholds patterns_;
  std::optional<Pending> pending_;
  State state_;
};

}  // namespace cgov

#endif  // CGOV_ANALYSIS_TIMELINE_H_
