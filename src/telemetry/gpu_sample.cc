#include "telemetry/gpu_sample.h"

namespace cgov {

std::string_view GpuFieldName(GpuField field) {
  switch (field) {
    case GpuField::kUtilization: return "utilization";
    case GpuField::kMemory: return "memory";
    case GpuField::kPower: return "power";
    case GpuField::kPowerLimit: return "power_limit";
    case GpuField::kTemperature: return "temperature";
    case GpuField::kSmClock: return "sm_clock";
    case GpuField::kMemClock: return "mem_clock";
    case GpuField::kClockReasons: return "clock_reasons";
    case GpuField::kEncoder: return "encoder";
    case GpuField::kDecoder: return "decoder";
    case GpuField::kPcieThroughput: return "pcie_throughput";
    case GpuField::kComputeProcesses: return "compute_processes";
    case GpuField::kGraphicsProcesses: return "graphics_processes";
    case GpuField::kProcessUtilization: return "process_utilization";
    case GpuField::kMigMode: return "mig_mode";
    case GpuField::kTotalEnergy: return "total_energy";
    case GpuField::kMpsProcesses: return "mps_processes";
    case GpuField::kXidEvents: return "xid_events";
    case GpuField::kGpm: return "gpm";
  }
  return "unknown";
}

std::string GpuInfo::Label() const {
  std::string label = std::to_string(index);
  if (mig) {
    label += " MIG " + (mig->profile.empty() ? std::string("?") : mig->profile) + " GI " +
             std::to_string(mig->gpu_instance_id);
  }
  return label;
}

std::string MigProfileFromName(std::string_view name) {
  const size_t at = name.rfind("MIG ");
  if (at == std::string_view::npos || (at > 0 && name[at - 1] != ' ')) return "";
  std::string_view tail = name.substr(at + 4);
  while (!tail.empty() && tail.back() == ' ') tail.remove_suffix(1);
  return tail.find(' ') == std::string_view::npos ? std::string(tail) : "";
}

}  // namespace cgov
