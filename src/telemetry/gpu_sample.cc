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

}  // namespace cgov
