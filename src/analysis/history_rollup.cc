#include "analysis/history_rollup.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <vector>

#include <fmt/format.h>

#include "store/records.h"

namespace cgov {
namespace {

// Version 2 appends the GPM sums (history schema 2), version 3 the utilization bands, version 4
// the energy; older rows decode with what they lack 0.
constexpr uint8_t kGpuHourVersion = 4;
constexpr size_t kGpuHourV1Fields = 2 * kPhaseCount + 17;
constexpr size_t kGpuHourV2Fields = kGpuHourV1Fields + 8;
constexpr size_t kGpuHourV3Fields = kGpuHourV2Fields + kUtilBands;
// Version 2 appends how shared GPUs were split, version 3 the energy; older rows decode with
// them 0.
constexpr uint8_t kIdentityHourVersion = 3;
constexpr size_t kIdentityHourV1Fields = 4 + kPhaseCount;
constexpr size_t kIdentityHourV2Fields = kIdentityHourV1Fields + 2;

// The integer fields of a GpuHour in encoding order (never reorder: it is the on-disk format).
std::vector<int64_t*> GpuHourFields(GpuHour& h) {
  GpuUsage& u = h.usage;
  std::vector<int64_t*> f;
  for (auto& v : u.phase_ms) f.push_back(&v);
  for (auto& v : u.waste_ms_x100) f.push_back(&v);
  for (int64_t* v : {&u.util_ms_x100, &u.unknown_ms, &u.graphics_only_ms, &u.low_ms, &u.high_ms,
                     &u.band_ms, &u.thermal_ms, &u.power_capped_ms, &u.memory_pressure_ms,
                     &u.cpu_bound_ms, &u.iowait_ms, &h.samples, &h.gap_ms, &h.mem_used_mib_ms,
                     &h.mem_known_ms, &h.power_dw_ms, &h.power_known_ms}) {
    f.push_back(v);
  }
  for (int64_t* v :
       {&u.gpm_ms, &u.sm_active_ms_x100, &u.tensor_ms, &u.tensor_active_ms_x100, &u.bound_gpm_ms,
        &u.bound_sm_active_ms_x100, &u.bound_tensor_ms, &u.bound_tensor_active_ms_x100}) {
    f.push_back(v);
  }
  for (auto& v : h.util_band_ms) f.push_back(&v);
  for (auto& v : u.energy_mj) f.push_back(&v);
  f.push_back(&u.energy_unknown_mj);
  f.push_back(&u.energy_known_ms);
  f.push_back(&u.energy_metered_ms);
  return f;
}

std::vector<int64_t*> IdentityHourFields(IdentityHour& h) {
  std::vector<int64_t*> f = {&h.samples, &h.held_ms, &h.idle_held_ms};
  for (auto& v : h.attributed_ms) f.push_back(&v);
  f.push_back(&h.attributed_unknown_ms);
  f.push_back(&h.shared_by_util_ms);
  f.push_back(&h.shared_evenly_ms);
  f.push_back(&h.energy_mj);
  f.push_back(&h.idle_held_energy_mj);
  return f;
}

void PutFields(uint8_t version, const std::vector<int64_t*>& fields, std::string* out) {
  out->push_back(static_cast<char>(version));
  for (const int64_t* v : fields) PutVarint(static_cast<uint64_t>(std::max<int64_t>(0, *v)), out);
}

// An earlier version the current one extends, whose rows hold only its first `fields`.
struct OlderVersion {
  uint8_t version = 0;
  size_t fields = 0;
};

Status GetFields(std::string_view data, uint8_t version, std::string_view context,
                 const std::vector<int64_t*>& fields, size_t* pos,
                 std::initializer_list<OlderVersion> older = {}) {
  const uint8_t found = data.empty() ? 0 : static_cast<uint8_t>(data[0]);
  size_t count = fields.size();
  if (found != version) {
    const auto* o = std::find_if(older.begin(), older.end(),
                                 [&](const OlderVersion& v) { return v.version == found; });
    if (o == older.end())
      return InvalidArgument(fmt::format("{}: unknown rollup encoding", context));
    count = o->fields;
  }
  *pos = 1;
  for (size_t i = 0; i < count; ++i) {
    int64_t* v = fields[i];
    uint64_t raw = 0;
    if (!GetVarint(data, pos, &raw)) {
      return InvalidArgument(fmt::format("{}: truncated rollup", context));
    }
    *v = static_cast<int64_t>(raw);
  }
  return Status::Ok();
}

}  // namespace

void MergeInto(const GpuUsage& from, GpuUsage* into) {
  for (size_t p = 0; p < kPhaseCount; ++p) {
    into->phase_ms[p] += from.phase_ms[p];
    into->waste_ms_x100[p] += from.waste_ms_x100[p];
  }
  into->util_ms_x100 += from.util_ms_x100;
  into->unknown_ms += from.unknown_ms;
  into->graphics_only_ms += from.graphics_only_ms;
  into->low_ms += from.low_ms;
  into->high_ms += from.high_ms;
  into->band_ms += from.band_ms;
  into->transitions += from.transitions;
  into->thermal_ms += from.thermal_ms;
  into->power_capped_ms += from.power_capped_ms;
  into->memory_pressure_ms += from.memory_pressure_ms;
  if (from.memory_max_pct) {
    into->memory_max_pct = std::max(into->memory_max_pct.value_or(0), *from.memory_max_pct);
  }
  into->cpu_bound_ms += from.cpu_bound_ms;
  into->cpu_other_ms += from.cpu_other_ms;
  into->iowait_ms += from.iowait_ms;
  into->gpm_ms += from.gpm_ms;
  into->sm_active_ms_x100 += from.sm_active_ms_x100;
  into->tensor_ms += from.tensor_ms;
  into->tensor_active_ms_x100 += from.tensor_active_ms_x100;
  into->bound_gpm_ms += from.bound_gpm_ms;
  into->bound_sm_active_ms_x100 += from.bound_sm_active_ms_x100;
  into->bound_tensor_ms += from.bound_tensor_ms;
  into->bound_tensor_active_ms_x100 += from.bound_tensor_active_ms_x100;
  for (size_t p = 0; p < kPhaseCount; ++p) into->energy_mj[p] += from.energy_mj[p];
  into->energy_unknown_mj += from.energy_unknown_mj;
  into->energy_known_ms += from.energy_known_ms;
  into->energy_metered_ms += from.energy_metered_ms;
  // Xid counts are not in rollups: the history keeps them in gpu_event (history_summary.cc).
}

void MergeInto(const GpuHour& from, GpuHour* into) {
  MergeInto(from.usage, &into->usage);
  into->samples += from.samples;
  into->gap_ms += from.gap_ms;
  into->mem_used_mib_ms += from.mem_used_mib_ms;
  into->mem_known_ms += from.mem_known_ms;
  into->power_dw_ms += from.power_dw_ms;
  into->power_known_ms += from.power_known_ms;
  for (size_t b = 0; b < kUtilBands; ++b) into->util_band_ms[b] += from.util_band_ms[b];
}

void MergeInto(const IdentityHour& from, IdentityHour* into) {
  into->cost = AddUsd(into->cost, from.cost);
  into->samples += from.samples;
  into->held_ms += from.held_ms;
  into->idle_held_ms += from.idle_held_ms;
  for (size_t p = 0; p < kPhaseCount; ++p) into->attributed_ms[p] += from.attributed_ms[p];
  into->attributed_unknown_ms += from.attributed_unknown_ms;
  into->shared_by_util_ms += from.shared_by_util_ms;
  into->shared_evenly_ms += from.shared_evenly_ms;
  into->energy_mj += from.energy_mj;
  into->idle_held_energy_mj += from.idle_held_energy_mj;
}

void MergeInto(const HourBucket& from, HourBucket* into) {
  for (const auto& [id, g] : from.gpus) MergeInto(g, &into->gpus[id]);
  for (const auto& [key, h] : from.identities) MergeInto(h, &into->identities[key]);
}

void EncodeGpuHour(const GpuHour& hour, std::string* out) {
  GpuHour copy = hour;
  PutFields(kGpuHourVersion, GpuHourFields(copy), out);
  PutVarint(static_cast<uint64_t>(std::max(0, copy.usage.transitions)), out);
  // Peak memory in hundredths of a percent, + 1 so that 0 means unknown.
  const auto max_pct =
      copy.usage.memory_max_pct
          ? static_cast<uint64_t>(std::llround(*copy.usage.memory_max_pct * 100)) + 1
          : 0;
  PutVarint(max_pct, out);
}

Status DecodeGpuHour(std::string_view data, std::string_view context, GpuHour* hour) {
  *hour = GpuHour{};
  size_t pos = 0;
  CGOV_RETURN_IF_ERROR(
      GetFields(data, kGpuHourVersion, context, GpuHourFields(*hour), &pos,
                {{1, kGpuHourV1Fields}, {2, kGpuHourV2Fields}, {3, kGpuHourV3Fields}}));
  uint64_t transitions = 0, max_pct = 0;
  if (!GetVarint(data, &pos, &transitions) || !GetVarint(data, &pos, &max_pct)) {
    return InvalidArgument(fmt::format("{}: truncated rollup", context));
  }
  hour->usage.transitions = static_cast<int>(transitions);
  if (max_pct > 0) hour->usage.memory_max_pct = static_cast<double>(max_pct - 1) / 100.0;
  return Status::Ok();
}

void EncodeIdentityHour(const IdentityHour& hour, std::string* out) {
  IdentityHour copy = hour;
  PutFields(kIdentityHourVersion, IdentityHourFields(copy), out);
}

Status DecodeIdentityHour(std::string_view data, std::string_view context, IdentityHour* hour) {
  *hour = IdentityHour{};
  size_t pos = 0;
  return GetFields(data, kIdentityHourVersion, context, IdentityHourFields(*hour), &pos,
                   {{1, kIdentityHourV1Fields}, {2, kIdentityHourV2Fields}});
}

}  // namespace cgov
