// What each NVIDIA driver series exports and writes, as far as the fake plays it: written from
// NVIDIA's published nvml.h of each driver (cited per row in abi_table.cc), and kept apart from
// cgov's own declarations (src/telemetry/nvml_api.h, nvml_process_layout.cc) on purpose: the two
// are separate beliefs, and the tests that run one against the other catch a disagreement.
#ifndef CGOV_TESTS_FAKE_NVML_ABI_TABLE_H_
#define CGOV_TESTS_FAKE_NVML_ABI_TABLE_H_

#include <string>
#include <vector>

namespace fake_nvml {

struct DriverAbi {
  int first[3];  // first driver version the row covers, inclusive
  int end[3];    // first driver version after it ({999,0,0}: still current)
  // Bytes per entry *RunningProcesses_v3 writes; 0 when the driver has no _v3.
  unsigned v3_process_entry_bytes;
  bool memory_v2;                    // nvmlDeviceGetMemoryInfo_v2 exported
  bool conf_compute_mem_size_info;   // nvmlDeviceGetConfComputeMemSizeInfo exported
  bool running_process_detail_list;  // nvmlDeviceGetRunningProcessDetailList exported
  const char* source;                // the headers the row was read from
};

// Every row, oldest first; the ranges tile [0, 999).
const std::vector<DriverAbi>& DriverAbiTable();

// The row for "535.54.03"; a version that does not parse is played as the newest row.
const DriverAbi& AbiForDriver(const std::string& driver_version);

// The symbols a driver of this row does not export (the process-list _v3 family, _v2 memory, ...).
std::vector<std::string> SymbolsAbsentFrom(const DriverAbi& abi);

}  // namespace fake_nvml

#endif  // CGOV_TESTS_FAKE_NVML_ABI_TABLE_H_
