// What Cost Governor knows about each GPU: its identity, which fields it supports, and the values
// read on one tick. Every value is optional: unknown is not zero.
#ifndef CGOV_TELEMETRY_GPU_SAMPLE_H_
#define CGOV_TELEMETRY_GPU_SAMPLE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cgov {

// One queryable field of a GPU. The order is the order doctor lists them in.
enum class GpuField : uint8_t {
  kUtilization,         // gpu + memory-controller utilization, fast
  kMemory,              // used / total bytes, fast
  kPower,               // milliwatts, fast
  kPowerLimit,          // enforced limit, milliwatts, fast
  kTemperature,         // degrees C, fast
  kSmClock,             // MHz, fast
  kMemClock,            // MHz, fast
  kClockReasons,        // throttle / clock-event reason bits, fast
  kEncoder,             // encoder utilization %, fast
  kDecoder,             // decoder utilization %, fast
  kPcieThroughput,      // TX/RX KB/s, slow (the driver samples for ~20 ms)
  kComputeProcesses,    // pid + memory, slow
  kGraphicsProcesses,   // pid + memory, slow
  kProcessUtilization,  // per-pid SM %, slow
  kMigMode,             // read once at probe
  kTotalEnergy,         // mJ since the driver loaded (Volta and later), fast
  kMpsProcesses,        // MPS client pids + memory (absent from the compute list), slow
  kXidEvents,           // Xid critical errors, by NVML event (drained on the slow read)
  kGpm,                 // profiling metrics: SM / tensor / DRAM activity (Hopper and later), slow
  kMemoryHealth,        // remapped rows (Ampere and later) or retired pages, slow, once a minute
};
inline constexpr size_t kGpuFieldCount = 20;

// "utilization", "memory", ... (stable: used in doctor --json).
std::string_view GpuFieldName(GpuField field);

struct FieldSupport {
  bool supported = false;
  std::string
      reason;  // why not: "symbol nvmlDeviceGetPowerUsage missing", "NVML_ERROR_NOT_SUPPORTED"
};

// The state of a GPU's memory as the driver keeps it across reboots: on Ampere and later, DRAM
// rows remapped to spares (nvmlDeviceGetRemappedRows); before, pages retired
// (nvmlDeviceGetRetiredPages). Pending work needs a GPU reset; a failure is a hardware ticket.
struct MemoryHealth {
  bool row_remapping = false;  // true: the remapped-row fields; false: the retired-page fields
  uint32_t remapped_correctable = 0;
  uint32_t remapped_uncorrectable = 0;
  bool remap_pending = false;    // rows wait for a GPU reset to be remapped
  bool remap_failure = false;    // a remapping has failed (the GPU is out of spare rows)
  uint32_t retired_sbe = 0;      // pages retired for repeated single-bit ECC errors
  uint32_t retired_dbe = 0;      // pages retired for a double-bit ECC error
  bool retired_pending = false;  // pages wait for a reboot to be retired
  // Needs a reset or a ticket before trusting the GPU with more work.
  bool NeedsAction() const {
    return remap_pending || remap_failure || retired_pending || remapped_uncorrectable > 0 ||
           retired_dbe > 0;
  }
  bool operator==(const MemoryHealth&) const = default;
};

// MemoryHealth as one integer (the history's gpu_event `code` of kind "memory_health"):
// bit 0 remap_pending, 1 remap_failure, 2 retired_pending, 3 row_remapping; bits 8-39 the
// uncorrectable rows or double-bit pages; bits 40-62 the correctable rows or single-bit pages
// (at most 2^23 - 1, clamped). Decoding is exact for every value the driver can report.
int64_t EncodeMemoryHealth(const MemoryHealth& health);
MemoryHealth DecodeMemoryHealth(int64_t code);

// A MIG instance (a compute instance of a GPU instance) that cgov samples in place of its
// parent GPU: in MIG mode the parent has no utilization and its memory and processes are the
// instances' together (docs/nvml-abi.md, "MIG").
struct MigInstance {
  unsigned gpu_instance_id = 0;  // GPU_I_ID in DCGM's labels
  unsigned compute_instance_id = 0;
  std::string profile;  // "3g.40gb", "1c.3g.40gb": the name's tail after "MIG "
  unsigned slices = 0;  // GPU instance slices (3 of 7 for 3g.40gb); 0 if unknown
  std::string parent_uuid;
  std::string parent_name;  // "NVIDIA H100 80GB HBM3": what is priced
  std::optional<uint64_t> parent_memory_total_bytes;
  // The instance's share of its GPU's price: its memory over the parent's (0 when either is
  // unknown: the instance is then not priced). Memory no instance holds is charged to no one.
  double price_share = 0;

  bool operator==(const MigInstance&) const = default;
};

// How reports name a GPU: "0", or "0 MIG 3g.40gb GI 1" (GPU instance 1 of GPU 0).
std::string GpuLabel(unsigned index, const std::optional<MigInstance>& mig);

// A GPU as enumerated and probed once at start-up: a whole GPU, or one MIG instance of one.
struct GpuInfo {
  unsigned index = 0;      // NVML's index of the (parent) GPU, as nvidia-smi numbers it
  std::string uuid;        // empty when unknown
  std::string name;        // empty when unknown
  std::string pci_bus_id;  // "00000000:18:00.0", empty when unknown
  std::optional<uint64_t> memory_total_bytes;
  std::optional<bool> mig_enabled;
  // Device memory the driver and firmware reserve for themselves (never "held" by anyone):
  // nvmlMemory_v2_t.reserved, or on a driver without _v2 the v1 `used` minus every process's
  // memory at probe time (docs/nvml-abi.md). Unknown when neither could be read.
  std::optional<uint64_t> memory_reserved_bytes;
  std::string memory_reserved_source;  // "nvmlDeviceGetMemoryInfo_v2", "estimated at start", ""
  std::array<FieldSupport, kGpuFieldCount> fields;
  bool lost = false;  // NVML_ERROR_GPU_IS_LOST at probe time
  std::string lost_reason;
  std::optional<MigInstance> mig;             // set for a MIG instance
  std::optional<MemoryHealth> memory_health;  // as read at probe time

  std::string Label() const { return GpuLabel(index, mig); }

  const FieldSupport& field(GpuField f) const { return fields[static_cast<size_t>(f)]; }
  FieldSupport& field(GpuField f) { return fields[static_cast<size_t>(f)]; }
};

// The cheap fields, read on every tick.
struct GpuFastSample {
  bool lost = false;
  std::optional<uint32_t> util_gpu_pct;
  std::optional<uint32_t> util_mem_pct;
  // Allocated device memory, the driver's reservation excluded whichever NVML call answered
  // (nvmlMemory_v2_t.used, or the v1 `used` less the GPU's memory_reserved_bytes). When the
  // reservation is unknown on a v1-only driver this is the v1 `used` (reservation included) and
  // doctor says so.
  std::optional<uint64_t> mem_used_bytes;
  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint32_t> power_mw;
  std::optional<uint32_t> power_limit_mw;
  std::optional<uint32_t> temp_c;
  std::optional<uint32_t> sm_clock_mhz;
  std::optional<uint32_t> mem_clock_mhz;
  std::optional<uint64_t> clock_reasons;  // nvmlClocksEventReason* bits
  std::optional<uint32_t> enc_util_pct;
  std::optional<uint32_t> dec_util_pct;
  std::optional<uint64_t> energy_mj;  // counter since the driver loaded
  // Xid critical errors the driver reported since cgov started watching (a counter), and the
  // code of the last one (79: fallen off the bus, 48: double-bit ECC, ...). Unknown when the
  // GPU's events are not watched.
  std::optional<uint64_t> xid_errors;
  std::optional<uint32_t> last_xid;
  bool energy_fresh = false;  // energy_mj was read from the driver in this sample
};

// "3g.40gb" from a MIG device's name ("NVIDIA H100 80GB HBM3 MIG 3g.40gb"); empty when the
// name does not end in one.
std::string MigProfileFromName(std::string_view name);

// One Xid critical error as the driver reported it.
struct XidEvent {
  unsigned gpu_index = 0;  // position in NvmlSource::gpus() (a MIG instance has its own)
  uint32_t xid = 0;        // 999: the driver did not say which
  int64_t unix_ms = 0;     // when cgov received it
};

// One process on one GPU. A process may use the GPU for compute and graphics at once.
struct GpuProcess {
  uint32_t pid = 0;
  bool compute = false;
  bool graphics = false;
  std::optional<uint64_t> used_memory_bytes;
  // Mean over the driver's samples since the last read. The driver sends samples only for
  // processes that used the GPU in that window, so a listed compute process without one is 0;
  // unknown only when the utilization call itself failed.
  std::optional<uint32_t> sm_util_pct;
  std::optional<uint32_t> mem_util_pct;
  bool mps = false;  // a CUDA MPS client (listed by nvmlDeviceGetMPSComputeRunningProcesses only)
};

// Profiling metrics from NVML GPM, over the time between two slow reads (about a second).
// Unlike utilization.gpu (was any kernel running?), these say how much of the GPU worked.
struct GpmMetrics {
  std::optional<double> graphics_active_pct;  // time any work ran (utilization.gpu's meaning)
  std::optional<double> sm_active_pct;        // share of SMs busy (NVML_GPM_METRIC_SM_UTIL)
  std::optional<double> sm_occupancy_pct;     // resident warps vs the maximum
  std::optional<double> tensor_active_pct;    // time any tensor pipe was busy
  std::optional<double> dram_active_pct;      // DRAM bandwidth vs the peak
  std::optional<double> pcie_tx_mib_s;
  std::optional<double> pcie_rx_mib_s;
  std::optional<double> nvlink_tx_mib_s;
  std::optional<double> nvlink_rx_mib_s;
  bool Any() const { return sm_active_pct || tensor_active_pct || dram_active_pct; }
};

// The slow fields, read off the tick path and handed to it when ready.
struct GpuSlowSample {
  bool lost = false;
  int64_t read_mono_ns = 0;              // when this was read (CLOCK_MONOTONIC); 0 if never
  std::optional<uint32_t> pcie_tx_kbps;  // KB/s as NVML reports it
  std::optional<uint32_t> pcie_rx_kbps;
  GpmMetrics gpm;  // unknown on GPUs without GPM and on the first read (no earlier sample)
  std::optional<MemoryHealth> memory_health;  // the last read (every kMemoryHealthPeriod)
  bool processes_known = false;               // false: the list is unknown, not empty
  std::vector<GpuProcess> processes;          // sorted by pid
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_GPU_SAMPLE_H_
