// Our own declarations of the subset of the NVML C API that Cost Governor uses.
//
// There is no nvml.h on build machines, and we load libnvidia-ml.so.1 at run time, so the ABI is
// declared here once, with a static_assert on every struct's size and on every versioned-struct
// value. Names follow nvml.h so the NVML API reference can be read alongside. Every layout here was
// checked against NVIDIA's published nvml.h of the 470.57.02, 525.85.05, 535.43.02, 535.54.03,
// 535.86.05, 535.98, 535.104.05, 550.54.14, 570.133.07 and 610.43.02 drivers; where a layout
// changed between drivers (process entries, r535.43-535.86) the comment says which driver writes
// what, and docs/nvml-abi.md has the table. The fake driver keeps its own table of the same facts
// (tests/fake_nvml/abi_table.cc), written separately so that a test catches a disagreement.
#ifndef CGOV_TELEMETRY_NVML_API_H_
#define CGOV_TELEMETRY_NVML_API_H_

#include <cstddef>
#include <cstdint>

namespace cgov::nvml {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;

// nvmlReturn_t values.
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_ALREADY_INITIALIZED = 5;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
inline constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_VGPU_ECC_NOT_ENABLED = 22;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_RESOURCES = 23;
inline constexpr nvmlReturn_t NVML_ERROR_FREQ_NOT_SUPPORTED = 24;
inline constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;
inline constexpr nvmlReturn_t NVML_ERROR_DEPRECATED = 26;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_READY = 27;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_NOT_FOUND = 28;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_STATE = 29;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// Buffer sizes for string queries.
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

// nvmlTemperatureSensors_t, nvmlClockType_t, nvmlPcieUtilCounter_t.
inline constexpr int NVML_TEMPERATURE_GPU = 0;
inline constexpr int NVML_CLOCK_GRAPHICS = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_CLOCK_MEM = 2;
inline constexpr int NVML_PCIE_UTIL_TX_BYTES = 0;
inline constexpr int NVML_PCIE_UTIL_RX_BYTES = 1;

// nvmlClocksEventReasons (formerly ClocksThrottleReasons) bits.
inline constexpr unsigned long long nvmlClocksEventReasonGpuIdle = 0x1ULL;
inline constexpr unsigned long long nvmlClocksEventReasonApplicationsClocksSetting = 0x2ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSwPowerCap = 0x4ULL;
inline constexpr unsigned long long nvmlClocksThrottleReasonHwSlowdown = 0x8ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSyncBoost = 0x10ULL;
inline constexpr unsigned long long nvmlClocksEventReasonSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long nvmlClocksThrottleReasonHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x80ULL;
inline constexpr unsigned long long nvmlClocksEventReasonDisplayClockSetting = 0x100ULL;

// NVML_DEVICE_MIG_ENABLE / DISABLE.
inline constexpr unsigned int NVML_DEVICE_MIG_DISABLE = 0;
inline constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;

// nvmlEventType* bits (nvml.h 470.57.02-610.43.02).
inline constexpr unsigned long long nvmlEventTypeSingleBitEccError = 0x1ULL;
inline constexpr unsigned long long nvmlEventTypeDoubleBitEccError = 0x2ULL;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;

// NVML_STRUCT_VERSION(name, ver): the struct's size in the low 24 bits, the version above them.
constexpr unsigned int NvmlStructVersion(size_t struct_size, unsigned int version) {
  return static_cast<unsigned int>(struct_size) | (version << 24U);
}

// v1, for nvmlDeviceGetMemoryInfo (every driver). `used` is "Sum of Reserved and Allocated device
// memory" (nvml.h 550.54.14): it includes the driver's own reservation, hundreds of MiB on an idle
// GPU, and total = free + used.
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// For nvmlDeviceGetMemoryInfo_v2 (drivers 510.39.01 and later). `used` is "Allocated device
// memory" only; `reserved` is what the driver and firmware set aside (nvml.h 510.39.01-610.43.02).
struct nvmlMemory_v2_t {
  unsigned int version;  // must be nvmlMemory_v2
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr unsigned int nvmlMemory_v2 = NvmlStructVersion(sizeof(nvmlMemory_v2_t), 2);

struct nvmlUtilization_t {
  unsigned int gpu;     // % of the sample period a kernel was running
  unsigned int memory;  // % of the sample period device memory was read or written
};

struct nvmlPciInfo_t {  // for nvmlDeviceGetPciInfo_v3 and _v2
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:18:00.0"
};

// Process-list entries. The lists are read into a byte buffer sized for the widest entry any
// driver writes (kMaxProcessEntryBytes) and decoded by telemetry/nvml_process_layout.h, never
// through these structs directly: which one a driver writes depends on the driver, not the symbol.
//
// For the unversioned *RunningProcesses (every driver): 16 bytes.
struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
};

// For *RunningProcesses_v2 (every driver since 470) and _v3 on 525.x-530.x and 535.104.05+: 24
// bytes.
struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;      // MIG; 0xFFFFFFFF when not in MIG mode
  unsigned int computeInstanceId;  // MIG; 0xFFFFFFFF when not in MIG mode
};

// For *RunningProcesses_v3 on drivers 535.43.02 to 535.86.x only: nvml.h 535.43.02, 535.54.03
// and 535.86.05 declare _v3 with an nvmlProcessInfo_t that gained usedGpuCcProtectedMemory
// (32 bytes). 535.98 dropped _v3 from the library; 535.104.05 brought it back with 24-byte entries.
struct nvmlProcessInfo_v3cc_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
  unsigned long long usedGpuCcProtectedMemory;  // confidential-computing protected memory, bytes
};

inline constexpr size_t kMaxProcessEntryBytes = 32;

struct nvmlProcessUtilizationSample_t {  // for nvmlDeviceGetProcessUtilization
  unsigned int pid;
  unsigned long long timeStamp;  // microseconds, CPU timestamp
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

// For nvmlEventSetWait_v2; the same 32 bytes in nvml.h 470.57.02, 550.54.14 and 610.43.02.
struct nvmlEventData_t {
  nvmlDevice_t device;           // the GPU the event happened on
  unsigned long long eventType;  // one nvmlEventType* bit
  unsigned long long eventData;  // the Xid for nvmlEventTypeXidCriticalError (999: unknown)
  unsigned int gpuInstanceId;    // MIG; 0xFFFFFFFF otherwise
  unsigned int computeInstanceId;
};

// GPM (GPU performance monitoring, Hopper and later; nvml.h 520.56.06-610.43.02): metrics are
// computed by the driver from two samples taken some time apart.
struct nvmlGpmMetric_t {
  unsigned int metricId;    // IN: NVML_GPM_METRIC_*
  nvmlReturn_t nvmlReturn;  // OUT: this metric's status; `value` is valid only on NVML_SUCCESS
  double value;
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;
};
// NVML_GPM_METRIC_MAX sizes the array: 98 in nvml.h 520.56.06-570.133.07, 210 in 575.64-590.44.01,
// 333 in 595.71.05 and 610.43.02, while NVML_GPM_METRICS_GET_VERSION stayed 1. Declared here at
// the largest, so no driver's belief about the struct's length exceeds ours.
inline constexpr unsigned int kGpmMetricSlots = 333;
struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION (a plain 1, not NVML_STRUCT_VERSION)
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[kGpmMetricSlots];
};
inline constexpr unsigned int NVML_GPM_METRICS_GET_VERSION = 1;
struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
};
inline constexpr unsigned int NVML_GPM_SUPPORT_VERSION = 1;

// NVML_GPM_METRIC_* ids (unchanged from nvml.h 520.56.06 to 610.43.02).
inline constexpr unsigned int NVML_GPM_METRIC_SM_UTIL = 2;           // % of SMs busy
inline constexpr unsigned int NVML_GPM_METRIC_SM_OCCUPANCY = 3;      // % of warps resident
inline constexpr unsigned int NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5;   // % of time on tensor pipes
inline constexpr unsigned int NVML_GPM_METRIC_DRAM_BW_UTIL = 10;     // % of peak DRAM bandwidth
inline constexpr unsigned int NVML_GPM_METRIC_PCIE_TX_PER_SEC = 20;  // MiB/s
inline constexpr unsigned int NVML_GPM_METRIC_PCIE_RX_PER_SEC = 21;
inline constexpr unsigned int NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC = 60;
inline constexpr unsigned int NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC = 61;

// A MIG device's size (nvmlDeviceGetAttributes_v2; the same 40 bytes in nvml.h 470.57.02 through
// 610.43.02). Only MIG device handles answer it.
struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;  // MiB
};
// % of time any compute or graphics work ran: the one utilization a MIG instance has
// (nvmlDeviceGetUtilizationRates answers NOT_SUPPORTED in MIG mode; nvml.h 525.85.05+).
inline constexpr unsigned int NVML_GPM_METRIC_GRAPHICS_UTIL = 1;
// nvmlPageRetirementCause_t (nvml.h 470.57.02-610.43.02).
inline constexpr int NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0;
inline constexpr int NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1;

// gpuInstanceId / computeInstanceId when not in MIG mode.
inline constexpr unsigned int kNoMigId = 0xFFFFFFFFu;

// usedGpuMemory when the driver cannot say (e.g. no permission, Windows WDDM).
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ULL;

// The ABI is x86-64/aarch64 LP64: any other size means a wrong declaration.
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
static_assert(offsetof(nvmlMemory_v2_t, total) == 8);
static_assert(nvmlMemory_v2 == 0x02000028U, "NVML_STRUCT_VERSION(Memory, 2)");
static_assert(sizeof(nvmlUtilization_t) == 8);
static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(offsetof(nvmlProcessInfo_v2_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16);
static_assert(sizeof(nvmlProcessInfo_v3cc_t) == 32);
static_assert(offsetof(nvmlProcessInfo_v3cc_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_v3cc_t, usedGpuCcProtectedMemory) == 24);
static_assert(kMaxProcessEntryBytes >= sizeof(nvmlProcessInfo_v3cc_t));
static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32);
static_assert(sizeof(nvmlEventData_t) == 32);
static_assert(offsetof(nvmlEventData_t, eventData) == 16);
static_assert(sizeof(nvmlGpmMetric_t) == 40);
static_assert(offsetof(nvmlGpmMetric_t, value) == 8);
static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlGpmSupport_t) == 8);
static_assert(sizeof(nvmlDeviceAttributes_t) == 40);
static_assert(offsetof(nvmlDeviceAttributes_t, memorySizeMB) == 32);
static_assert(offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16);

// Function types, named after the symbols they are resolved from.
extern "C" {
using nvmlInit_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetDriverVersion_fn = nvmlReturn_t (*)(char*, unsigned int);
using nvmlSystemGetNVMLVersion_fn = nvmlReturn_t (*)(char*, unsigned int);
using nvmlSystemGetCudaDriverVersion_fn = nvmlReturn_t (*)(int*);
using nvmlDeviceGetCount_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetString_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetPciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetMemoryInfo_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using nvmlDeviceGetUint_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using nvmlDeviceGetClockInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using nvmlDeviceGetReasons_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using nvmlDeviceGetPcieThroughput_fn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using nvmlDeviceGetCodecUtilization_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*,
                                                          unsigned int*);
using nvmlDeviceGetMigMode_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
// Every *RunningProcesses version: the entries are written into a byte buffer (see above).
using nvmlDeviceGetProcesses_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);
using nvmlDeviceGetProcessUtilization_fn = nvmlReturn_t (*)(nvmlDevice_t,
                                                            nvmlProcessUtilizationSample_t*,
                                                            unsigned int*, unsigned long long);
using nvmlEventSetCreate_fn = nvmlReturn_t (*)(nvmlEventSet_t*);
using nvmlEventSetFree_fn = nvmlReturn_t (*)(nvmlEventSet_t);
using nvmlDeviceRegisterEvents_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long,
                                                     nvmlEventSet_t);
using nvmlEventSetWait_fn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
using nvmlGpmQueryDeviceSupport_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSupport_t*);
using nvmlGpmSampleAlloc_fn = nvmlReturn_t (*)(nvmlGpmSample_t*);
using nvmlGpmSampleFree_fn = nvmlReturn_t (*)(nvmlGpmSample_t);
using nvmlGpmSampleGet_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t);
using nvmlGpmMetricsGet_fn = nvmlReturn_t (*)(nvmlGpmMetricsGet_t*);
using nvmlGpmMigSampleGet_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpmSample_t);
using nvmlDeviceGetMigDeviceHandleByIndex_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                nvmlDevice_t*);
using nvmlDeviceGetAttributes_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDeviceAttributes_t*);
// (device, corrRows, uncRows, isPending, failureOccurred): Ampere and later (nvml.h 460+).
using nvmlDeviceGetRemappedRows_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*,
                                                      unsigned int*, unsigned int*);
// (device, nvmlPageRetirementCause_t, pageCount, addresses): Kepler and later.
using nvmlDeviceGetRetiredPages_fn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*,
                                                      unsigned long long*);
// (device, nvmlEnableState_t* isPending).
using nvmlDeviceGetRetiredPagesPendingStatus_fn = nvmlReturn_t (*)(nvmlDevice_t, int*);
}

// "NVML_ERROR_GPU_IS_LOST" etc., without needing the library (nvmlErrorString may be absent).
const char* ReturnName(nvmlReturn_t code);

}  // namespace cgov::nvml

#endif  // CGOV_TELEMETRY_NVML_API_H_
