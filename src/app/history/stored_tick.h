// A sampled tick in the history's stored form (the daemon's and `cgov run --db`'s ticks alike),
// the GPUs registered in the history's dictionary, and the kubelet's GPU allocations added to it.
#ifndef CGOV_APP_HISTORY_STORED_TICK_H_
#define CGOV_APP_HISTORY_STORED_TICK_H_

#include <compare>
#include <string>
#include <vector>

#include "identity/pod_resources.h"
#include "identity/process_attribution.h"
#include "store/tick_record.h"
#include "telemetry/sampler.h"

namespace cgov {

// The stored form of a sampled tick, into *out (its vectors' capacity kept: the daemon builds one
// every tick). `gpu_ids[i]` is the dictionary id of the source's GPU i. Process identities come
// from `attributor` (read once per process).
Status BuildStoredTick(const TickSample& tick, const std::vector<uint32_t>& gpu_ids,
                       ProcessAttributor* attributor, StoredTick* out);

// A GPU (its position in the source's list) the kubelet allocated to a pod's container.
struct GpuAllocation {
  uint32_t gpu_pos = 0;
  std::string namespace_name, pod, container;
  auto operator<=>(const GpuAllocation&) const = default;
};
// Pure: the GPUs the devices name, by UUID ("GPU-...", "MIG-..."; a time-slicing replica's
// "::n" dropped), a whole GPU's UUID naming each of its MIG instances cgov samples, or an
// nvidia.com/ resource's bare index (the device plugin's index strategy). Unknown IDs (another
// vendor's devices, a GPU this host does not show) are skipped. Sorted, without duplicates.
std::vector<GpuAllocation> AllocatedGpus(const std::vector<PodDevice>& devices,
                                         const std::vector<GpuInfo>& gpus);
// Adds to `out` (built by BuildStoredTick) the allocations whose pod the attributor's directory
// knows and none of whose processes computes on that GPU in this tick.
Status AddAllocations(const std::vector<GpuAllocation>& allocations, ProcessAttributor* attributor,
                      StoredTick* out);

// Registers a source's GPUs in the history dictionary; their ids in source order.
Result<std::vector<uint32_t>> RegisterGpus(const std::vector<GpuInfo>& gpus, HistoryStore* store);

}  // namespace cgov

#endif  // CGOV_APP_HISTORY_STORED_TICK_H_
