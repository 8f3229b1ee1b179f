// NvmlSource: MIG instances, each sampled in place of its parent GPU (docs/nvml-abi.md, "MIG").
//
// In MIG mode the parent GPU answers no utilization, and its memory and process lists are every
// instance's together; a MIG device handle answers its own memory, processes and name, and GPM
// samples the GPU instance through the parent (nvmlGpmMigSampleGet).
#include "telemetry/nvml_source.h"

#include <cmath>

#include <fmt/format.h>

namespace cgov {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

namespace {

std::optional<uint64_t> ReadMemoryTotal(const NvmlFunctions& f, nvmlDevice_t d) {
  if (f.memory_v2 != nullptr) {
    nvml::nvmlMemory_v2_t m{};
    m.version = nvml::nvmlMemory_v2;
    if (f.memory_v2(d, &m) == nvml::NVML_SUCCESS) return m.total;
  }
  nvml::nvmlMemory_t m{};
  if (f.memory_v1 != nullptr && f.memory_v1(d, &m) == nvml::NVML_SUCCESS) return m.total;
  return std::nullopt;
}

std::optional<unsigned> ReadId(nvml::nvmlDeviceGetUint_fn fn, nvmlDevice_t d) {
  unsigned int id = 0;
  if (fn == nullptr || fn(d, &id) != nvml::NVML_SUCCESS) return std::nullopt;
  return id;
}

}  // namespace

bool NvmlSource::EnumerateMig(const Unit& whole, std::vector<Unit>* units) {
  const NvmlFunctions& f = library_->fn();
  const nvmlDevice_t parent = whole.handle;
  unsigned int max = 0;
  if (!whole.mig_mode_on || !f.max_mig_devices || !f.mig_handle_by_index || !f.gpu_instance_id ||
      f.max_mig_devices(parent, &max) != nvml::NVML_SUCCESS) {
    return false;
  }
  const std::string parent_name =
      ReadDeviceString(f.name, parent, nvml::NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  const std::string parent_uuid =
      ReadDeviceString(f.uuid, parent, nvml::NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  const std::optional<uint64_t> parent_total = ReadMemoryTotal(f, parent);
  bool any = false;
  for (unsigned k = 0; k < max; ++k) {
    nvmlDevice_t handle = nullptr;
    if (f.mig_handle_by_index(parent, k, &handle) != nvml::NVML_SUCCESS) continue;  // NOT_FOUND
    const std::optional<unsigned> gi = ReadId(f.gpu_instance_id, handle);
    if (!gi) continue;  // without its GPU instance id nothing can be attributed to it
    MigInstance mig;
    mig.gpu_instance_id = *gi;
    mig.compute_instance_id = ReadId(f.compute_instance_id, handle).value_or(0);
    mig.parent_name = parent_name;
    mig.parent_uuid = parent_uuid;
    mig.parent_memory_total_bytes = parent_total;
    std::optional<uint64_t> memory;
    nvml::nvmlDeviceAttributes_t attributes{};
    if (f.attributes && f.attributes(handle, &attributes) == nvml::NVML_SUCCESS) {
      mig.slices = attributes.gpuInstanceSliceCount;
      memory = attributes.memorySizeMB << 20;
    }
    if (!memory) memory = ReadMemoryTotal(f, handle);
    mig.profile =
        MigProfileFromName(ReadDeviceString(f.name, handle, nvml::NVML_DEVICE_NAME_V2_BUFFER_SIZE));
    if (mig.profile.empty() && mig.slices > 0 && memory) {
      // NVIDIA's profile names round the memory up (1g.10gb is 9.75 GiB on an H100 80GB).
      mig.profile = fmt::format("{}g.{}gb", mig.slices,
                                std::ceil(static_cast<double>(*memory) / (1ULL << 30)));
    }
    if (memory && parent_total && *parent_total > 0) {
      mig.price_share = std::min(1.0, static_cast<double>(*memory) / *parent_total);
    }
    Unit unit = whole;
    unit.info.index = whole.info.index;
    unit.info.mig = std::move(mig);
    unit.handle = handle;
    unit.parent = parent;
    units->push_back(std::move(unit));
    any = true;
  }
  return any;
}

}  // namespace cgov
