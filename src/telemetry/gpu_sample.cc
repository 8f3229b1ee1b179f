#include "telemetry/gpu_sample.h"

#include <algorithm>

namespace cgov {

std::string_view GpuFieldName(GpuField field) {
  switch (field) {
    case GpuField::kUtilization:
      return "utilization";
    case GpuField::kMemory:
      return "memory";
    case GpuField::kPower:
      return "power";
    case GpuField::kPowerLimit:
      return "power_limit";
    case GpuField::kTemperature:
      return "temperature";
    case GpuField::kSmClock:
      return "sm_clock";
    case GpuField::kMemClock:
      return "mem_clock";
    case GpuField::kClockReasons:
      return "clock_reasons";
    case GpuField::kEncoder:
      return "encoder";
    case GpuField::kDecoder:
      return "decoder";
    case GpuField::kPcieThroughput:
      return "pcie_throughput";
    case GpuField::kComputeProcesses:
      return "compute_processes";
    case GpuField::kGraphicsProcesses:
      return "graphics_processes";
    case GpuField::kProcessUtilization:
      return "process_utilization";
    case GpuField::kMigMode:
      return "mig_mode";
    case GpuField::kTotalEnergy:
      return "total_energy";
    case GpuField::kMpsProcesses:
      return "mps_processes";
    case GpuField::kXidEvents:
      return "xid_events";
    case GpuField::kGpm:
      return "gpm";
    case GpuField::kMemoryHealth:
      return "memory_health";
  }
  return "unknown";
}

std::string GpuLabel(unsigned index, const std::optional<MigInstance>& mig) {
  std::string label = std::to_string(index);
  if (mig) {
    label += " MIG " + (mig->profile.empty() ? std::string("?") : mig->profile) + " GI " +
             std::to_string(mig->gpu_instance_id);
  }
  return label;
}

int64_t EncodeMemoryHealth(const MemoryHealth& h) {
  const uint64_t severe = h.row_remapping ? h.remapped_uncorrectable : h.retired_dbe;
  const uint64_t mild = std::min<uint64_t>(h.row_remapping ? h.remapped_correctable : h.retired_sbe,
                                           (1ULL << 23) - 1);
  const uint64_t flags = (h.remap_pending ? 1u : 0u) | (h.remap_failure ? 2u : 0u) |
                         (h.retired_pending ? 4u : 0u) | (h.row_remapping ? 8u : 0u);
  return static_cast<int64_t>(flags | (severe << 8) | (mild << 40));
}

MemoryHealth DecodeMemoryHealth(int64_t code) {
  const auto bits = static_cast<uint64_t>(code);
  MemoryHealth h;
  h.remap_pending = bits & 1;
  h.remap_failure = bits & 2;
  h.retired_pending = bits & 4;
  h.row_remapping = bits & 8;
  const auto severe = static_cast<uint32_t>((bits >> 8) & 0xFFFFFFFFULL);
  const auto mild = static_cast<uint32_t>((bits >> 40) & ((1ULL << 23) - 1));
  (h.row_remapping ? h.remapped_uncorrectable : h.retired_dbe) = severe;
  (h.row_remapping ? h.remapped_correctable : h.retired_sbe) = mild;
  return h;
}

std::string MigProfileFromName(std::string_view name) {
  const size_t at = name.rfind("MIG ");
  if (at == std::string_view::npos || (at > 0 && name[at - 1] != ' ')) return "";
  std::string_view tail = name.substr(at + 4);
  while (!tail.empty() && tail.back() == ' ') tail.remove_suffix(1);
  return tail.find(' ') == std::string_view::npos ? std::string(tail) : "";
}

}  // namespace cgov
