// The per-tick work of `cgov run` beyond the sampling tick: the job tree, the JSONL record, the
// accumulator. Run: make bench (figures in docs/benchmarks.md).
#include <fcntl.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "analysis/run_summary.h"
#include "os/file_reader.h"
#include "store/jsonl_writer.h"
#include "store/sample_record.h"
#include "telemetry/job_tree.h"

namespace cgov {
namespace {

// A tick as 8 busy GPUs with one process each produce it.
TickSample EightGpuTick() {
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
    s.processes = {GpuProcess{static_cast<uint32_t>(41000 + i), true, false, 75'161'927'680, 95, 60}};
    t.gpu_slow.push_back(s);
  }
  return t;
}

void BM_TickRecordJson(benchmark::State& state) {
  TickSample tick = EightGpuTick();
  JobTreeSample job{{41000, 41001}, 180.0, 5'000'000'000};
  std::string line;
  for (auto _ : state) {
    WriteTickRecord(tick, job, 1'000'000'000, &line);
    benchmark::DoNotOptimize(line);
  }
  state.counters["line_bytes"] = static_cast<double>(line.size());
}
BENCHMARK(BM_TickRecordJson)->MeasureProcessCPUTime()->UseRealTime();

void BM_JsonlAppendDevNull(benchmark::State& state) {
  auto writer = JsonlWriter::FromFd(open("/dev/null", O_WRONLY | O_CLOEXEC), "/dev/null");
  std::string line(2500, 'x');
  for (auto _ : state) benchmark::DoNotOptimize(writer->Append(line));
}
BENCHMARK(BM_JsonlAppendDevNull)->MeasureProcessCPUTime()->UseRealTime();

void BM_AccumulatorAddTick(benchmark::State& state) {
  std::vector<GpuInfo> gpus(8);
  for (unsigned i = 0; i < 8; ++i) gpus[i].index = i;
  RunAccumulator acc(gpus, 0, 1000);
  TickSample tick = EightGpuTick();
  JobTreeSample job{{41000, 41001}, 180.0, 5'000'000'000};
  for (auto _ : state) acc.AddTick(tick, job);
}
BENCHMARK(BM_AccumulatorAddTick)->MeasureProcessCPUTime()->UseRealTime();

// The real /proc of this machine and the tree below this process (empty), every process there
// before the reader was made: the steady state at 10 Hz is the members' hot reads, plus one
// /proc listing a second.
void BM_JobTreeTick(benchmark::State& state) {
  RootedFileReader files;
  JobTreeOptions options;
  options.discover_interval_ns = state.range(0);
  JobTreeReader tree(&files, static_cast<int>(getpid()), options, ListPids(files));
  int64_t t = 1;
  for (auto _ : state) {
    t += 100'000'000;  // 10 Hz of simulated time
    benchmark::DoNotOptimize(tree.Read(t, std::nullopt));
  }
}
BENCHMARK(BM_JobTreeTick)->Arg(1'000'000'000)->Arg(1)->MeasureProcessCPUTime()->UseRealTime();

// Classifying every process of the machine once: what the first tick would cost without the
// pre-spawn snapshot, and what each full rescan costs.
void BM_JobTreeClassifyAll(benchmark::State& state) {
  RootedFileReader files;
  JobTreeOptions options;
  options.full_rescan_every = 1;
  JobTreeReader tree(&files, static_cast<int>(getpid()), options, {});
  int64_t t = 1;
  for (auto _ : state) {
    t += 2'000'000'000;
    benchmark::DoNotOptimize(tree.Read(t, std::nullopt));
  }
}
BENCHMARK(BM_JobTreeClassifyAll)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace cgov
