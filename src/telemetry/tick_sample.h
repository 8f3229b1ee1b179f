// What one sampling tick read: the host's figures and each GPU's fast and slow fields. A plain
// record, so that the analysis and the renderers that read ticks need not include the sampler
// (its threads, the driver's source, the host reader).
#ifndef CGOV_TELEMETRY_TICK_SAMPLE_H_
#define CGOV_TELEMETRY_TICK_SAMPLE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "telemetry/gpu_sample.h"
#include "telemetry/procfs_host.h"

namespace cgov {

struct HostSample {
  std::optional<double> cpu_pct;                // all cores, 0..100
  std::optional<double> iowait_pct;             // all cores waiting for I/O, 0..100
  std::vector<std::optional<double>> core_pct;  // per core, 0..100
  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint64_t> mem_available_bytes;
  std::optional<double> disk_read_bytes_per_s;
  std::optional<double> disk_write_bytes_per_s;
  std::optional<double> net_rx_bytes_per_s;
  std::optional<double> net_tx_bytes_per_s;
  std::optional<LoadAvg> load;
};

struct TickSample {
  int64_t mono_ns = 0;
  int64_t wall_ns = 0;
  HostSample host;
  std::vector<GpuFastSample> gpu_fast;  // one per GPU of the source; empty without NVML
  std::vector<GpuSlowSample> gpu_slow;  // the latest off-tick read; read_mono_ns 0 until the first
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_TICK_SAMPLE_H_
