// Loads libnvidia-ml at run time and resolves the symbols Cost Governor uses, newest version first.
//
// Required symbols (init, shutdown, device count, device handle) decide whether NVML is usable at
// all; every other symbol is optional and, when missing, disables only the field it serves.
#ifndef CGOV_TELEMETRY_NVML_LOADER_H_
#define CGOV_TELEMETRY_NVML_LOADER_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "telemetry/nvml_api.h"

namespace cgov {

// The resolved entry points. A null pointer means the symbol is absent from the library.
// Of each versioned process-list pair (procs/procs_v1) at most one is set; memory_v1 is resolved
// beside memory_v2 as its fallback when _v2 answers an error.
struct NvmlFunctions {
  nvml::nvmlInit_fn init = nullptr;
  nvml::nvmlShutdown_fn shutdown = nullptr;
  nvml::nvmlErrorString_fn error_string = nullptr;
  nvml::nvmlSystemGetDriverVersion_fn driver_version = nullptr;
  nvml::nvmlSystemGetNVMLVersion_fn nvml_version = nullptr;
  nvml::nvmlSystemGetCudaDriverVersion_fn cuda_driver_version = nullptr;
  nvml::nvmlDeviceGetCount_fn device_count = nullptr;
  nvml::nvmlDeviceGetHandleByIndex_fn handle_by_index = nullptr;
  nvml::nvmlDeviceGetString_fn uuid = nullptr;
  nvml::nvmlDeviceGetString_fn name = nullptr;
  nvml::nvmlDeviceGetPciInfo_fn pci_info = nullptr;
  nvml::nvmlDeviceGetMemoryInfo_v2_fn memory_v2 = nullptr;
  nvml::nvmlDeviceGetMemoryInfo_fn memory_v1 = nullptr;
  nvml::nvmlDeviceGetUtilizationRates_fn utilization = nullptr;
  nvml::nvmlDeviceGetUint_fn power_usage = nullptr;
  nvml::nvmlDeviceGetUint_fn power_limit = nullptr;
  nvml::nvmlDeviceGetTemperature_fn temperature = nullptr;
  nvml::nvmlDeviceGetClockInfo_fn clock_info = nullptr;
  nvml::nvmlDeviceGetReasons_fn clock_reasons = nullptr;
  nvml::nvmlDeviceGetPcieThroughput_fn pcie_throughput = nullptr;
  nvml::nvmlDeviceGetCodecUtilization_fn encoder_util = nullptr;
  nvml::nvmlDeviceGetCodecUtilization_fn decoder_util = nullptr;
  nvml::nvmlDeviceGetReasons_fn total_energy =
      nullptr;  // same shape: (device, unsigned long long*)
  nvml::nvmlDeviceGetMigMode_fn mig_mode = nullptr;
  nvml::nvmlDeviceGetProcesses_fn compute_procs = nullptr;  // _v3 or _v2
  nvml::nvmlDeviceGetProcesses_fn compute_procs_v1 = nullptr;
  nvml::nvmlDeviceGetProcesses_fn graphics_procs = nullptr;
  nvml::nvmlDeviceGetProcesses_fn graphics_procs_v1 = nullptr;
  nvml::nvmlDeviceGetProcesses_fn mps_procs = nullptr;  // MPS clients: only this list has them
  nvml::nvmlDeviceGetProcesses_fn mps_procs_v1 = nullptr;
  nvml::nvmlDeviceGetProcessUtilization_fn process_utilization = nullptr;
  // Events (Xid errors): all four, plus supported_events, or the GPU is not watched.
  nvml::nvmlDeviceGetReasons_fn supported_events = nullptr;  // (device, unsigned long long*)
  nvml::nvmlEventSetCreate_fn event_set_create = nullptr;
  nvml::nvmlEventSetFree_fn event_set_free = nullptr;
  nvml::nvmlDeviceRegisterEvents_fn register_events = nullptr;
  nvml::nvmlEventSetWait_fn event_wait = nullptr;
  // GPM profiling metrics (Hopper and later): all five, or none is used.
  nvml::nvmlGpmQueryDeviceSupport_fn gpm_support = nullptr;
  nvml::nvmlGpmSampleAlloc_fn gpm_sample_alloc = nullptr;
  nvml::nvmlGpmSampleFree_fn gpm_sample_free = nullptr;
  nvml::nvmlGpmSampleGet_fn gpm_sample_get = nullptr;
  nvml::nvmlGpmMetricsGet_fn gpm_metrics_get = nullptr;
  // MIG: the first three, or instances are not enumerated; GPM per instance needs the fourth.
  nvml::nvmlDeviceGetUint_fn max_mig_devices = nullptr;
  nvml::nvmlDeviceGetMigDeviceHandleByIndex_fn mig_handle_by_index = nullptr;
  nvml::nvmlDeviceGetUint_fn gpu_instance_id = nullptr;
  nvml::nvmlDeviceGetUint_fn compute_instance_id = nullptr;
  nvml::nvmlDeviceGetAttributes_fn attributes = nullptr;
  nvml::nvmlGpmMigSampleGet_fn gpm_mig_sample_get = nullptr;
  // Memory health: remapped rows (Ampere and later), else retired pages and their pending state.
  nvml::nvmlDeviceGetRemappedRows_fn remapped_rows = nullptr;
  nvml::nvmlDeviceGetRetiredPages_fn retired_pages = nullptr;
  nvml::nvmlDeviceGetRetiredPagesPendingStatus_fn retired_pages_pending = nullptr;
};

// What the loader looked for under one role, and what it found.
struct SymbolResolution {
  std::string role;                     // e.g. "compute processes"
  std::vector<std::string> candidates;  // newest first
  std::string resolved;                 // the winning symbol, or empty
  bool required = false;
};

// Candidate library names when no path is given, in the order they are tried.
const std::vector<std::string>& DefaultNvmlLibraryNames();

// Thread safety: immutable after Load; the resolved functions are NVML's own (thread-safe).
class NvmlLibrary {
 public:
  // Loads `path` if non-empty (and only it), else the first of DefaultNvmlLibraryNames() that
  // dlopen finds. Unavailable when no library loads or a required symbol is missing; the message
  // says which and what to do.
  static Result<std::unique_ptr<NvmlLibrary>> Load(const std::string& path);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }
  // The file dlopen actually mapped (after the linker's search), e.g. /usr/lib/x86_64-linux-gnu/...
  const std::string& path() const { return path_; }
  const std::vector<SymbolResolution>& symbols() const { return symbols_; }
  // "nvmlDeviceGetPowerUsage" etc.: the optional roles whose symbols are all absent.
  std::vector<std::string> MissingOptional() const;

  // The symbol resolved for `role` ("compute processes"), or empty.
  std::string ResolvedSymbol(const std::string& role) const;
  // Whether the library exports `symbol` at all (for ABI heuristics; nothing is called).
  bool HasSymbol(const char* symbol) const;

  // "NVML_ERROR_GPU_IS_LOST (GPU is lost)" with the library's own text when it has nvmlErrorString.
  std::string Describe(nvml::nvmlReturn_t code) const;

 private:
  NvmlLibrary(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  Status ResolveAll();

  void* handle_;
  std::string path_;
  NvmlFunctions fn_;
  std::vector<SymbolResolution> symbols_;
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_NVML_LOADER_H_
