// NvmlSource: device memory, with the driver's reservation taken out whichever call answers
// (docs/nvml-abi.md).
#include "telemetry/nvml_source.h"

#include <algorithm>

namespace cgov {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

// _v2 answers the reservation; an error from it (a driver that exports the symbol but rejects
// the call) falls back to v1, whose `used` includes the reservation: corrected once it is known.
nvmlReturn_t NvmlSource::ProbeMemory(size_t pos, GpuFastSample* scratch) {
  const NvmlFunctions& f = library_->fn();
  GpuInfo* gpu = &gpus_[pos];
  nvmlDevice_t d = units_[pos].handle;
  nvmlReturn_t ret = nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
  if (f.memory_v2 != nullptr) {
    nvml::nvmlMemory_v2_t m{};
    m.version = nvml::nvmlMemory_v2;
    ret = f.memory_v2(d, &m);
    if (CheckLost(pos, ret)) return ret;
    if (ret == nvml::NVML_SUCCESS) {
      gpu->memory_reserved_bytes = m.reserved;
      gpu->memory_reserved_source = "nvmlDeviceGetMemoryInfo_v2";
      scratch->mem_total_bytes = m.total;
    }
  }
  if (ret != nvml::NVML_SUCCESS && f.memory_v1 != nullptr) {
    nvml::nvmlMemory_t m{};
    ret = f.memory_v1(d, &m);
    if (CheckLost(pos, ret)) return ret;
    if (ret == nvml::NVML_SUCCESS) {
      scratch->mem_used_bytes = m.used;  // with the reservation: EstimateReservedMemory
      scratch->mem_total_bytes = m.total;
    }
  }
  return ret;
}

// On a driver without _v2, the reservation is what v1 calls used and no process holds. Only
// estimated when every process's memory is known (a hidden one would be counted as reserved).
void NvmlSource::EstimateReservedMemory(size_t pos, uint64_t v1_used_bytes) {
  GpuInfo* gpu = &gpus_[pos];
  GpuSlowSample slow;
  ReadProcesses(pos, &slow);
  if (!slow.processes_known) return;
  uint64_t held = 0;
  for (const GpuProcess& p : slow.processes) {
    if (!p.used_memory_bytes) return;
    held += *p.used_memory_bytes;
  }
  gpu->memory_reserved_bytes = v1_used_bytes - std::min(held, v1_used_bytes);
  gpu->memory_reserved_source = "estimated at start: v1 used less every process's memory";
}

nvmlReturn_t NvmlSource::ReadMemory(size_t index, GpuFastSample* out) const {
  const NvmlFunctions& f = library_->fn();
  nvmlDevice_t d = units_[index].handle;
  nvmlReturn_t ret = nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
  if (f.memory_v2 != nullptr) {
    nvml::nvmlMemory_v2_t m{};
    m.version = nvml::nvmlMemory_v2;
    ret = f.memory_v2(d, &m);
    if (ret == nvml::NVML_SUCCESS) {
      out->mem_used_bytes = m.used;
      out->mem_total_bytes = m.total;
      return ret;
    }
    if (ret == nvml::NVML_ERROR_GPU_IS_LOST || f.memory_v1 == nullptr) return ret;
  }
  nvml::nvmlMemory_t m{};
  ret = f.memory_v1(d, &m);
  if (ret == nvml::NVML_SUCCESS) {
    const uint64_t reserved = gpus_[index].memory_reserved_bytes.value_or(0);
    out->mem_used_bytes = m.used - std::min<uint64_t>(reserved, m.used);
    out->mem_total_bytes = m.total;
  }
  return ret;
}

}  // namespace cgov
