#include "store/sample_record.h"

#include <cmath>

#include "core/time_format.h"

namespace cgov {
namespace {

using nlohmann::json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json OptRounded(const std::optional<double>& v) { return v ? json(Round3(*v)) : json(nullptr); }

json HostRecord(const HostSample& h) {
  json cores = json::array();
  for (const auto& c : h.core_pct) cores.push_back(OptRounded(c));
  return {{"cpu_pct", OptRounded(h.cpu_pct)},
          {"cpu_core_pct", cores},
          {"mem_total_bytes", Opt(h.mem_total_bytes)},
          {"mem_available_bytes", Opt(h.mem_available_bytes)},
          {"disk_read_bytes_per_s", OptRounded(h.disk_read_bytes_per_s)},
          {"disk_write_bytes_per_s", OptRounded(h.disk_write_bytes_per_s)},
          {"net_rx_bytes_per_s", OptRounded(h.net_rx_bytes_per_s)},
          {"net_tx_bytes_per_s", OptRounded(h.net_tx_bytes_per_s)},
          {"load1", h.load ? json(Round3(h.load->load1)) : json(nullptr)}};
}

json ProcessesRecord(const GpuSlowSample& slow) {
  if (!slow.processes_known) return nullptr;
  json list = json::array();
  for (const GpuProcess& p : slow.processes) {
    list.push_back({{"pid", p.pid},
                    {"compute", p.compute},
                    {"graphics", p.graphics},
                    {"used_memory_bytes", Opt(p.used_memory_bytes)},
                    {"sm_util_pct", Opt(p.sm_util_pct)},
                    {"mem_util_pct", Opt(p.mem_util_pct)}});
  }
  return list;
}

json GpuRecord(size_t index, const GpuFastSample& f, const GpuSlowSample* slow, int64_t tick_ns) {
  json g = {{"index", index},
            {"lost", f.lost},
            {"util_gpu_pct", Opt(f.util_gpu_pct)},
            {"util_mem_pct", Opt(f.util_mem_pct)},
            {"mem_used_bytes", Opt(f.mem_used_bytes)},
            {"mem_total_bytes", Opt(f.mem_total_bytes)},
            {"power_mw", Opt(f.power_mw)},
            {"power_limit_mw", Opt(f.power_limit_mw)},
            {"temp_c", Opt(f.temp_c)},
            {"sm_clock_mhz", Opt(f.sm_clock_mhz)},
            {"mem_clock_mhz", Opt(f.mem_clock_mhz)},
            {"clock_reasons", Opt(f.clock_reasons)},
            {"enc_util_pct", Opt(f.enc_util_pct)},
            {"dec_util_pct", Opt(f.dec_util_pct)},
            {"pcie_tx_kbps", nullptr},
            {"pcie_rx_kbps", nullptr},
            {"processes", nullptr},
            {"slow_age_s", nullptr}};
  if (slow != nullptr && slow->read_mono_ns > 0) {
    g["pcie_tx_kbps"] = Opt(slow->pcie_tx_kbps);
    g["pcie_rx_kbps"] = Opt(slow->pcie_rx_kbps);
    g["processes"] = ProcessesRecord(*slow);
    g["slow_age_s"] = Round3(std::max<int64_t>(0, tick_ns - slow->read_mono_ns) * 1e-9);
  }
  return g;
}

}  // namespace

double Round3(double value) { return std::round(value * 1000.0) / 1000.0; }

json HeaderRecord(const SamplesHeader& h) {
  json gpus = json::array();
  for (const GpuInfo& g : h.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"pci_bus_id", g.pci_bus_id},
                    {"memory_total_bytes", Opt(g.memory_total_bytes)},
                    {"lost", g.lost}});
  }
  return {{"kind", "header"},
          {"schema_version", kSamplesSchemaVersion},
          {"command", h.command},
          {"tags", h.tags},
          {"host",
           {{"hostname", h.host.hostname},
            {"kernel", h.host.kernel},
            {"cpus", h.host.cpus},
            {"mem_total_bytes", Opt(h.host.mem_total_bytes)}}},
          {"interval_s", Round3(h.interval_s)},
          {"started_at", FormatRfc3339Utc(h.started_at_ns)},
          {"nvml",
           {{"ok", h.nvml_ok},
            {"error", h.nvml_ok ? json(nullptr) : json(h.nvml_error)},
            {"driver_version", h.driver_version.empty() ? json(nullptr) : json(h.driver_version)}}},
          {"gpus", gpus}};
}

json TickRecord(const TickSample& tick, const JobTreeSample& job, int64_t start_mono_ns) {
  json gpus = json::array();
  for (size_t i = 0; i < tick.gpu_fast.size(); ++i) {
    const GpuSlowSample* slow = i < tick.gpu_slow.size() ? &tick.gpu_slow[i] : nullptr;
    gpus.push_back(GpuRecord(i, tick.gpu_fast[i], slow, tick.mono_ns));
  }
  return {{"kind", "tick"},
          {"t_s", Round3((tick.mono_ns - start_mono_ns) * 1e-9)},
          {"ts", FormatRfc3339Utc(tick.wall_ns)},
          {"host", HostRecord(tick.host)},
          {"gpus", gpus},
          {"job",
           {{"pids", job.pids}, {"cpu_pct", OptRounded(job.cpu_pct)}, {"rss_bytes", Opt(job.rss_bytes)}}}};
}

}  // namespace cgov
