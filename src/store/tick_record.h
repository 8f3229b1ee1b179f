// One sampling tick as the history database stores it: what a report needs of every GPU and
// every GPU process, in the units the database keeps (MiB, 0.1 W, percent). No SQLite here.
//
// The binary encoding (EncodeTick/DecodeTick) is documented in docs/history-db.md: a version
// byte, then varints; a field absent from the tick (unknown) costs one bit, not a byte.
#ifndef CGOV_STORE_TICK_RECORD_H_
#define CGOV_STORE_TICK_RECORD_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

// The per-GPU fields, in encoding order. Never reorder: the order is the on-disk format.
enum class StoredGpuField : uint8_t {
  kUtilPct,
  kMemUtilPct,
  kMemUsedMib,
  kPowerDw,
  kPowerLimitDw,
  kTempC,
  kSmClockMhz,
  kMemClockMhz,
  kClockReasons,
  kEncUtilPct,
  kDecUtilPct,
  kPcieTxKbps,
  kPcieRxKbps,
  // From history schema 2 on (NVML GPM, tenths of a percent); absent in older ticks.
  kSmActivePctX10,
  kSmOccupancyPctX10,
  kTensorActivePctX10,
  kDramActivePctX10,
  // From history schema 10 on: the driver's energy counter (mJ since it loaded), on the ticks
  // that read it (not every tick: a read costs milliseconds of CPU on a real driver).
  kEnergyMj,
};
inline constexpr size_t kStoredGpuFieldCount = 18;

struct StoredGpu {
  uint32_t gpu_id = 0;  // the history database's gpu id (dictionary), not the NVML index
  bool lost = false;
  bool processes_known = false;  // false: the process list is unknown, not empty
  std::array<std::optional<uint64_t>, kStoredGpuFieldCount> fields;

  std::optional<uint64_t> get(StoredGpuField f) const { return fields[static_cast<size_t>(f)]; }
  void set(StoredGpuField f, std::optional<uint64_t> v) { fields[static_cast<size_t>(f)] = v; }
};

struct StoredProcess {
  uint32_t gpu_pos = 0;  // position of its GPU in StoredTick::gpus
  uint32_t pid = 0;
  bool compute = false;
  bool graphics = false;
  uint32_t identity_id = 0;  // dictionary ids (0: unknown)
  uint32_t command_id = 0;
  std::optional<uint32_t> mem_used_mib;
  std::optional<uint32_t> sm_util_pct;
};

// A GPU the kubelet allocated to a pod's container (cgov daemon --pod-resources) while the tick
// lists none of that pod's processes on it: the container holds the GPU by allocation.
struct StoredAllocation {
  uint32_t gpu_pos = 0;      // position of its GPU in StoredTick::gpus
  uint32_t identity_id = 0;  // the container's identity (dictionary id)
  bool operator==(const StoredAllocation&) const = default;
};

struct StoredTick {
  // Host, in tenths of a percent.
  std::optional<uint32_t> cpu_pct_x10;
  std::optional<uint32_t> iowait_pct_x10;
  std::optional<uint32_t> mem_used_pct_x10;
  std::vector<StoredGpu> gpus;                // sorted by gpu_id
  std::vector<StoredProcess> processes;       // sorted by (gpu_pos, pid)
  std::vector<StoredAllocation> allocations;  // sorted by (gpu_pos, identity_id)
};

inline constexpr uint8_t kTickEncodingVersion = 1;

// Appends the encoding of `tick` to *out.
void EncodeTick(const StoredTick& tick, std::string* out);
// REQUIRES: `data` was written by EncodeTick. Errors say what is malformed (`context` names the
// row).
Status DecodeTick(std::string_view data, std::string_view context, StoredTick* tick);

// Unsigned LEB128 varints (also used by the rollup encodings).
void PutVarint(uint64_t v, std::string* out);
// Advances *pos; false when the data ends inside the varint or it is longer than 10 bytes.
bool GetVarint(std::string_view data, size_t* pos, uint64_t* v);

}  // namespace cgov

#endif  // CGOV_STORE_TICK_RECORD_H_
