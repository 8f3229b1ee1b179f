// The doctor report as text and JSON. The probing lives in doctor_checks.cc.
#include "app/doctor/doctor_report.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "core/json_writer.h"
#include "telemetry/gpu_json.h"

namespace cgov {
namespace {

std::string CudaText(std::optional<int> v) {
  return v ? fmt::format("{}.{}", *v / 1000, *v % 1000 / 10) : "unknown";
}

std::string Or(const std::string& s, const char* fallback) { return s.empty() ? fallback : s; }

// The driver has the field, this user may not read it: a problem with a fix, not a limitation.
bool IsPermissionDenied(const FieldSupport& s) {
  return !s.supported && s.reason.starts_with("NVML_ERROR_NO_PERMISSION");
}

void RenderGpu(const GpuInfo& gpu, std::string* out) {
  if (gpu.lost) {
    *out += fmt::format(
        "GPU {}  LOST: {}\n  fix: the GPU fell off the bus or needs a reset; look for Xid errors "
        "in `dmesg` and check `nvidia-smi -q -i {}`. The other GPUs are sampled as usual.\n",
        gpu.index, gpu.lost_reason, gpu.index);
    return;
  }
  std::string memory = gpu.memory_total_bytes
                           ? fmt::format("{:.1f} GiB", *gpu.memory_total_bytes / 1073741824.0)
                           : "memory unknown";
  std::string mig = !gpu.mig_enabled ? "MIG n/a" : (*gpu.mig_enabled ? "MIG on" : "MIG off");
  if (gpu.mig)
    mig = fmt::format("MIG instance (GI {}, CI {})", gpu.mig->gpu_instance_id,
                      gpu.mig->compute_instance_id);
  *out += fmt::format("GPU {}  {}  {}  {}  {}  {}\n", gpu.Label(), Or(gpu.name, "(name unknown)"),
                      Or(gpu.uuid, "(uuid unknown)"), Or(gpu.pci_bus_id, "(bus id unknown)"),
                      memory, mig);
  if (gpu.mig) {
    *out += fmt::format(
        "  MIG:         of GPU {} ({}, {}); {} slice(s); priced at {:.1f} % of it (its share of "
        "the GPU's memory)\n",
        gpu.index, Or(gpu.mig->parent_name, "name unknown"),
        Or(gpu.mig->parent_uuid, "uuid unknown"), gpu.mig->slices, gpu.mig->price_share * 100);
  }
  std::vector<std::string> yes, no, denied;
  std::string denied_reason;
  // A MIG device answers most calls for its parent only: one line per reason, not per field.
  std::vector<std::pair<std::string, std::vector<std::string>>> by_reason;
  for (size_t f = 0; f < kGpuFieldCount; ++f) {
    const FieldSupport& s = gpu.fields[f];
    std::string name(GpuFieldName(static_cast<GpuField>(f)));
    if (s.supported) {
      yes.push_back(name);
      if (!s.reason.empty()) no.push_back(fmt::format("{}: {}", name, s.reason));
      continue;
    }
    if (IsPermissionDenied(s)) {
      denied.push_back(name);
      denied_reason = s.reason;
      continue;
    }
    if (!gpu.mig) {
      no.push_back(fmt::format("unsupported: {} ({})", name, s.reason));
      continue;
    }
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&](const auto& r) { return r.first == s.reason; });
    if (it == by_reason.end())
      by_reason.push_back({s.reason, {name}});
    else
      it->second.push_back(name);
  }
  if (!denied.empty()) {  // the driver could answer: this user may not ask (a fixable problem)
    no.push_back(
        fmt::format("no permission: {} ({})\n  fix: run cgov as root, or as a user the driver "
                    "allows these queries (profiling metrics may be restricted to admins: "
                    "NVreg_RestrictProfilingToAdminUsers)",
                    fmt::join(denied, " "), denied_reason));
  }
  for (const auto& [reason, names] : by_reason) {
    no.push_back(fmt::format("unsupported: {} ({}; a MIG instance's parent GPU answers these)",
                             fmt::join(names, " "), reason));
  }
  *out += fmt::format("  fields:      {}\n",
                      yes.empty() ? "none" : fmt::format("{}", fmt::join(yes, " ")));
  if (gpu.memory_reserved_bytes) {
    *out += fmt::format("  reserved:    {:.0f} MiB by the driver ({}); memory figures exclude it\n",
                        *gpu.memory_reserved_bytes / 1048576.0, gpu.memory_reserved_source);
  } else if (gpu.field(GpuField::kMemory).supported) {
    *out +=
        "  reserved:    unknown (no nvmlDeviceGetMemoryInfo_v2, and the processes' memory was "
        "not all known at start): memory used includes the driver's reservation\n";
  }
  if (const std::optional<MemoryHealth>& h = gpu.memory_health) {
    const std::string state =
        h->row_remapping
            ? fmt::format("{} row(s) remapped (correctable), {} (uncorrectable){}{}",
                          h->remapped_correctable, h->remapped_uncorrectable,
                          h->remap_pending ? "; remapping pending a GPU reset" : "",
                          h->remap_failure ? "; a remapping FAILED (no spare rows)" : "")
            : fmt::format("{} page(s) retired (single-bit), {} (double-bit){}", h->retired_sbe,
                          h->retired_dbe,
                          h->retired_pending ? "; retirement pending a reboot" : "");
    *out += fmt::format("  {}{}\n", h->NeedsAction() ? "WARNING memory: " : "memory:      ", state);
  }
  for (const std::string& n : no) *out += fmt::format("  {}\n", n);
}

}  // namespace

std::string RenderDoctorText(const DoctorReport& r) {
  std::string out = fmt::format("cgov {} doctor\n\nNVML\n", CGOV_VERSION);
  if (!r.nvml_ok) {
    out += fmt::format("  no GPU data: {}\n", r.nvml_error);
  } else {
    out += fmt::format("  library:  {}\n", r.nvml_path);
    out += fmt::format("  driver:   {}   NVML {}   CUDA {}\n", Or(r.driver_version, "unknown"),
                       Or(r.nvml_version, "unknown"), CudaText(r.cuda_driver_version));
    std::vector<std::string> older;
    for (const SymbolResolution& s : r.symbols) {
      if (s.resolved.empty()) continue;
      std::string newest = s.candidates.front();
      bool standby = false;             // a v1 fallback kept beside a resolved newer symbol
      if (s.role.ends_with(" (v1)")) {  // stands in for the role without the suffix
        std::string primary = s.role.substr(0, s.role.size() - 5);
        for (const SymbolResolution& p : r.symbols) {
          if (p.role != primary) continue;
          newest = p.candidates.front();
          standby = !p.resolved.empty();
        }
      }
      if (standby) continue;
      if (s.resolved != newest) older.push_back(fmt::format("{} (no {})", s.resolved, newest));
    }
    if (!older.empty()) {
      out += "  older API in use (an older driver; cgov reads the same fields through it):\n";
      for (const std::string& o : older) out += fmt::format("    {}\n", o);
    }
    if (!r.missing_optional_symbols.empty()) {
      out += fmt::format("  missing optional symbols (their fields are unknown): {}\n",
                         fmt::join(r.missing_optional_symbols, ", "));
    }
    for (const ProcessListAbi& l : r.process_lists) {
      if (l.symbol.empty()) continue;
      out += fmt::format("  {:<14} {} ({}-byte entries: {})\n", l.kind + " list:", l.symbol,
                         l.expected.bytes, l.expected.why);
    }
    for (const std::string& w : r.abi_warnings) out += fmt::format("  WARNING        {}\n", w);
    size_t lost = 0;
    for (const GpuInfo& g : r.gpus) lost += g.lost ? 1 : 0;
    out += fmt::format("  GPUs:     {}{}\n", r.gpus.size(),
                       lost ? fmt::format(" ({} lost)", lost) : "");
    if (r.gpus.empty()) out += "  (the driver answers but reports no GPU)\n";
    out += "\n";
    for (const GpuInfo& g : r.gpus) RenderGpu(g, &out);
  }
  out +=
      fmt::format("\nHost{}\n", r.host_root == "/" ? "" : fmt::format(" (root {})", r.host_root));
  size_t problems = r.nvml_ok ? 0 : 1;
  for (const GpuInfo& g : r.gpus) {
    problems += g.lost || (g.memory_health && g.memory_health->NeedsAction()) ? 1 : 0;
    problems += std::any_of(g.fields.begin(), g.fields.end(), IsPermissionDenied) ? 1 : 0;
  }
  problems += r.abi_warnings.size();
  for (const HostCheck& c : r.host) {
    out += fmt::format("  {:<7} {:<24} {}\n", c.status, c.name, c.detail);
    if (!c.fix.empty()) out += fmt::format("  {:<7} {:<24} fix: {}\n", "", "", c.fix);
    problems += c.status == "ok" ? 0 : 1;
  }
  out += problems == 0 ? "\nEverything cgov uses is available.\n"
                       : fmt::format(
                             "\n{} item(s) above need attention; cgov runs with what is "
                             "available and marks the rest unknown.\n",
                             problems);
  return out;
}

nlohmann::json RenderDoctorJson(const DoctorReport& r) {
  nlohmann::json nvml = {{"ok", r.nvml_ok}};
  if (!r.nvml_ok) nvml["error"] = r.nvml_error;
  if (r.nvml_ok) {
    nvml["library_path"] = r.nvml_path;
    nvml["driver_version"] = r.driver_version;
    nvml["nvml_version"] = r.nvml_version;
    nvml["cuda_driver_version"] =
        r.cuda_driver_version ? nlohmann::json(*r.cuda_driver_version) : nlohmann::json(nullptr);
    nlohmann::json symbols = nlohmann::json::object();
    for (const SymbolResolution& s : r.symbols) {
      symbols[s.role] = {
          {"candidates", s.candidates},
          {"required", s.required},
          {"resolved", s.resolved.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.resolved)}};
    }
    nvml["symbols"] = symbols;
    nvml["missing_optional_symbols"] = r.missing_optional_symbols;
    nlohmann::json lists = nlohmann::json::object();
    for (const ProcessListAbi& l : r.process_lists) {
      lists[l.kind] = {
          {"symbol", l.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.symbol)},
          {"entry_bytes", l.expected.bytes},
          {"why", l.expected.why}};
    }
    nvml["process_lists"] = lists;
    nvml["abi_warnings"] = r.abi_warnings;
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuInfo& g : r.gpus) {
    nlohmann::json fields = nlohmann::json::object();
    for (size_t f = 0; f < kGpuFieldCount; ++f) {
      nlohmann::json entry = {{"supported", g.fields[f].supported}};
      if (!g.fields[f].supported)
        entry["reason"] = g.fields[f].reason;
      else if (!g.fields[f].reason.empty())
        entry["source"] = g.fields[f].reason;  // MIG utilization
      fields[std::string(GpuFieldName(static_cast<GpuField>(f)))] = entry;
    }
    auto text_or_null = [](const std::string& t) {
      return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t);
    };
    gpus.push_back(
        {{"index", g.index},
         {"uuid", text_or_null(g.uuid)},
         {"name", text_or_null(g.name)},
         {"pci_bus_id", text_or_null(g.pci_bus_id)},
         {"lost", g.lost},
         {"lost_reason", g.lost ? nlohmann::json(g.lost_reason) : nlohmann::json(nullptr)},
         {"memory_total_bytes",
          g.memory_total_bytes ? nlohmann::json(*g.memory_total_bytes) : nlohmann::json(nullptr)},
         {"mig_enabled", g.mig_enabled ? nlohmann::json(*g.mig_enabled) : nlohmann::json(nullptr)},
         {"memory_reserved_bytes", g.memory_reserved_bytes
                                       ? nlohmann::json(*g.memory_reserved_bytes)
                                       : nlohmann::json(nullptr)},
         {"memory_reserved_source", g.memory_reserved_source},
         {"mig", g.mig ? MigInstanceJson(*g.mig) : nlohmann::json(nullptr)},
         {"memory_health",
          g.memory_health ? MemoryHealthJson(*g.memory_health) : nlohmann::json(nullptr)},
         {"fields", fields}});
  }
  nlohmann::json host = nlohmann::json::array();
  for (const HostCheck& c : r.host) {
    host.push_back({{"name", c.name}, {"status", c.status}, {"detail", c.detail}, {"fix", c.fix}});
  }
  return {{"schema_version", 1}, {"cgov_version", CGOV_VERSION}, {"nvml", nvml},
          {"gpus", gpus},        {"host_root", r.host_root},     {"host", host}};
}

}  // namespace cgov
