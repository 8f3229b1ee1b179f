// The daemon's per-tick cost outside the driver: a sampled tick (8 GPUs, 18 processes) turned
// into its stored form and committed in its own transaction, rollups and sessions included.
// Storage, report and soak figures come from bench/history_bench.sh (whole processes).
#include <unistd.h>

#include <filesystem>

#include <benchmark/benchmark.h>

#include "app/history/history_writer.h"
#include "app/history/stored_tick.h"
#include "bench_ticks.h"

namespace cgov {
namespace {

void BM_DaemonTickStore(benchmark::State& state) {
  const std::string path = "/tmp/cgov-bench-" + std::to_string(getpid()) + ".db";
  {
    auto writer = HistoryWriter::Open(path);
    if (!writer.ok()) {
      state.SkipWithError(writer.status().message().c_str());
      return;
    }
    std::vector<uint32_t> ids;
    for (int g = 0; g < 8; ++g) {
      ids.push_back(
          *(*writer)->store().GpuId({0, "GPU-" + std::to_string(g), g, "H100", 81559, "", "", {}}));
    }
    auto run = (*writer)->BeginRun("bench", 0, 1000, "bench");
    TickSample sample = EightGpuTick(10);
    int64_t ts = 1'794'787'200'000;
    StoredTick stored;
    for (auto _ : state) {
      Status built = BuildStoredTick(sample, ids, nullptr, &stored);
      if (!built.ok()) state.SkipWithError(built.message().c_str());
      auto appended = (*writer)->Append(ts, *run, stored);
      if (!appended.ok()) state.SkipWithError(appended.status().message().c_str());
      ts += 1000;  // an hour's rollup every 3600 iterations, as in the daemon
    }
  }
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}
BENCHMARK(BM_DaemonTickStore)->Unit(benchmark::kMicrosecond)->MinTime(3);

}  // namespace
}  // namespace cgov
