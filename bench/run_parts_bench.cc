// The per-tick work of `cgov run` beyond the sampling tick: the job tree, the JSONL record, the
// accumulator. Run: make bench (figures in docs/benchmarks.md).
#include <fcntl.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "analysis/run_summary.h"
#include "bench_ticks.h"
#include "os/file_reader.h"
#include "store/jsonl_writer.h"
#include "store/sample_record.h"
#include "telemetry/job_tree.h"

namespace cgov {
namespace {

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
