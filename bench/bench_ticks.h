// Ticks shaped like the issues' reference machine, shared by the benchmarks.
#ifndef CGOV_BENCH_BENCH_TICKS_H_
#define CGOV_BENCH_BENCH_TICKS_H_

#include "telemetry/sampler.h"

namespace cgov {

// A tick as 8 busy GPUs with one process each produce it, plus `extra_processes` more spread
// over the GPUs (the daemon benchmark's 18-process shape is EightGpuTick(10)).
inline TickSample EightGpuTick(int extra_processes = 0) {
  TickSample t;
  t.mono_ns = 5'000'000'000;
  t.wall_ns = 1'795'000'767'000'000'000;
  t.host.cpu_pct = 37.5;
  t.host.core_pct = {30.0, 45.0};
  t.host.mem_total_bytes = 25'000'000'000;
  t.host.mem_available_bytes = 20'000'000'000;
  t.host.disk_read_bytes_per_s = 1234.5;
  t.host.disk_write_bytes_per_s = 99.0;
  t.host.net_rx_bytes_per_s = 5.0;
  t.host.net_tx_bytes_per_s = 6.0;
  t.host.load = LoadAvg{1.0, 0.5, 0.25, 1909};
  for (int i = 0; i < 8; ++i) {
    GpuFastSample f;
    f.util_gpu_pct = 95;
    f.util_mem_pct = 60;
    f.mem_used_bytes = 75'161'927'680;
    f.mem_total_bytes = 85'520'809'984;
    f.power_mw = 610'000;
    f.power_limit_mw = 700'000;
    f.temp_c = 71;
    f.sm_clock_mhz = 1980;
    f.mem_clock_mhz = 2619;
    f.clock_reasons = 0;
    f.enc_util_pct = 0;
    f.dec_util_pct = 0;
    t.gpu_fast.push_back(f);
    GpuSlowSample s;
    s.read_mono_ns = 4'900'000'000;
    s.pcie_tx_kbps = 900'000;
    s.pcie_rx_kbps = 2'100'000;
    s.processes_known = true;
    s.processes = {
        GpuProcess{static_cast<uint32_t>(41000 + i), true, false, 75'161'927'680, 95, 60}};
    for (int k = i; k < extra_processes; k += 8) {
      s.processes.push_back(
          GpuProcess{static_cast<uint32_t>(42000 + k), true, false, 2ull << 30, 5, 1});
    }
    t.gpu_slow.push_back(s);
  }
  return t;
}

}  // namespace cgov

#endif  // CGOV_BENCH_BENCH_TICKS_H_
