// What this machine offers Cost Governor, what is missing, and how to fix it (`cgov doctor`).
#ifndef CGOV_APP_DOCTOR_DOCTOR_REPORT_H_
#define CGOV_APP_DOCTOR_DOCTOR_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "os/file_reader.h"
#include "telemetry/gpu_sample.h"
#include "telemetry/host_reader.h"
#include "telemetry/nvml_loader.h"
#include "telemetry/nvml_source.h"

namespace cgov {

// One line of the host section: a source, whether it works, what it said, how to fix it.
struct HostCheck {
  std::string name;    // "/proc/stat", "cgroup cpu limit", ...
  std::string status;  // "ok", "warn" (works with less), "missing" (does not work)
  std::string detail;
  std::string fix;  // empty when nothing to do
};

struct DoctorReport {
  // NVML
  bool nvml_ok = false;
  bool nvml_explicit = false;  // the user named a library: failing to load it is an error
  std::string nvml_error;      // why NVML is unusable
  std::string nvml_path;
  std::string driver_version;
  std::string nvml_version;
  std::optional<int> cuda_driver_version;
  std::vector<SymbolResolution> symbols;
  std::vector<std::string> missing_optional_symbols;
  std::vector<GpuInfo> gpus;
  std::vector<ProcessListAbi> process_lists;  // which call lists processes, and entry widths
  std::vector<std::string> abi_warnings;      // the driver wrote what its ABI does not say
  // Host
  std::string host_root;
  std::vector<HostCheck> host;

  // Non-zero only when something the user asked for cannot work.
  int ExitStatus() const;
};

// Probes NVML (`nvml_lib` empty: the default search) and the files under `files`.
DoctorReport BuildDoctorReport(const std::string& nvml_lib, bool nvml_explicit, FileReader& files,
                               const std::string& host_root);

std::string RenderDoctorText(const DoctorReport& report);
nlohmann::json RenderDoctorJson(const DoctorReport& report);

}  // namespace cgov

#endif  // CGOV_APP_DOCTOR_DOCTOR_REPORT_H_
