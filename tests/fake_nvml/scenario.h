// The scenario a fake libnvidia-ml.so.1 plays: GPUs, their timelines, processes and faults.
// Format: docs/fake-nvml.md. Everything here is a pure function of the scenario and a time t
// (seconds since nvmlInit, scaled).
#ifndef CGOV_TESTS_FAKE_NVML_SCENARIO_H_
#define CGOV_TESTS_FAKE_NVML_SCENARIO_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace fake_nvml {

// What a timeline point may set. Indexes GpuState::values; kStateFieldNames spells them as the
// scenario file does.
enum class StateField {
  kUtilGpu,
  kUtilMem,
  kMemUsedMib,
  kPowerW,
  kTempC,
  kSmClockMhz,
  kMemClockMhz,
  kClockReasons,
  kPcieTxKbps,
  kPcieRxKbps,
  kEncUtil,
  kDecUtil,
  kSmActive,
  kSmOccupancy,
  kTensorActive,
  kDramActive,
  kPcieTxMibS,
  kPcieRxMibS,
  kNvlinkTxMibS,
  kNvlinkRxMibS,
  kCount
};
inline constexpr size_t kStateFieldCount = static_cast<size_t>(StateField::kCount);
extern const char* const kStateFieldNames[kStateFieldCount];
std::optional<StateField> StateFieldByName(const std::string& name);

// The values a GPU reports at one moment. A timeline point sets some (NaN: not set); the rest
// carry over. A flat array: the fake answers every NVML call from it, and a map lookup per call
// made the fake cost more than the cgov it stands under (issue 20).
struct GpuState {
  std::array<double, kStateFieldCount> values;
  GpuState() { values.fill(std::numeric_limits<double>::quiet_NaN()); }
  double& operator[](StateField f) { return values[static_cast<size_t>(f)]; }
  double operator[](StateField f) const { return values[static_cast<size_t>(f)]; }
};
extern const std::set<std::string> kFieldNames;  // for not_supported / no_permission

struct Process {
  unsigned pid = 0;
  bool compute = true;
  bool graphics = false;
  bool mps = false;  // a CUDA MPS client: only in the MPS list (type "mps")
  double used_mib = 0;
  std::optional<double> sm_util;  // default: the GPU's util_gpu at that moment
  double mem_util = 0;
  double start = 0;
  double end = std::numeric_limits<double>::infinity();
  bool ActiveAt(double t) const { return t >= start && t < end; }
};

struct XidEvent {
  double t = 0;
  unsigned xid = 0;
  unsigned gpu_instance = 0xFFFFFFFFu;  // the MIG GPU instance it is attributed to, if any
};

// A whole GPU, or one MIG device (a compute instance of a GPU instance) of a parent GPU.
struct Gpu {
  std::string name;
  std::string uuid;
  std::string pci_bus_id;
  double memory_total_mib = 0;
  double power_limit_w = 0;
  // Memory the driver reserves: v2's `reserved`, and included in v1's `used` (default: 1 % of
  // the total, at most 512 MiB).
  std::optional<double> reserved_mib;
  bool mig = false;
  bool gpm = false;                                   // GPM profiling metrics (Hopper and later)
  double period_s = 0;                                // > 0: the timeline repeats
  std::vector<std::pair<double, GpuState>> timeline;  // sorted by t; values carried forward
  std::vector<Process> processes;
  std::set<std::string> not_supported;  // field names answering NVML_ERROR_NOT_SUPPORTED
  std::set<std::string> no_permission;  // field names answering NVML_ERROR_NO_PERMISSION
  std::optional<double> lost_at;        // from then on every call answers GPU_IS_LOST
  std::vector<XidEvent> xid_events;     // sorted by t
  // Memory health: remapped rows (Ampere and later; the default, all zero) or, when the scenario
  // gives retired_pages, retired pages (an earlier GPU: remapped rows are NOT_SUPPORTED).
  struct RemappedRows {
    unsigned correctable = 0, uncorrectable = 0;
    bool pending = false, failure = false;
  } remapped_rows;
  std::optional<std::pair<unsigned, unsigned>> retired_pages;  // (single-bit, double-bit)
  bool retired_pages_pending = false;
  // MIG: a parent in MIG mode lists its devices (positions in Scenario::mig_devices); a MIG
  // device names its parent (a position in Scenario::gpus) and its ids.
  std::vector<size_t> mig_devices;
  int parent = -1;
  unsigned gpu_instance = 0, compute_instance = 0, slices = 0, sm_count = 0;
  bool IsMigDevice() const { return parent >= 0; }

  // The value of `field` at time t, or `fallback` when the timeline never set it.
  double ValueAt(double t, StateField field, double fallback) const;
  bool LostAt(double t) const { return lost_at && t >= *lost_at; }
};

struct Scenario {
  std::string driver_version = "550.54.15";
  std::string nvml_version = "12.550.54.15";
  int cuda_driver_version = 12040;
  int init_error = 0;  // nvmlReturn_t nvmlInit answers; 0 = success
  // > 0 in the file: _v3 process lists write entries this wide whatever abi_table.cc says of the
  // driver (a driver no table knows yet). 0: the driver's row decides (filled in at nvmlInit).
  unsigned v3_process_entry_bytes = 0;
  double time_scale = 1.0;               // fake seconds per real second
  std::map<std::string, int> delays_ms;  // NVML function name -> added latency per call
  std::vector<Gpu> gpus;
  std::vector<Gpu> mig_devices;  // every parent's, in order
};

// Parses scenario JSON. On error returns false and sets *error to "file: field: what".
bool ParseScenario(const std::string& text, const std::string& file, Scenario* out,
                   std::string* error);

// NVML error names accepted in scenario files ("DRIVER_NOT_LOADED" or "NVML_ERROR_...") -> code.
std::optional<int> ErrorCodeByName(const std::string& name);

}  // namespace fake_nvml

#endif  // CGOV_TESTS_FAKE_NVML_SCENARIO_H_
