// The daemon's per-tick cost outside the driver: a sampled tick (8 GPUs, 18 processes) turned
// into its stored form and committed in its own transaction, rollups and sessions included.
// Storage, report and soak figures come from bench/history_bench.sh (whole processes).
#include <unistd.h>

#include <filesystem>

#include <benchmark/benchmark.h>

#include "cli/daemon.h"
#include "cli/history_writer.h"

namespace cgov {
namespace {

TickSample EightGpusEighteenProcesses() {
  TickSample t;
  t.host.cpu_pct = 35.2;
  t.host.iowait_pct = 1.5;
  t.host.mem_total_bytes = 64ull << 30;
  t.host.mem_available_bytes = 40ull << 30;
  uint32_t pid = 40000;
  for (int g = 0; g < 8; ++g) {
    GpuFastSample f;
    f.util_gpu_pct = 95 - g * 10;
    f.util_mem_pct = 40;
    f.mem_used_bytes = 70ull << 30;
    f.mem_total_bytes = 80ull << 30;
    f.power_mw = 612'000;
    f.power_limit_mw = 700'000;
    f.temp_c = 71;
    f.sm_clock_mhz = 1980;
    f.mem_clock_mhz = 2619;
    f.clock_reasons = 0;
    f.enc_util_pct = 0;
    f.dec_util_pct = 0;
    t.gpu_fast.push_back(f);
    GpuSlowSample s;
    s.processes_known = true;
    s.pcie_tx_kbps = 900'000;
    s.pcie_rx_kbps = 2'100'000;
    for (int k = 0; k < (g < 2 ? 3 : 2); ++k) {
      GpuProcess p;
      p.pid = pid++;
      p.compute = true;
      p.used_memory_bytes = 30ull << 30;
      p.sm_util_pct = 40;
      s.processes.push_back(p);
    }
    t.gpu_slow.push_back(s);
  }
  return t;
}

void BM_DaemonTickStore(benchmark::State& state) {
  const std::string path = "/tmp/cgov-bench-" + std::to_string(getpid()) + ".db";
  {
    auto writer = cli::HistoryWriter::Open(path);
    if (!writer.ok()) {
      state.SkipWithError(writer.status().message().c_str());
      return;
    }
    std::vector<uint32_t> ids;
    for (int g = 0; g < 8; ++g) {
      ids.push_back(*(*writer)->store().GpuId({0, "GPU-" + std::to_string(g), g, "H100", 81559, ""}));
    }
    auto run = (*writer)->BeginRun("bench", 0, 1000, "bench");
    TickSample sample = EightGpusEighteenProcesses();
    int64_t ts = 1'794'787'200'000;
    for (auto _ : state) {
      auto stored = cli::BuildStoredTick(sample, ids, nullptr);
      auto appended = (*writer)->Append(ts, *run, *stored);
      if (!appended.ok()) state.SkipWithError(appended.status().message().c_str());
      ts += 1000;  // an hour's rollup every 3600 iterations, as in the daemon
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
BENCHMARK(BM_DaemonTickStore)->Unit(benchmark::kMicrosecond)->MinTime(3);

}  // namespace
}  // namespace cgov
