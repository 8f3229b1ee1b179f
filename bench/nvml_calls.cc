// What each NVML call cgov makes costs on this driver: wall-clock and CPU time per call (the CPU of
// the calling thread, so the kernel's share of an ioctl counts), the median and the slowest of N
// calls, then the same for cgov's own paths (NvmlSource::Open, ReadFast, ReadSlow). The fake
// driver's figures say little; run it on a GPU host (docs/validation.md has what one said).
//
// Back to back, a driver may answer from what it read for the call before. So, with --paced MS:N,
// a second table: N rounds MS apart, each making every call once in the order a daemon tick does
// (fast fields, process lists, per-process utilization, events, GPM with a fresh sample each
// round), then NvmlSource::ReadSlow: what each call costs when it comes once a tick. The GPM
// metrics are asked in groups, one group a round in turn, to show which of them cost.
//
// Usage: cgov_nvml_calls [--lib PATH] [--gpu N] [--reps N] [--paced MS:N]   (default: the
// system's NVML, GPU 0, 200 repetitions, no paced rounds). Prints Markdown tables; exit 1 when
// NVML does not open or has no such GPU.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "os/clock.h"
#include "telemetry/nvml_source.h"

namespace cgov {
namespace {

int64_t Ns(clockid_t clock) { return ClockNs(clock); }

struct Timing {
  std::vector<double> wall_us;
  std::vector<double> cpu_us;
};

// VmRSS of this process in KiB (0 when unreadable).
long RssKib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  long kib = 0;
  while (std::fgets(line, sizeof(line), f)) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Times `call` `reps` times on this thread; *ret gets the last return code.
Timing Time(int reps, const std::function<nvml::nvmlReturn_t()>& call, nvml::nvmlReturn_t* ret) {
  Timing t;
  for (int i = 0; i < reps; ++i) {
    const int64_t w0 = Ns(CLOCK_MONOTONIC);
    const int64_t c0 = Ns(CLOCK_THREAD_CPUTIME_ID);
    *ret = call();
    const int64_t c1 = Ns(CLOCK_THREAD_CPUTIME_ID);
    const int64_t w1 = Ns(CLOCK_MONOTONIC);
    t.wall_us.push_back(static_cast<double>(w1 - w0) / 1000);
    t.cpu_us.push_back(static_cast<double>(c1 - c0) / 1000);
  }
  return t;
}

// The GPM metrics ReadGpm asks for, and groups of them for the paced rounds.
struct MetricGroup {
  const char* name;
  std::vector<unsigned int> ids;
};
const std::vector<MetricGroup>& MetricGroups() {
  static const std::vector<MetricGroup> groups = {
      {"all 9, as ReadGpm asks",
       {nvml::NVML_GPM_METRIC_GRAPHICS_UTIL, nvml::NVML_GPM_METRIC_SM_UTIL,
        nvml::NVML_GPM_METRIC_SM_OCCUPANCY, nvml::NVML_GPM_METRIC_ANY_TENSOR_UTIL,
        nvml::NVML_GPM_METRIC_DRAM_BW_UTIL, nvml::NVML_GPM_METRIC_PCIE_TX_PER_SEC,
        nvml::NVML_GPM_METRIC_PCIE_RX_PER_SEC, nvml::NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
        nvml::NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC}},
      {"activity: graphics, SM, occupancy, tensor, DRAM",
       {nvml::NVML_GPM_METRIC_GRAPHICS_UTIL, nvml::NVML_GPM_METRIC_SM_UTIL,
        nvml::NVML_GPM_METRIC_SM_OCCUPANCY, nvml::NVML_GPM_METRIC_ANY_TENSOR_UTIL,
        nvml::NVML_GPM_METRIC_DRAM_BW_UTIL}},
      {"PCIe TX, RX",
       {nvml::NVML_GPM_METRIC_PCIE_TX_PER_SEC, nvml::NVML_GPM_METRIC_PCIE_RX_PER_SEC}},
      {"NVLink TX, RX",
       {nvml::NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC,
        nvml::NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC}},
  };
  return groups;
}

nvml::nvmlReturn_t GetMetrics(const NvmlFunctions& f, nvml::nvmlGpmMetricsGet_t* request,
                              nvml::nvmlGpmSample_t older, nvml::nvmlGpmSample_t newer,
                              const std::vector<unsigned int>& ids) {
  std::memset(request, 0, sizeof(*request));
  request->version = nvml::NVML_GPM_METRICS_GET_VERSION;
  request->numMetrics = static_cast<unsigned int>(ids.size());
  request->sample1 = older;
  request->sample2 = newer;
  for (size_t i = 0; i < ids.size(); ++i) request->metrics[i].metricId = ids[i];
  return f.gpm_metrics_get(request);
}

// One timed call: its row name, whether the library has it, and the call.
struct NamedCall {
  std::string name;
  bool present;
  bool every_tick;  // made on every tick (energy, v1 memory and PCIe throughput are not)
  std::function<nvml::nvmlReturn_t()> call;
};

// Where the calls below write their answers; must outlive them.
struct CallScratch {
  unsigned int u = 0, u2 = 0;
  unsigned long long ull = 0;
  nvml::nvmlUtilization_t util{};
  nvml::nvmlMemory_v2_t mem2{};
  nvml::nvmlMemory_t mem1{};
};

// The single-value calls, in the order ReadFast makes them.
std::vector<NamedCall> ValueCalls(const NvmlFunctions& f, nvml::nvmlDevice_t d, CallScratch* s) {
  return {
      {"nvmlDeviceGetUtilizationRates", f.utilization != nullptr, true,
       [&f, d, s] { return f.utilization(d, &s->util); }},
      {"nvmlDeviceGetMemoryInfo_v2", f.memory_v2 != nullptr, true,
       [&f, d, s] {
         s->mem2.version = nvml::nvmlMemory_v2;
         return f.memory_v2(d, &s->mem2);
       }},
      {"nvmlDeviceGetMemoryInfo", f.memory_v1 != nullptr, false,
       [&f, d, s] { return f.memory_v1(d, &s->mem1); }},
      {"nvmlDeviceGetPowerUsage", f.power_usage != nullptr, true,
       [&f, d, s] { return f.power_usage(d, &s->u); }},
      {"nvmlDeviceGetEnforcedPowerLimit", f.power_limit != nullptr, true,
       [&f, d, s] { return f.power_limit(d, &s->u); }},
      {"nvmlDeviceGetTemperature (GPU)", f.temperature != nullptr, true,
       [&f, d, s] { return f.temperature(d, 0, &s->u); }},
      {"nvmlDeviceGetClockInfo (SM)", f.clock_info != nullptr, true,
       [&f, d, s] { return f.clock_info(d, 1, &s->u); }},
      {"nvmlDeviceGetClockInfo (memory)", f.clock_info != nullptr, true,
       [&f, d, s] { return f.clock_info(d, 2, &s->u); }},
      {"nvmlDeviceGetCurrentClocksEventReasons", f.clock_reasons != nullptr, true,
       [&f, d, s] { return f.clock_reasons(d, &s->ull); }},
      {"nvmlDeviceGetEncoderUtilization", f.encoder_util != nullptr, true,
       [&f, d, s] { return f.encoder_util(d, &s->u, &s->u2); }},
      {"nvmlDeviceGetDecoderUtilization", f.decoder_util != nullptr, true,
       [&f, d, s] { return f.decoder_util(d, &s->u, &s->u2); }},
      {"nvmlDeviceGetTotalEnergyConsumption", f.total_energy != nullptr, false,
       [&f, d, s] { return f.total_energy(d, &s->ull); }},
      {"nvmlDeviceGetPcieThroughput (TX)", f.pcie_throughput != nullptr, false,
       [&f, d, s] { return f.pcie_throughput(d, 0, &s->u); }},
  };
}

// N rounds `period_ms` apart, each making every call once (see the file's comment); Print gives
// each call's median and largest CPU a round and its last result.
class PacedRounds {
 public:
  PacedRounds(NvmlSource& source, nvml::nvmlDevice_t d)
      : source_(source), f_(source.library().fn()), d_(d) {
    events_ =
        f_.event_set_create && f_.register_events && f_.event_wait && f_.event_set_free &&
        f_.event_set_create(&set_) == nvml::NVML_SUCCESS &&
        f_.register_events(d, nvml::nvmlEventTypeXidCriticalError, set_) == nvml::NVML_SUCCESS;
    gpm_ = f_.gpm_sample_alloc && f_.gpm_sample_get && f_.gpm_metrics_get && f_.gpm_sample_free;
    if (gpm_) {
      f_.gpm_sample_alloc(&gpm_samples_[0]);
      f_.gpm_sample_alloc(&gpm_samples_[1]);
      f_.gpm_sample_get(d, gpm_samples_[0]);
    }
    source_.ReadSlow(&slow_);  // primes its GPM
  }
  ~PacedRounds() {
    if (set_ != nullptr) f_.event_set_free(set_);
    for (nvml::nvmlGpmSample_t s : gpm_samples_) {
      if (s != nullptr) f_.gpm_sample_free(s);
    }
  }

  void Run(int period_ms, int rounds) {
    auto next = std::chrono::steady_clock::now();
    for (int round = 0; round < rounds; ++round) {
      next += std::chrono::milliseconds(period_ms);
      std::this_thread::sleep_until(next);
      FastCalls();
      SlowCalls();
      GpmCalls(round);
      Time1("NvmlSource::ReadSlow (every GPU)", true, [&] {
        source_.ReadSlow(&slow_);
        return nvml::NVML_SUCCESS;
      });
    }
    std::printf("\n%d rounds %d ms apart, each call once a round:\n\n", rounds, period_ms);
    Print();
  }

 private:
  void Time1(const std::string& what, bool present,
             const std::function<nvml::nvmlReturn_t()>& call) {
    if (!present) return;
    nvml::nvmlReturn_t ret = nvml::NVML_SUCCESS;
    Timing t = Time(1, call, &ret);
    if (!timings_.count(what)) order_.push_back(what);
    Timing& all = timings_[what];
    all.wall_us.push_back(t.wall_us[0]);
    all.cpu_us.push_back(t.cpu_us[0]);
    results_[what] = ret;
  }

  void FastCalls() {
    for (const NamedCall& c : ValueCalls(f_, d_, &scratch_)) {
      if (c.every_tick) Time1(c.name, c.present, c.call);
    }
  }

  void SlowCalls() {
    const nvml::nvmlDeviceGetProcesses_fn lists[] = {f_.compute_procs, f_.graphics_procs,
                                                     f_.mps_procs};
    const char* names[] = {"compute", "graphics", "MPS"};
    for (int k = 0; k < 3; ++k) {
      Time1(std::string("nvmlDevice*RunningProcesses (") + names[k] + ")", lists[k] != nullptr,
            [&] {
              unsigned int count = 64;
              return lists[k](d_, &count, procs_.data());
            });
    }
    Time1("nvmlDeviceGetProcessUtilization", f_.process_utilization != nullptr, [&] {
      // As cgov calls it: the buffer grown to what the driver asks (the second try is in the
      // time, as it is in cgov's the first time).
      unsigned int count = 0;
      nvml::nvmlReturn_t ret = nvml::NVML_ERROR_INSUFFICIENT_SIZE;
      for (int attempt = 0; attempt < 3 && ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
        count = static_cast<unsigned int>(samples_.size());
        ret = f_.process_utilization(d_, samples_.data(), &count, last_seen_);
        if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) samples_.resize(count + 8);
      }
      if (ret == nvml::NVML_SUCCESS) {
        for (unsigned k = 0; k < count; ++k) {
          last_seen_ = std::max(last_seen_, samples_[k].timeStamp);
        }
      }
      return ret;
    });
    Time1("nvmlEventSetWait_v2 (timeout 0)", events_, [&] {
      nvml::nvmlEventData_t data{};
      return f_.event_wait(set_, &data, 0);
    });
  }

  // A fresh sample each round, and one group of metrics over it and the round before's.
  void GpmCalls(int round) {
    if (!gpm_) return;
    nvml::nvmlGpmSample_t older = gpm_samples_[round % 2], newer = gpm_samples_[(round + 1) % 2];
    Time1("nvmlGpmSampleGet", true, [&] { return f_.gpm_sample_get(d_, newer); });
    const MetricGroup& group = MetricGroups()[round % MetricGroups().size()];
    Time1(std::string("nvmlGpmMetricsGet (") + group.name + ")", true,
          [&] { return GetMetrics(f_, request_.get(), older, newer, group.ids); });
    Time1("nvmlGpmMetricsGet again, the same two samples", true,
          [&] { return GetMetrics(f_, request_.get(), older, newer, group.ids); });
  }

  void Print() {
    std::printf(
        "| call | result (last round) | rounds | median CPU µs | max CPU µs | median wall µs |\n");
    std::printf("| --- | --- | ---: | ---: | ---: | ---: |\n");
    for (const std::string& what : order_) {
      const Timing& t = timings_[what];
      const nvml::nvmlReturn_t ret = results_[what];
      const std::string result =
          ret == nvml::NVML_SUCCESS ? std::string("ok") : source_.library().Describe(ret);
      std::printf("| %s | %s | %zu | %.1f | %.1f | %.1f |\n", what.c_str(), result.c_str(),
                  t.cpu_us.size(), Median(t.cpu_us),
                  *std::max_element(t.cpu_us.begin(), t.cpu_us.end()), Median(t.wall_us));
    }
  }

  NvmlSource& source_;
  const NvmlFunctions& f_;
  nvml::nvmlDevice_t d_;
  std::map<std::string, Timing> timings_;
  std::map<std::string, nvml::nvmlReturn_t> results_;  // the last round's
  std::vector<std::string> order_;
  bool events_ = false;
  bool gpm_ = false;
  nvml::nvmlEventSet_t set_ = nullptr;
  nvml::nvmlGpmSample_t gpm_samples_[2] = {nullptr, nullptr};
  std::unique_ptr<nvml::nvmlGpmMetricsGet_t> request_ =
      std::make_unique<nvml::nvmlGpmMetricsGet_t>();
  std::vector<unsigned char> procs_ = std::vector<unsigned char>(64 * nvml::kMaxProcessEntryBytes);
  std::vector<nvml::nvmlProcessUtilizationSample_t> samples_;
  unsigned long long last_seen_ = 0;
  std::vector<GpuSlowSample> slow_;
  CallScratch scratch_;
};

void Row(const std::string& what, const std::string& result, const Timing& t) {
  std::printf("| %s | %s | %.1f | %.1f | %.1f |\n", what.c_str(), result.c_str(), Median(t.wall_us),
              Median(t.cpu_us), *std::max_element(t.wall_us.begin(), t.wall_us.end()));
}

// "MS:N", both positive and nothing after them.
bool ParsePaced(const char* text, int* period_ms, int* rounds) {
  int used = 0;
  return std::sscanf(text, "%d:%d%n", period_ms, rounds, &used) == 2 && text[used] == '\0' &&
         *period_ms > 0 && *rounds > 0;
}

int Main(int argc, char** argv) {
  std::string lib;
  unsigned gpu = 0;
  int reps = 200;
  int paced_ms = 0, paced_rounds = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--lib" && i + 1 < argc) {
      lib = argv[++i];
    } else if (arg == "--gpu" && i + 1 < argc) {
      gpu = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--paced" && i + 1 < argc &&
               ParsePaced(argv[++i], &paced_ms, &paced_rounds)) {
    } else {
      std::fprintf(stderr,
                   "usage: cgov_nvml_calls [--lib PATH] [--gpu N] [--reps N] [--paced MS:N]\n");
      return 2;
    }
  }
  if (lib.empty()) {
    if (const char* env = std::getenv("CGOV_NVML_LIB")) lib = env;
  }

  // Open once, cold: the whole-process CPU (NVML may start threads of its own).
  const long rss_before = RssKib();
  const int64_t w0 = Ns(CLOCK_MONOTONIC);
  const int64_t c0 = Ns(CLOCK_PROCESS_CPUTIME_ID);
  auto opened = NvmlSource::Open(lib);
  const int64_t c1 = Ns(CLOCK_PROCESS_CPUTIME_ID);
  const int64_t w1 = Ns(CLOCK_MONOTONIC);
  if (!opened.ok()) {
    std::fprintf(stderr, "cgov_nvml_calls: %s\n", opened.status().message().c_str());
    return 1;
  }
  NvmlSource& source = **opened;
  if (gpu >= source.gpus().size()) {
    std::fprintf(stderr, "cgov_nvml_calls: no GPU %u (this host has %zu)\n", gpu,
                 source.gpus().size());
    return 1;
  }
  const NvmlFunctions& f = source.library().fn();
  std::printf("NVML %s, driver %s, %s: GPU %u of %zu (%s); %d calls each\n",
              source.library().path().c_str(), source.driver_version().c_str(),
              source.nvml_version().c_str(), gpu, source.gpus().size(),
              source.gpus()[gpu].name.c_str(), reps);
  std::printf("resident memory: %ld KiB before NvmlSource::Open, %ld KiB after\n\n", rss_before,
              RssKib());
  std::printf("| call | result | median wall µs | median CPU µs | max wall µs |\n");
  std::printf("| --- | --- | ---: | ---: | ---: |\n");
  Timing open;
  open.wall_us.push_back(static_cast<double>(w1 - w0) / 1000);
  open.cpu_us.push_back(static_cast<double>(c1 - c0) / 1000);
  Row("NvmlSource::Open (load, nvmlInit, enumerate, probe; once, process CPU)", "ok", open);

  nvml::nvmlDevice_t d = nullptr;
  if (f.handle_by_index(gpu, &d) != nvml::NVML_SUCCESS) {
    std::fprintf(stderr, "cgov_nvml_calls: no handle for GPU %u\n", gpu);
    return 1;
  }
  auto describe = [&](nvml::nvmlReturn_t r) {
    return r == nvml::NVML_SUCCESS ? std::string("ok") : source.library().Describe(r);
  };
  auto time_call = [&](const std::string& what, bool present,
                       const std::function<nvml::nvmlReturn_t()>& call) {
    if (!present) {
      std::printf("| %s | absent from this library | | | |\n", what.c_str());
      return;
    }
    nvml::nvmlReturn_t ret = nvml::NVML_SUCCESS;
    Timing t = Time(reps, call, &ret);
    Row(what, describe(ret), t);
  };

  CallScratch scratch;
  for (const NamedCall& c : ValueCalls(f, d, &scratch)) time_call(c.name, c.present, c.call);
  std::vector<unsigned char> procs(64 * nvml::kMaxProcessEntryBytes);
  const struct {
    const char* name;
    nvml::nvmlDeviceGetProcesses_fn fn;
  } lists[] = {{"compute processes", f.compute_procs},
               {"graphics processes", f.graphics_procs},
               {"MPS processes", f.mps_procs}};
  for (const auto& list : lists) {
    time_call(std::string("nvmlDevice*RunningProcesses (") + list.name + ")", list.fn != nullptr,
              [&] {
                unsigned int count = 64;
                return list.fn(d, &count, procs.data());
              });
  }
  // As cgov calls it: sized by a first call, then with the last timestamp seen.
  std::vector<nvml::nvmlProcessUtilizationSample_t> samples;
  unsigned long long last_seen = 0;
  time_call("nvmlDeviceGetProcessUtilization", f.process_utilization != nullptr, [&] {
    nvml::nvmlReturn_t ret = nvml::NVML_ERROR_INSUFFICIENT_SIZE;
    for (int attempt = 0; attempt < 3 && ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
      unsigned int count = static_cast<unsigned int>(samples.size());
      ret = f.process_utilization(d, samples.empty() ? nullptr : samples.data(), &count, last_seen);
      if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) samples.resize(count + 8);
      if (ret == nvml::NVML_SUCCESS) {
        for (unsigned k = 0; k < count; ++k) last_seen = std::max(last_seen, samples[k].timeStamp);
      }
    }
    return ret;
  });
  std::printf("| (process-utilization buffer: %zu entries) | | | | |\n", samples.size());
  const bool events = f.event_set_create && f.register_events && f.event_wait && f.event_set_free;
  if (events) {
    nvml::nvmlEventSet_t set = nullptr;
    f.event_set_create(&set);
    const nvml::nvmlReturn_t reg = f.register_events(d, nvml::nvmlEventTypeXidCriticalError, set);
    time_call("nvmlEventSetWait_v2 (timeout 0)", reg == nvml::NVML_SUCCESS, [&] {
      nvml::nvmlEventData_t data{};
      return f.event_wait(set, &data, 0);
    });
    f.event_set_free(set);
  }
  time_call("nvmlDeviceGetRemappedRows", f.remapped_rows != nullptr, [&] {
    unsigned int a = 0, b = 0, c = 0, e = 0;
    return f.remapped_rows(d, &a, &b, &c, &e);
  });
  const bool gpm = f.gpm_sample_alloc && f.gpm_sample_get && f.gpm_metrics_get && f.gpm_sample_free;
  if (gpm) {
    nvml::nvmlGpmSample_t s1 = nullptr, s2 = nullptr;
    f.gpm_sample_alloc(&s1);
    f.gpm_sample_alloc(&s2);
    time_call("nvmlGpmSampleGet", true, [&] { return f.gpm_sample_get(d, s1); });
    f.gpm_sample_get(d, s2);
    auto request = std::make_unique<nvml::nvmlGpmMetricsGet_t>();
    const MetricGroup& all = MetricGroups()[0];
    time_call(std::string("nvmlGpmMetricsGet (") + all.name + "; the same two samples each time)",
              true, [&] { return GetMetrics(f, request.get(), s1, s2, all.ids); });
    f.gpm_sample_free(s1);
    f.gpm_sample_free(s2);
  } else {
    std::printf("| GPM (nvmlGpmSampleGet, nvmlGpmMetricsGet) | absent from this library | | | |\n");
  }

  // cgov's own paths over every GPU of the host.
  std::vector<GpuFastSample> fast;
  std::vector<GpuSlowSample> slow;
  nvml::nvmlReturn_t ok = nvml::NVML_SUCCESS;
  Row("NvmlSource::ReadFast (every GPU)", "ok",
      Time(
          reps,
          [&] {
            source.ReadFast(&fast);
            return ok;
          },
          &ok));
  source.StartEventWatch();  // as cgov run and the daemon do
  source.ReadSlow(&slow);    // primes GPM
  Row("NvmlSource::ReadSlow (every GPU)", "ok",
      Time(
          std::max(1, reps / 10),
          [&] {
            source.ReadSlow(&slow);
            return ok;
          },
          &ok));
  if (paced_rounds > 0) PacedRounds(source, d).Run(paced_ms, paced_rounds);
  Timing shutdown;  // nvmlShutdown and the samples' release: what every cgov process pays at exit
  const int64_t s0 = Ns(CLOCK_MONOTONIC);
  const int64_t p0 = Ns(CLOCK_PROCESS_CPUTIME_ID);
  opened->reset();
  shutdown.wall_us.push_back(static_cast<double>(Ns(CLOCK_MONOTONIC) - s0) / 1000);
  shutdown.cpu_us.push_back(static_cast<double>(Ns(CLOCK_PROCESS_CPUTIME_ID) - p0) / 1000);
  Row("~NvmlSource (nvmlShutdown; once, process CPU)", "ok", shutdown);
  return 0;
}

}  // namespace
}  // namespace cgov

int main(int argc, char** argv) { return cgov::Main(argc, argv); }
