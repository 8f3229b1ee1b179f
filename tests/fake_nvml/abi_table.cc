#include "abi_table.h"

#include <cstdio>

namespace fake_nvml {

// Sources: src/nvml.h of NVIDIA/nvidia-settings at the tag named (the header each driver ships).
const std::vector<DriverAbi>& DriverAbiTable() {
  static const std::vector<DriverAbi> table = {
      {{0, 0, 0},
       {510, 39, 1},
       0,
       false,
       false,
       false,
       "nvml.h 470.57.02, 495.29.05: no _v3 process lists, no nvmlDeviceGetMemoryInfo_v2"},
      {{510, 39, 1},
       {535, 43, 2},
       24,
       true,
       false,
       false,
       "nvml.h 510.39.01, 525.85.05, 530.41.03: _v3 takes the 24-byte nvmlProcessInfo_t"},
      {{535, 43, 2},
       {535, 98, 0},
       32,
       true,
       true,
       false,
       "nvml.h 535.43.02, 535.54.03, 535.86.05: nvmlProcessInfo_t gains usedGpuCcProtectedMemory "
       "(32 bytes), taken by _v3"},
      {{535, 98, 0},
       {535, 104, 5},
       0,
       true,
       true,
       false,
       "nvml.h 535.98: the _v3 process lists are gone"},
      {{535, 104, 5},
       {999, 0, 0},
       24,
       true,
       true,
       true,
       "nvml.h 535.104.05, 550.54.14, 570.133.07, 610.43.02: _v3 back, 24-byte "
       "nvmlProcessInfo_v2_t; nvmlDeviceGetRunningProcessDetailList added"},
  };
  return table;
}

namespace {

bool Less(const int a[3], const int b[3]) {
  for (int i = 0; i < 3; ++i) {
    if (a[i] != b[i]) return a[i] < b[i];
  }
  return false;
}

}  // namespace

const DriverAbi& AbiForDriver(const std::string& driver_version) {
  int v[3] = {0, 0, 0};
  char tail = 0;
  const int parsed = std::sscanf(driver_version.c_str(), "%d.%d.%d%c", &v[0], &v[1], &v[2], &tail);
  const std::vector<DriverAbi>& table = DriverAbiTable();
  if (parsed < 2 || parsed > 3) return table.back();
  for (const DriverAbi& row : table) {
    if (!Less(v, row.first) && Less(v, row.end)) return row;
  }
  return table.back();
}

std::vector<std::string> SymbolsAbsentFrom(const DriverAbi& abi) {
  std::vector<std::string> absent;
  if (abi.v3_process_entry_bytes == 0) {
    absent.insert(absent.end(), {"nvmlDeviceGetComputeRunningProcesses_v3",
                                 "nvmlDeviceGetGraphicsRunningProcesses_v3",
                                 "nvmlDeviceGetMPSComputeRunningProcesses_v3"});
  }
  if (!abi.memory_v2) absent.push_back("nvmlDeviceGetMemoryInfo_v2");
  if (!abi.conf_compute_mem_size_info) absent.push_back("nvmlDeviceGetConfComputeMemSizeInfo");
  if (!abi.running_process_detail_list) absent.push_back("nvmlDeviceGetRunningProcessDetailList");
  return absent;
}

}  // namespace fake_nvml
