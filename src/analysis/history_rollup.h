// Hourly rollups of the history database: per GPU, where its time went (the same GpuUsage the
// run analysis computes), and per identity and GPU, the time it held the GPU. Rollups add up:
// the totals of a window are the sums of its hours. Encodings: docs/history-db.md.
#ifndef CGOV_ANALYSIS_HISTORY_ROLLUP_H_
#define CGOV_ANALYSIS_HISTORY_ROLLUP_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "analysis/timeline.h"
#include "core/money.h"
#include "core/status.h"

namespace cgov {

// Utilization bands of a GPU-time histogram: [0, 10), [10, 20) ... [90, 100] %.
inline constexpr size_t kUtilBands = 10;

// The band of a utilization (whole percents; 100 and above in the last).
inline size_t UtilBand(double util_pct) {
  if (!(util_pct > 0)) return 0;
  return util_pct >= 90 ? kUtilBands - 1 : static_cast<size_t>(util_pct / 10);
}

struct GpuHour {
  GpuUsage usage;
  int64_t samples = 0;
  int64_t gap_ms = 0;           // time without data between ticks closer than a run end
  int64_t mem_used_mib_ms = 0;  // sum of device memory used (MiB) x ms
  int64_t mem_known_ms = 0;
  int64_t power_dw_ms = 0;  // sum of power (0.1 W) x ms
  int64_t power_known_ms = 0;
  // The time its utilization was known, by band (version 3; 0 in rows written before): the
  // distribution behind its mean and percentiles.
  std::array<int64_t, kUtilBands> util_band_ms{};
};

struct IdentityHour {
  int64_t samples = 0;
  int64_t held_ms = 0;       // time it had a process on the GPU (every holder gets all of it)
  int64_t idle_held_ms = 0;  // of which the GPU was idle-held and it held compute memory
  // The GPU's time split between the identities holding compute memory at each sample, by
  // phase: these add up to the GPU's attributed time (no double counting). A busy GPU shared
  // by holders with per-process utilization readings is split by them, else evenly (SplitRule).
  std::array<int64_t, kPhaseCount> attributed_ms{};
  int64_t attributed_unknown_ms = 0;
  // Of the attributed time, what came from a shared GPU: split by utilization, or evenly
  // (version 2; 0 in rows written before).
  int64_t shared_by_util_ms = 0;
  int64_t shared_evenly_ms = 0;
  // Its share of the GPU's energy, split as the time is (mJ; version 3, 0 in rows written
  // before), and of that, what it burned while the GPU was idle-held.
  int64_t energy_mj = 0;
  int64_t idle_held_energy_mj = 0;
  // What the source priced its attributed time at when it was credited (the fleet report: each
  // daemon's cgov_identity_cost_usd_total), read where HistoryInput::identity_costs says so; not
  // in the database's rollups (they are priced at the GPU's price when summarized).
  MicroUsd cost = 0;

  int64_t AttributedMs() const {
    int64_t sum = attributed_unknown_ms;
    for (int64_t ms : attributed_ms) sum += ms;
    return sum;
  }
};

struct HourBucket {
  int64_t hour = 0;                                                  // Unix ms / kHourMs
  std::map<uint32_t, GpuHour> gpus;                                  // by GPU id
  std::map<std::pair<uint32_t, uint32_t>, IdentityHour> identities;  // by (identity id, GPU id)
};

void MergeInto(const GpuUsage& from, GpuUsage* into);
void MergeInto(const GpuHour& from, GpuHour* into);
void MergeInto(const IdentityHour& from, IdentityHour* into);
void MergeInto(const HourBucket& from, HourBucket* into);

void EncodeGpuHour(const GpuHour& hour, std::string* out);
Status DecodeGpuHour(std::string_view data, std::string_view context, GpuHour* hour);
void EncodeIdentityHour(const IdentityHour& hour, std::string* out);
Status DecodeIdentityHour(std::string_view data, std::string_view context, IdentityHour* hour);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_HISTORY_ROLLUP_H_
