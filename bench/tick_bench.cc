// One sampling tick: 8 fake GPUs' fast fields + host /proc reads, and its parts alone.
// Run: make bench   (figures and the command in docs/benchmarks.md)
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include <benchmark/benchmark.h>

#include "os/clock.h"
#include "os/file_reader.h"
#include "os/process_exit_watch.h"
#include "telemetry/host_reader.h"
#include "telemetry/nvml_source.h"
#include "telemetry/process_reader.h"
#include "telemetry/sampler.h"

namespace cgov {
namespace {

const std::string kFakeLib = std::string(CGOV_FAKE_NVML_DIR) + "/full/libnvidia-ml.so.1";

// Opens the fake with the 8-GPU scenario and freezes its clock, so every tick sees the same state.
std::unique_ptr<NvmlSource> OpenFake() {
  setenv("CGOV_FAKE_NVML_SCENARIO", CGOV_SCENARIOS_DIR "/h100x8.json", 1);
  auto source = NvmlSource::Open(kFakeLib);
  if (!source.ok()) return nullptr;
  if (void* handle = dlopen(kFakeLib.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    auto set_time = reinterpret_cast<void (*)(double)>(dlsym(handle, "fakeNvmlSetTime"));
    if (set_time) set_time(3.0);
    dlclose(handle);
  }
  return std::move(source).value();
}

void BM_FullTick(benchmark::State& state) {
  std::unique_ptr<NvmlSource> nvml = OpenFake();
  if (!nvml) return state.SkipWithError("fake NVML did not open");
  RootedFileReader files;
  SystemClock clock;
  HostReader host(&files, &clock);
  SlowPoller poller(nvml.get());  // not started: its reads are measured by BM_NvmlSlowRead
  Sampler sampler(nvml.get(), &poller, &host, &clock);
  TickSample tick;
  for (auto _ : state) {
    sampler.Tick(&tick);
    benchmark::DoNotOptimize(tick);
  }
  state.counters["gpus"] = static_cast<double>(tick.gpu_fast.size());
}
BENCHMARK(BM_FullTick)->MeasureProcessCPUTime()->UseRealTime();

void BM_NvmlFastOnly(benchmark::State& state) {
  std::unique_ptr<NvmlSource> nvml = OpenFake();
  if (!nvml) return state.SkipWithError("fake NVML did not open");
  std::vector<GpuFastSample> out;
  for (auto _ : state) {
    nvml->ReadFast(&out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_NvmlFastOnly)->MeasureProcessCPUTime()->UseRealTime();

void BM_HostReadsOnly(benchmark::State& state) {
  RootedFileReader files;
  SystemClock clock;
  HostReader host(&files, &clock);
  HostSample sample;
  for (auto _ : state) {
    host.Read(&sample);
    benchmark::DoNotOptimize(sample);
  }
}
BENCHMARK(BM_HostReadsOnly)->MeasureProcessCPUTime()->UseRealTime();

// Host reads with a fresh open() per file: what keeping the files open saves.
void BM_HostReadsReopening(benchmark::State& state) {
  class Reopening : public RootedFileReader {
   public:
    Status ReadHot(std::string_view path, std::string* out) override { return Read(path, out); }
  } files;
  SystemClock clock;
  HostReader host(&files, &clock);
  HostSample sample;
  for (auto _ : state) {
    host.Read(&sample);
    benchmark::DoNotOptimize(sample);
  }
}
BENCHMARK(BM_HostReadsReopening)->MeasureProcessCPUTime()->UseRealTime();

void BM_NvmlSlowRead(benchmark::State& state) {
  std::unique_ptr<NvmlSource> nvml = OpenFake();
  if (!nvml) return state.SkipWithError("fake NVML did not open");
  std::vector<GpuSlowSample> out;
  for (auto _ : state) {
    nvml->ReadSlow(&out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_NvmlSlowRead)->MeasureProcessCPUTime()->UseRealTime();

void BM_ProcessIdentity(benchmark::State& state) {
  RootedFileReader files;
  ProcessReader reader(&files);
  const int self = static_cast<int>(getpid());
  for (auto _ : state) {
    auto id = reader.Read(self);
    benchmark::DoNotOptimize(id);
  }
}
BENCHMARK(BM_ProcessIdentity)->MeasureProcessCPUTime()->UseRealTime();

// What telling exits costs a tick when none happened (the usual tick): `range(0)` processes
// watched (sleeping children), TakeExited once an iteration. Issue 64: a poll(2) of every pidfd
// every tick grew with the processes; one epoll set answers with the exited ones only.
void BM_ExitWatchQuiet(benchmark::State& state) {
  std::vector<pid_t> children;
  auto watch = NewPidfdExitWatch();
  for (int64_t i = 0; i < state.range(0); ++i) {
    const pid_t child = fork();
    if (child == 0) {
      pause();
      _exit(0);
    }
    if (child > 0) children.push_back(child);
    if (child < 0 || !watch->Watch(static_cast<uint32_t>(child))) {
      state.SkipWithError("no child or no pidfd_open here");
      break;
    }
  }
  for (auto _ : state) {
    std::vector<uint32_t> exited = watch->TakeExited();
    benchmark::DoNotOptimize(exited);
  }
  for (pid_t child : children) kill(child, SIGKILL);
  for (pid_t child : children) waitpid(child, nullptr, 0);
  state.counters["watched"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_ExitWatchQuiet)->Arg(14)->Arg(56)->Arg(200)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace cgov

BENCHMARK_MAIN();
