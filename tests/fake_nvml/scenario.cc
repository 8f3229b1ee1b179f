#include "scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace fake_nvml {

const char* const kStateFieldNames[kStateFieldCount] = {
    "util_gpu",     "util_mem",      "mem_used_mib",  "power_w",         "temp_c",
    "sm_clock_mhz", "mem_clock_mhz", "clock_reasons", "pcie_tx_kbps",    "pcie_rx_kbps",
    "enc_util",     "dec_util",      "sm_active",     "sm_occupancy",    "tensor_active",
    "dram_active",  "pcie_tx_mib_s", "pcie_rx_mib_s", "nvlink_tx_mib_s", "nvlink_rx_mib_s",
};

std::optional<StateField> StateFieldByName(const std::string& name) {
  for (size_t i = 0; i < kStateFieldCount; ++i) {
    if (name == kStateFieldNames[i]) return static_cast<StateField>(i);
  }
  return std::nullopt;
}

const std::set<std::string> kFieldNames = {
    "utilization",
    "memory",
    "power",
    "power_limit",
    "temperature",
    "sm_clock",
    "mem_clock",
    "clock_reasons",
    "encoder",
    "decoder",
    "pcie_throughput",
    "compute_processes",
    "graphics_processes",
    "process_utilization",
    "mig_mode",
    "total_energy",
    "name",
    "uuid",
    "pci_info",
    "mps_processes",
    "memory_v2",
    "xid_events",
    "gpm",
    "memory_health",
};

namespace {

using nlohmann::json;

struct ParseError {
  std::string where;
  std::string what;
};

const std::map<std::string, int>& ErrorCodes() {
  static const std::map<std::string, int> codes = {
      {"UNINITIALIZED", 1},
      {"INVALID_ARGUMENT", 2},
      {"NOT_SUPPORTED", 3},
      {"NO_PERMISSION", 4},
      {"NOT_FOUND", 6},
      {"INSUFFICIENT_POWER", 8},
      {"DRIVER_NOT_LOADED", 9},
      {"TIMEOUT", 10},
      {"LIBRARY_NOT_FOUND", 12},
      {"GPU_IS_LOST", 15},
      {"LIB_RM_VERSION_MISMATCH", 18},
      {"UNKNOWN", 999},
  };
  return codes;
}

double Number(const json& j, const std::string& where) {
  if (!j.is_number()) throw ParseError{where, "must be a number"};
  return j.get<double>();
}

std::string Text(const json& j, const std::string& where) {
  if (!j.is_string()) throw ParseError{where, "must be a string"};
  return j.get<std::string>();
}

std::set<std::string> FieldSet(const json& j, const std::string& where) {
  if (!j.is_array()) throw ParseError{where, "must be an array of field names"};
  std::set<std::string> out;
  for (size_t i = 0; i < j.size(); ++i) {
    std::string name = Text(j[i], where + "[" + std::to_string(i) + "]");
    if (!kFieldNames.count(name)) throw ParseError{where, "unknown field '" + name + "'"};
    out.insert(name);
  }
  return out;
}

// The lowest pid among the children of the process that loaded the fake (any of its threads):
// "pid": "child" makes a scenario's process the job `cgov run` started. 0 when there is none.
unsigned FirstChildPid() {
  unsigned lowest = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream children(task.path() / "children");
    for (unsigned pid = 0; children >> pid;) {
      if (lowest == 0 || pid < lowest) lowest = pid;
    }
  }
  return lowest;
}

Process ParseProcess(const json& j, const std::string& where) {
  Process p;
  for (auto& [key, value] : j.items()) {
    std::string at = where + "." + key;
    if (key == "pid" && value.is_string() && value.get<std::string>() == "child") {
      p.pid = FirstChildPid();
      if (p.pid == 0) throw ParseError{at, "\"child\": the process that loaded NVML has no child"};
    } else if (key == "pid") {
      p.pid = static_cast<unsigned>(Number(value, at));
    } else if (key == "type") {
      std::string type = Text(value, at);
      if (type != "compute" && type != "graphics" && type != "both" && type != "mps") {
        throw ParseError{at, "must be compute, graphics, both or mps"};
      }
      p.compute = type != "graphics";
      p.graphics = type == "graphics" || type == "both";
      p.mps = type == "mps";
    } else if (key == "used_mib")
      p.used_mib = Number(value, at);
    else if (key == "sm_util")
      p.sm_util = Number(value, at);
    else if (key == "mem_util")
      p.mem_util = Number(value, at);
    else if (key == "start")
      p.start = Number(value, at);
    else if (key == "end")
      p.end = Number(value, at);
    else
      throw ParseError{at, "unknown key"};
  }
  if (p.pid == 0) throw ParseError{where + ".pid", "is required and must be > 0"};
  return p;
}

Gpu ParseGpu(const json& j, const std::string& where, int* copies, int* pid_stride,
             bool mig_device = false) {
  if (!j.is_object()) throw ParseError{where, "must be an object"};
  Gpu g;
  for (auto& [key, value] : j.items()) {
    std::string at = where + "." + key;
    if (key == "name")
      g.name = Text(value, at);
    else if (key == "uuid")
      g.uuid = Text(value, at);
    else if (key == "pci_bus_id")
      g.pci_bus_id = Text(value, at);
    else if (key == "memory_total_mib")
      g.memory_total_mib = Number(value, at);
    else if (key == "power_limit_w")
      g.power_limit_w = Number(value, at);
    else if (key == "reserved_mib")
      g.reserved_mib = Number(value, at);
    else if (key == "mig")
      g.mig =
          value.is_boolean() ? value.get<bool>() : throw ParseError{at, "must be true or false"};
    else if (key == "gpm")
      g.gpm =
          value.is_boolean() ? value.get<bool>() : throw ParseError{at, "must be true or false"};
    else if (key == "period_s")
      g.period_s = Number(value, at);
    else if (key == "copies")
      *copies = static_cast<int>(Number(value, at));
    else if (key == "pid_stride")
      *pid_stride = static_cast<int>(Number(value, at));
    else if (key == "lost_at")
      g.lost_at = Number(value, at);
    else if (key == "xid_events") {
      if (!value.is_array()) throw ParseError{at, "must be an array of {\"t\", \"xid\"}"};
      for (size_t i = 0; i < value.size(); ++i) {
        const std::string xat = at + "[" + std::to_string(i) + "]";
        if (!value[i].is_object() || !value[i].contains("t") || !value[i].contains("xid")) {
          throw ParseError{xat, "must be an object with \"t\" and \"xid\""};
        }
        const double t = Number(value[i]["t"], xat + ".t");
        if (!g.xid_events.empty() && t < g.xid_events.back().t) {
          throw ParseError{xat + ".t", "times must not decrease"};
        }
        const double xid = Number(value[i]["xid"], xat + ".xid");
        if (xid < 0 || xid > 999) throw ParseError{xat + ".xid", "must be 0 to 999"};
        XidEvent event{t, static_cast<unsigned>(xid)};
        if (value[i].contains("gi")) {
          event.gpu_instance = static_cast<unsigned>(Number(value[i]["gi"], xat + ".gi"));
        }
        g.xid_events.push_back(event);
      }
    } else if (!mig_device && key == "mig_devices") {
      if (!value.is_array() || value.empty()) {
        throw ParseError{at, "must be a non-empty array of MIG devices"};
      }
      // Parsed by the caller (they need the parent's name and position).
    } else if (mig_device && key == "gi")
      g.gpu_instance = static_cast<unsigned>(Number(value, at));
    else if (mig_device && key == "ci")
      g.compute_instance = static_cast<unsigned>(Number(value, at));
    else if (mig_device && key == "slices")
      g.slices = static_cast<unsigned>(Number(value, at));
    else if (mig_device && key == "sm_count")
      g.sm_count = static_cast<unsigned>(Number(value, at));
    else if (key == "remapped_rows" || key == "retired_pages") {
      if (!value.is_object()) throw ParseError{at, "must be an object"};
      unsigned counts[2] = {0, 0};
      bool flags[2] = {false, false};
      const bool rows = key == "remapped_rows";
      const char* count_keys[2] = {rows ? "correctable" : "sbe", rows ? "uncorrectable" : "dbe"};
      for (auto& [k, v] : value.items()) {
        const std::string kat = at + "." + k;
        if (k == count_keys[0] || k == count_keys[1]) {
          const double n = Number(v, kat);
          if (n < 0) throw ParseError{kat, "must be >= 0"};
          counts[k == count_keys[1]] = static_cast<unsigned>(n);
        } else if (k == "pending" || (rows && k == "failure")) {
          if (!v.is_boolean()) throw ParseError{kat, "must be true or false"};
          flags[k != "pending"] = v.get<bool>();
        } else {
          throw ParseError{kat, "unknown key"};
        }
      }
      if (rows)
        g.remapped_rows = {counts[0], counts[1], flags[0], flags[1]};
      else {
        g.retired_pages = std::pair{counts[0], counts[1]};
        g.retired_pages_pending = flags[0];
      }
    } else if (key == "not_supported")
      g.not_supported = FieldSet(value, at);
    else if (key == "no_permission")
      g.no_permission = FieldSet(value, at);
    else if (key == "processes") {
      if (!value.is_array()) throw ParseError{at, "must be an array"};
      for (size_t i = 0; i < value.size(); ++i) {
        g.processes.push_back(ParseProcess(value[i], at + "[" + std::to_string(i) + "]"));
      }
    } else if (key == "timeline") {
      if (!value.is_array()) throw ParseError{at, "must be an array"};
      for (size_t i = 0; i < value.size(); ++i) {
        std::string pat = at + "[" + std::to_string(i) + "]";
        if (!value[i].is_object() || !value[i].contains("t")) {
          throw ParseError{pat, "must be an object with a time \"t\""};
        }
        GpuState state;
        double t = 0;
        for (auto& [field, v] : value[i].items()) {
          if (field == "t")
            t = Number(v, pat + ".t");
          else if (auto f = StateFieldByName(field))
            state[*f] = Number(v, pat + "." + field);
          else
            throw ParseError{pat + "." + field, "unknown timeline field"};
        }
        if (!g.timeline.empty() && t <= g.timeline.back().first) {
          throw ParseError{pat + ".t", "times must increase"};
        }
        g.timeline.emplace_back(t, std::move(state));
      }
    } else {
      throw ParseError{at, "unknown key"};
    }
  }
  if (g.memory_total_mib <= 0)
    throw ParseError{where + ".memory_total_mib", "is required and must be > 0"};
  if (!g.reserved_mib) g.reserved_mib = std::min(512.0, g.memory_total_mib / 100);
  if (*g.reserved_mib < 0) throw ParseError{where + ".reserved_mib", "must be >= 0"};
  // Carry values forward so each point holds the full state from its time on.
  for (size_t i = 1; i < g.timeline.size(); ++i) {
    for (size_t f = 0; f < kStateFieldCount; ++f) {
      double& v = g.timeline[i].second.values[f];
      if (std::isnan(v)) v = g.timeline[i - 1].second.values[f];
    }
  }
  return g;
}

// What a MIG device handle answers NOT_SUPPORTED for, besides what the scenario adds: its
// utilization (nvml.h: not supported in MIG mode), power, thermals, clocks, codecs and PCIe are
// the parent's; events and GPM go through the parent's handle.
const std::set<std::string> kMigDeviceNotSupported = {
    "utilization",         "power",         "power_limit", "temperature", "sm_clock",
    "mem_clock",           "clock_reasons", "encoder",     "decoder",     "pcie_throughput",
    "process_utilization", "total_energy",  "xid_events",  "gpm",         "mig_mode"};

// The MIG devices of the parent at `parent` (its JSON `mig_devices`), appended to s->mig_devices.
void ParseMigDevices(const json& parent_json, const std::string& where, size_t parent,
                     Scenario* s) {
  Gpu& p = s->gpus[parent];
  if (!p.mig) throw ParseError{where + ".mig_devices", "needs \"mig\": true"};
  const json& list = parent_json["mig_devices"];
  for (size_t k = 0; k < list.size(); ++k) {
    const std::string at = where + ".mig_devices[" + std::to_string(k) + "]";
    int copies = 1, stride = 1;
    Gpu d = ParseGpu(list[k], at, &copies, &stride, true);
    if (copies != 1) throw ParseError{at + ".copies", "MIG devices are listed one by one"};
    if (!list[k].contains("gi")) throw ParseError{at + ".gi", "is required"};
    for (const size_t other : p.mig_devices) {
      const Gpu& o = s->mig_devices[other];
      if (o.gpu_instance == d.gpu_instance && o.compute_instance == d.compute_instance) {
        throw ParseError{at, "repeats another device's gi and ci"};
      }
    }
    d.parent = static_cast<int>(parent);
    d.gpm = p.gpm;
    d.not_supported.insert(kMigDeviceNotSupported.begin(), kMigDeviceNotSupported.end());
    char text[96];
    if (d.name.empty())
      d.name = p.name + " MIG " + std::to_string(d.slices) + "g." +
               std::to_string(static_cast<long>(std::ceil(d.memory_total_mib / 1024))) + "gb";
    if (d.uuid.empty()) {
      std::snprintf(text, sizeof(text), "MIG-fa4e0000-0000-4000-9000-%06zx%06zx", parent, k);
      d.uuid = text;
    }
    d.pci_bus_id = p.pci_bus_id;
    p.mig_devices.push_back(s->mig_devices.size());
    s->mig_devices.push_back(std::move(d));
  }
  // nvml.h: "On MIG-enabled GPUs, querying device utilization rates is not currently supported."
  p.not_supported.insert("utilization");
}

void Fill(Gpu* g, size_t index) {
  char text[96];
  if (g->name.empty()) g->name = "NVIDIA Fake GPU";
  if (g->uuid.empty()) {
    std::snprintf(text, sizeof(text), "GPU-fa4e0000-0000-4000-8000-%012zx", index);
    g->uuid = text;
  }
  if (g->pci_bus_id.empty()) {
    std::snprintf(text, sizeof(text), "00000000:%02zX:00.0", 0x18 + index);
    g->pci_bus_id = text;
  }
}

}  // namespace

double Gpu::ValueAt(double t, StateField field, double fallback) const {
  if (timeline.empty()) return fallback;
  if (period_s > 0) {
    // Within the first period (and most calls, a period later) without fmod, which cost the fake
    // a tenth of its instructions: it answers ~200 calls a tick.
    t = std::max(t, 0.0);
    if (t >= period_s) {
      const double periods = t / period_s;
      t = periods < 1e15 ? t - period_s * static_cast<double>(static_cast<int64_t>(periods))
                         : std::fmod(t, period_s);
      if (t >= period_s || t < 0) t = std::fmod(std::max(t, 0.0), period_s);  // rounding
    }
  }
  auto it = std::upper_bound(timeline.begin(), timeline.end(), t,
                             [](double x, const auto& point) { return x < point.first; });
  if (it == timeline.begin()) return fallback;
  const double v = std::prev(it)->second[field];
  return std::isnan(v) ? fallback : v;
}

std::optional<int> ErrorCodeByName(const std::string& name) {
  std::string key = name.rfind("NVML_ERROR_", 0) == 0 ? name.substr(11) : name;
  auto it = ErrorCodes().find(key);
  if (it == ErrorCodes().end()) return std::nullopt;
  return it->second;
}

bool ParseScenario(const std::string& text, const std::string& file, Scenario* out,
                   std::string* error) {
  try {
    json root = json::parse(text);
    if (!root.is_object()) throw ParseError{"(top)", "must be an object"};
    Scenario s;
    for (auto& [key, value] : root.items()) {
      if (key == "driver_version")
        s.driver_version = Text(value, key);
      else if (key == "nvml_version")
        s.nvml_version = Text(value, key);
      else if (key == "cuda_driver_version")
        s.cuda_driver_version = static_cast<int>(Number(value, key));
      else if (key == "time_scale")
        s.time_scale = Number(value, key);
      else if (key == "v3_process_entry_bytes") {
        const double bytes = Number(value, key);
        if (bytes != 16 && bytes != 24 && bytes != 32) {
          throw ParseError{key, "must be 16, 24 or 32 (the widths drivers write)"};
        }
        s.v3_process_entry_bytes = static_cast<unsigned>(bytes);
      } else if (key == "init_error") {
        auto code = ErrorCodeByName(Text(value, key));
        if (!code) throw ParseError{key, "unknown NVML error name"};
        s.init_error = *code;
      } else if (key == "delays_ms") {
        if (!value.is_object()) throw ParseError{key, "must map NVML function names to ms"};
        for (auto& [fn, ms] : value.items())
          s.delays_ms[fn] = static_cast<int>(Number(ms, key + "." + fn));
      } else if (key == "gpus") {
        if (!value.is_array()) throw ParseError{key, "must be an array"};
        for (size_t i = 0; i < value.size(); ++i) {
          int copies = 1, pid_stride = 1;
          Gpu g = ParseGpu(value[i], "gpus[" + std::to_string(i) + "]", &copies, &pid_stride);
          if (value[i].contains("mig_devices") && copies != 1) {
            throw ParseError{"gpus[" + std::to_string(i) + "].copies",
                             "a GPU with mig_devices is listed once"};
          }
          for (int k = 0; k < copies; ++k) {
            Gpu copy = g;
            if (k > 0 && !copy.uuid.empty()) copy.uuid += "-" + std::to_string(k);
            for (Process& p : copy.processes) p.pid += static_cast<unsigned>(k * pid_stride);
            Fill(&copy, s.gpus.size());
            s.gpus.push_back(std::move(copy));
          }
          if (value[i].contains("mig_devices")) {
            ParseMigDevices(value[i], "gpus[" + std::to_string(i) + "]", s.gpus.size() - 1, &s);
          }
        }
      } else if (key == "comment") {
        // free text for the reader
      } else {
        throw ParseError{key, "unknown key"};
      }
    }
    *out = std::move(s);
    return true;
  } catch (const ParseError& e) {
    *error = file + ": " + e.where + ": " + e.what;
  } catch (const nlohmann::json::exception& e) {
    *error = file + ": not valid JSON: " + e.what();
  }
  return false;
}

}  // namespace fake_nvml
