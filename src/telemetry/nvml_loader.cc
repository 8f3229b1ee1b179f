#include "telemetry/nvml_loader.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

namespace cgov {
namespace {

struct SymbolSpec {
  const char* role;
  std::vector<std::string> candidates;  // newest first
  bool required;
  void** slot;
  const char* fallback_for = nullptr;  // resolve only if this role found nothing
};

template <typename F>
void** Slot(F* fn) {
  return reinterpret_cast<void**>(fn);
}

// The process lists, events, GPM, MIG and memory-health symbols (SymbolTable's second half).
std::vector<SymbolSpec> ProcessEventAndGpmSymbols(NvmlFunctions* f) {
  return {
      {"compute processes",
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
       false,
       Slot(&f->compute_procs)},
      {"compute processes (v1)",
       {"nvmlDeviceGetComputeRunningProcesses"},
       false,
       Slot(&f->compute_procs_v1),
       "compute processes"},
      {"graphics processes",
       {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"},
       false,
       Slot(&f->graphics_procs)},
      {"graphics processes (v1)",
       {"nvmlDeviceGetGraphicsRunningProcesses"},
       false,
       Slot(&f->graphics_procs_v1),
       "graphics processes"},
      {"mps processes",
       {"nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetMPSComputeRunningProcesses_v2"},
       false,
       Slot(&f->mps_procs)},
      {"mps processes (v1)",
       {"nvmlDeviceGetMPSComputeRunningProcesses"},
       false,
       Slot(&f->mps_procs_v1),
       "mps processes"},
      {"process utilization",
       {"nvmlDeviceGetProcessUtilization"},
       false,
       Slot(&f->process_utilization)},
      {"supported events", {"nvmlDeviceGetSupportedEventTypes"}, false, Slot(&f->supported_events)},
      {"event set create", {"nvmlEventSetCreate"}, false, Slot(&f->event_set_create)},
      {"event set free", {"nvmlEventSetFree"}, false, Slot(&f->event_set_free)},
      {"register events", {"nvmlDeviceRegisterEvents"}, false, Slot(&f->register_events)},
      {"event wait", {"nvmlEventSetWait_v2", "nvmlEventSetWait"}, false, Slot(&f->event_wait)},
      {"gpm support", {"nvmlGpmQueryDeviceSupport"}, false, Slot(&f->gpm_support)},
      {"gpm sample alloc", {"nvmlGpmSampleAlloc"}, false, Slot(&f->gpm_sample_alloc)},
      {"gpm sample free", {"nvmlGpmSampleFree"}, false, Slot(&f->gpm_sample_free)},
      {"gpm sample", {"nvmlGpmSampleGet"}, false, Slot(&f->gpm_sample_get)},
      {"gpm metrics", {"nvmlGpmMetricsGet"}, false, Slot(&f->gpm_metrics_get)},
      {"mig device count", {"nvmlDeviceGetMaxMigDeviceCount"}, false, Slot(&f->max_mig_devices)},
      {"mig device handle",
       {"nvmlDeviceGetMigDeviceHandleByIndex"},
       false,
       Slot(&f->mig_handle_by_index)},
      {"gpu instance id", {"nvmlDeviceGetGpuInstanceId"}, false, Slot(&f->gpu_instance_id)},
      {"compute instance id",
       {"nvmlDeviceGetComputeInstanceId"},
       false,
       Slot(&f->compute_instance_id)},
      {"device attributes", {"nvmlDeviceGetAttributes_v2"}, false, Slot(&f->attributes)},
      {"gpm mig sample", {"nvmlGpmMigSampleGet"}, false, Slot(&f->gpm_mig_sample_get)},
      {"remapped rows", {"nvmlDeviceGetRemappedRows"}, false, Slot(&f->remapped_rows)},
      {"retired pages", {"nvmlDeviceGetRetiredPages"}, false, Slot(&f->retired_pages)},
      {"retired pages pending",
       {"nvmlDeviceGetRetiredPagesPendingStatus"},
       false,
       Slot(&f->retired_pages_pending)},
  };
}

std::vector<SymbolSpec> SymbolTable(NvmlFunctions* f) {
  std::vector<SymbolSpec> table = {
      {"init", {"nvmlInit_v2", "nvmlInit"}, true, Slot(&f->init)},
      {"shutdown", {"nvmlShutdown"}, true, Slot(&f->shutdown)},
      {"device count",
       {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
       true,
       Slot(&f->device_count)},
      {"device handle",
       {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"},
       true,
       Slot(&f->handle_by_index)},
      {"error string", {"nvmlErrorString"}, false, Slot(&f->error_string)},
      {"driver version", {"nvmlSystemGetDriverVersion"}, false, Slot(&f->driver_version)},
      {"nvml version", {"nvmlSystemGetNVMLVersion"}, false, Slot(&f->nvml_version)},
      {"cuda driver version",
       {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
       false,
       Slot(&f->cuda_driver_version)},
      {"uuid", {"nvmlDeviceGetUUID"}, false, Slot(&f->uuid)},
      {"name", {"nvmlDeviceGetName"}, false, Slot(&f->name)},
      {"pci info",
       {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"},
       false,
       Slot(&f->pci_info)},
      {"memory", {"nvmlDeviceGetMemoryInfo_v2"}, false, Slot(&f->memory_v2)},
      {"memory (v1)", {"nvmlDeviceGetMemoryInfo"}, false, Slot(&f->memory_v1)},
      {"utilization", {"nvmlDeviceGetUtilizationRates"}, false, Slot(&f->utilization)},
      {"power", {"nvmlDeviceGetPowerUsage"}, false, Slot(&f->power_usage)},
      {"power limit", {"nvmlDeviceGetEnforcedPowerLimit"}, false, Slot(&f->power_limit)},
      {"temperature", {"nvmlDeviceGetTemperature"}, false, Slot(&f->temperature)},
      {"clocks", {"nvmlDeviceGetClockInfo"}, false, Slot(&f->clock_info)},
      {"clock reasons",
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
       false,
       Slot(&f->clock_reasons)},
      {"pcie throughput", {"nvmlDeviceGetPcieThroughput"}, false, Slot(&f->pcie_throughput)},
      {"encoder", {"nvmlDeviceGetEncoderUtilization"}, false, Slot(&f->encoder_util)},
      {"decoder", {"nvmlDeviceGetDecoderUtilization"}, false, Slot(&f->decoder_util)},
      {"mig mode", {"nvmlDeviceGetMigMode"}, false, Slot(&f->mig_mode)},
      {"total energy", {"nvmlDeviceGetTotalEnergyConsumption"}, false, Slot(&f->total_energy)},
  };
  std::vector<SymbolSpec> rest = ProcessEventAndGpmSymbols(f);
  table.insert(table.end(), std::make_move_iterator(rest.begin()),
               std::make_move_iterator(rest.end()));
  return table;
}

std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  std::string name = fallback;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    name = map->l_name;
  }
  char resolved[PATH_MAX];
  return realpath(name.c_str(), resolved) != nullptr ? std::string(resolved) : name;
}

}  // namespace

const std::vector<std::string>& DefaultNvmlLibraryNames() {
  static const std::vector<std::string> names = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
  return names;
}

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::Load(const std::string& path) {
  std::vector<std::string> tried =
      path.empty() ? DefaultNvmlLibraryNames() : std::vector<std::string>{path};
  std::string errors;
  for (const std::string& name : tried) {
    dlerror();
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      errors += fmt::format("\n  {}: {}", name, why ? why : "dlopen failed");
      continue;
    }
    std::unique_ptr<NvmlLibrary> library(new NvmlLibrary(handle, LoadedPath(handle, name)));
    CGOV_RETURN_IF_ERROR(library->ResolveAll());
    return library;
  }
  const char* fix = path.empty()
                        ? "install the NVIDIA driver, or point --nvml-lib / CGOV_NVML_LIB at "
                          "libnvidia-ml.so.1"
                        : "check the path given with --nvml-lib / CGOV_NVML_LIB";
  return Unavailable(fmt::format("no NVML library could be loaded ({}):{}", fix, errors));
}

NvmlLibrary::~NvmlLibrary() { dlclose(handle_); }

Status NvmlLibrary::ResolveAll() {
  std::vector<std::string> missing_required;
  for (SymbolSpec& spec : SymbolTable(&fn_)) {
    SymbolResolution resolution{spec.role, spec.candidates, "", spec.required};
    bool skip = false;
    if (spec.fallback_for != nullptr) {
      for (const SymbolResolution& done : symbols_) {
        if (done.role == spec.fallback_for && !done.resolved.empty()) skip = true;
      }
    }
    for (size_t i = 0; !skip && i < spec.candidates.size(); ++i) {
      if (void* symbol = dlsym(handle_, spec.candidates[i].c_str())) {
        *spec.slot = symbol;
        resolution.resolved = spec.candidates[i];
        break;
      }
    }
    if (spec.required && resolution.resolved.empty()) missing_required.push_back(spec.role);
    if (!skip) symbols_.push_back(std::move(resolution));
  }
  if (missing_required.empty()) return Status::Ok();
  std::string names;
  for (const SymbolResolution& s : symbols_) {
    if (s.required && s.resolved.empty()) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", fmt::join(s.candidates, " / "));
    }
  }
  return Unavailable(fmt::format(
      "{} is not a usable NVML library: required symbol(s) missing: {} (update the NVIDIA driver)",
      path_, names));
}

std::vector<std::string> NvmlLibrary::MissingOptional() const {
  constexpr std::string_view kFallbackSuffix = " (v1)";
  auto resolved = [&](const std::string& role) {
    for (const SymbolResolution& s : symbols_) {
      if (s.role == role) return !s.resolved.empty();
    }
    return false;
  };
  std::vector<std::string> missing;
  for (const SymbolResolution& s : symbols_) {
    if (s.required || !s.resolved.empty()) continue;
    if (s.role.size() > kFallbackSuffix.size() && s.role.ends_with(kFallbackSuffix)) continue;
    // Reported under the newest name, unless its v1 fallback stands in for it.
    if (!resolved(s.role + std::string(kFallbackSuffix))) missing.push_back(s.candidates.front());
  }
  return missing;
}

std::string NvmlLibrary::ResolvedSymbol(const std::string& role) const {
  for (const SymbolResolution& s : symbols_) {
    if (s.role == role) return s.resolved;
  }
  return "";
}

bool NvmlLibrary::HasSymbol(const char* symbol) const { return dlsym(handle_, symbol) != nullptr; }

std::string NvmlLibrary::Describe(nvml::nvmlReturn_t code) const {
  std::string text = nvml::ReturnName(code);
  if (fn_.error_string != nullptr) {
    if (const char* words = fn_.error_string(code)) text += fmt::format(" ({})", words);
  }
  return text;
}

}  // namespace cgov
