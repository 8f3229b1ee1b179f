#include "store/sample_record.h"

#include <cmath>

#include "core/json_writer.h"
#include "core/time_format.h"
#include "telemetry/gpu_json.h"

namespace cgov {
namespace {

using nlohmann::json;

template <typename T>
json OptOrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::optional<double> Rounded(const std::optional<double>& v) {
  return v ? std::optional<double>(Round3(*v)) : std::nullopt;
}

// Members of every object below are written in sorted key order.
void WriteHost(const HostSample& h, JsonWriter& w) {
  w.BeginObject();
  w.Key("cpu_core_pct").BeginArray();
  for (const auto& c : h.core_pct) w.Opt(Rounded(c));
  w.EndArray();
  w.Key("cpu_pct").Opt(Rounded(h.cpu_pct));
  w.Key("disk_read_bytes_per_s").Opt(Rounded(h.disk_read_bytes_per_s));
  w.Key("disk_write_bytes_per_s").Opt(Rounded(h.disk_write_bytes_per_s));
  w.Key("iowait_pct").Opt(Rounded(h.iowait_pct));
  w.Key("load1").Opt(h.load ? std::optional<double>(Round3(h.load->load1)) : std::nullopt);
  w.Key("mem_available_bytes").Opt(h.mem_available_bytes);
  w.Key("mem_total_bytes").Opt(h.mem_total_bytes);
  w.Key("net_rx_bytes_per_s").Opt(Rounded(h.net_rx_bytes_per_s));
  w.Key("net_tx_bytes_per_s").Opt(Rounded(h.net_tx_bytes_per_s));
  w.EndObject();
}

void WriteProcesses(const GpuSlowSample& slow, JsonWriter& w) {
  if (!slow.processes_known) {
    w.Null();
    return;
  }
  w.BeginArray();
  for (const GpuProcess& p : slow.processes) {
    w.BeginObject();
    w.Key("compute").Bool(p.compute);
    w.Key("graphics").Bool(p.graphics);
    w.Key("mem_util_pct").Opt(p.mem_util_pct);
    w.Key("mps").Bool(p.mps);
    w.Key("pid").UInt(p.pid);
    w.Key("sm_util_pct").Opt(p.sm_util_pct);
    w.Key("used_memory_bytes").Opt(p.used_memory_bytes);
    w.EndObject();
  }
  w.EndArray();
}

void WriteGpm(const GpmMetrics& g, JsonWriter& w) {
  w.BeginObject();
  w.Key("dram_active_pct").Opt(Rounded(g.dram_active_pct));
  w.Key("nvlink_rx_mib_s").Opt(Rounded(g.nvlink_rx_mib_s));
  w.Key("nvlink_tx_mib_s").Opt(Rounded(g.nvlink_tx_mib_s));
  w.Key("pcie_rx_mib_s").Opt(Rounded(g.pcie_rx_mib_s));
  w.Key("pcie_tx_mib_s").Opt(Rounded(g.pcie_tx_mib_s));
  w.Key("sm_active_pct").Opt(Rounded(g.sm_active_pct));
  w.Key("sm_occupancy_pct").Opt(Rounded(g.sm_occupancy_pct));
  w.Key("tensor_active_pct").Opt(Rounded(g.tensor_active_pct));
  w.EndObject();
}

void WriteGpu(size_t index, const GpuFastSample& f, const GpuSlowSample* slow, int64_t tick_ns,
              JsonWriter& w) {
  const bool fresh = slow != nullptr && slow->read_mono_ns > 0;
  w.BeginObject();
  w.Key("clock_reasons").Opt(f.clock_reasons);
  w.Key("dec_util_pct").Opt(f.dec_util_pct);
  w.Key("enc_util_pct").Opt(f.enc_util_pct);
  w.Key("gpm");
  if (fresh && slow->gpm.Any()) {
    WriteGpm(slow->gpm, w);
  } else {
    w.Null();
  }
  w.Key("index").UInt(index);
  w.Key("last_xid").Opt(f.last_xid);
  w.Key("lost").Bool(f.lost);
  w.Key("mem_clock_mhz").Opt(f.mem_clock_mhz);
  w.Key("mem_total_bytes").Opt(f.mem_total_bytes);
  w.Key("mem_used_bytes").Opt(f.mem_used_bytes);
  w.Key("pcie_rx_kbps").Opt(fresh ? slow->pcie_rx_kbps : std::nullopt);
  w.Key("pcie_tx_kbps").Opt(fresh ? slow->pcie_tx_kbps : std::nullopt);
  w.Key("power_limit_mw").Opt(f.power_limit_mw);
  w.Key("power_mw").Opt(f.power_mw);
  w.Key("processes");
  if (fresh) {
    WriteProcesses(*slow, w);
  } else {
    w.Null();
  }
  w.Key("slow_age_s");
  if (fresh) {
    w.Double(
        Round3(static_cast<double>(std::max<int64_t>(0, tick_ns - slow->read_mono_ns)) * 1e-9));
  } else {
    w.Null();
  }
  w.Key("sm_clock_mhz").Opt(f.sm_clock_mhz);
  w.Key("temp_c").Opt(f.temp_c);
  w.Key("util_gpu_pct").Opt(f.util_gpu_pct);
  w.Key("util_mem_pct").Opt(f.util_mem_pct);
  w.Key("xid_errors").Opt(f.xid_errors);
  w.EndObject();
}

}  // namespace

json HeaderRecord(const SamplesHeader& h) {
  json gpus = json::array();
  for (const GpuInfo& g : h.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"pci_bus_id", g.pci_bus_id},
                    {"memory_total_bytes", OptOrNull(g.memory_total_bytes)},
                    {"lost", g.lost}});
    if (g.mig) gpus.back()["mig"] = MigInstanceJson(*g.mig);
  }
  return {{"kind", "header"},
          {"schema_version", kSamplesSchemaVersion},
          {"command", h.command},
          {"tags", h.tags},
          {"host",
           {{"hostname", h.host.hostname},
            {"kernel", h.host.kernel},
            {"cpus", h.host.cpus},
            {"mem_total_bytes", OptOrNull(h.host.mem_total_bytes)}}},
          {"interval_s", Round3(h.interval_s)},
          {"started_at", FormatRfc3339Utc(h.started_at_ns)},
          {"nvml",
           {{"ok", h.nvml_ok},
            {"error", h.nvml_ok ? json(nullptr) : json(h.nvml_error)},
            {"driver_version", h.driver_version.empty() ? json(nullptr) : json(h.driver_version)}}},
          {"gpus", gpus}};
}

void WriteTickRecord(const TickSample& tick, const JobTreeSample& job, int64_t start_mono_ns,
                     std::string* out) {
  JsonWriter w(out);
  w.BeginObject();
  w.Key("gpus").BeginArray();
  for (size_t i = 0; i < tick.gpu_fast.size(); ++i) {
    const GpuSlowSample* slow = i < tick.gpu_slow.size() ? &tick.gpu_slow[i] : nullptr;
    WriteGpu(i, tick.gpu_fast[i], slow, tick.mono_ns, w);
  }
  w.EndArray();
  w.Key("host");
  WriteHost(tick.host, w);
  w.Key("job").BeginObject();
  w.Key("cpu_pct").Opt(Rounded(job.cpu_pct));
  w.Key("pids").BeginArray();
  for (int pid : job.pids) w.Int(pid);
  w.EndArray();
  w.Key("rss_bytes").Opt(job.rss_bytes);
  w.EndObject();
  w.Key("kind").String("tick");
  w.Key("t_s").Double(Round3(static_cast<double>(tick.mono_ns - start_mono_ns) * 1e-9));
  w.Key("ts").String(FormatRfc3339Utc(tick.wall_ns));
  w.EndObject();
}

}  // namespace cgov
