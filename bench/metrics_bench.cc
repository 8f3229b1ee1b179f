// /metrics rendering for 8 GPUs with 18 processes and 6 identities: a scrape right after a tick
// (the exposition is rebuilt) and a scrape between ticks (a copy of the cached one).
#include <benchmark/benchmark.h>

#include "export/daemon_metrics.h"

namespace cgov {
namespace {

MetricsOptions Options() {
  MetricsOptions o;
  o.hostname = "gpu-node-017";
  o.interval_ms = 1000;
  return o;
}

void Setup(DaemonMetrics& m, std::vector<IdentityRecord>* identities) {
  std::vector<MetricsGpu> gpus;
  for (int i = 0; i < 8; ++i) {
    MetricsGpu g;
    g.gpu_id = static_cast<uint32_t>(i + 1);
    g.index = i;
    g.uuid = "GPU-5f3c2a10-0000-4000-8000-00000000000" + std::to_string(i);
    g.name = "NVIDIA H100 80GB HBM3";
    g.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    g.price_per_gpu_hour = 4'000'000;
    g.price_source = "catalog: p5.48xlarge";
    gpus.push_back(g);
  }
  m.SetGpus(gpus);
  identities->resize(6);
  for (int i = 0; i < 6; ++i) {
    (*identities)[i].user = "user" + std::to_string(i);
    (*identities)[i].project = "project" + std::to_string(i % 3);
  }
}

MetricsTick Tick(int64_t wall_ms) {
  MetricsTick t;
  t.wall_ms = wall_ms;
  t.nvml_ok = t.processes_ok = t.host_ok = true;
  for (int i = 0; i < 8; ++i) {
    GpuFastSample s;
    s.util_gpu_pct = 50 + i;
    s.util_mem_pct = 20;
    s.mem_used_bytes = 40ull << 30;
    s.mem_total_bytes = 80ull << 30;
    s.power_mw = 400'000;
    s.temp_c = 60;
    s.sm_clock_mhz = 1980;
    s.mem_clock_mhz = 2619;
    s.energy_mj = 123'456'789;
    t.gpus.push_back(s);
  }
  for (uint32_t p = 0; p < 18; ++p) {
    MetricsProcess mp;
    mp.gpu_pos = p % 8;
    mp.pid = 10'000 + p;
    mp.compute = true;
    mp.used_memory_bytes = 1ull << 30;
    mp.user = "user" + std::to_string(p % 6);
    mp.command = "python";
    t.processes.push_back(mp);
  }
  return t;
}

TickCredit Credit(int64_t ts_ms) {
  TickCredit c;
  c.ts_ms = ts_ms;
  for (uint32_t g = 1; g <= 8; ++g) {
    c.gpus.push_back({g, 1000, Phase::kUnderutilized, 55'000, {}, {}});
    c.identities.push_back({g % 6, g, 1000, 0, 1000, Phase::kUnderutilized});
  }
  return c;
}

void BM_MetricsScrapeAfterTick(benchmark::State& state) {
  std::vector<IdentityRecord> ids;
  DaemonMetrics m(Options());
  Setup(m, &ids);
  int64_t t = 1'000'000;
  size_t bytes = 0;
  for (auto _ : state) {
    t += 1000;
    m.Credit(Credit(t - 1000), [&](uint32_t id) { return &ids[id]; });
    m.RecordTick(Tick(t));
    std::string body = m.Render(ExpositionFormat::kText, t + 10);
    bytes = body.size();
    benchmark::DoNotOptimize(body);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_MetricsScrapeAfterTick);

// What --listen adds to the daemon's tick: crediting the previous tick and recording this one.
void BM_MetricsTickUpdate(benchmark::State& state) {
  std::vector<IdentityRecord> ids;
  DaemonMetrics m(Options());
  Setup(m, &ids);
  int64_t t = 1'000'000;
  for (auto _ : state) {
    t += 1000;
    m.Credit(Credit(t - 1000), [&](uint32_t id) { return &ids[id]; });
    m.RecordTick(Tick(t));
  }
}
BENCHMARK(BM_MetricsTickUpdate);

void BM_MetricsScrapeBetweenTicks(benchmark::State& state) {
  std::vector<IdentityRecord> ids;
  DaemonMetrics m(Options());
  Setup(m, &ids);
  m.Credit(Credit(1'000'000), [&](uint32_t id) { return &ids[id]; });
  m.RecordTick(Tick(1'001'000));
  for (auto _ : state) {
    std::string body = m.Render(ExpositionFormat::kText, 1'001'100);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_MetricsScrapeBetweenTicks);

// Scrapes a millisecond apart after a tick whose time is still running (SetPending): each
// counts the newest tick up to the scrape, in tenths of the interval, so one scrape in a hundred
// re-renders here and the rest copy.
void BM_MetricsScrapeWhileTheTickRuns(benchmark::State& state) {
  std::vector<IdentityRecord> ids;
  DaemonMetrics m(Options());
  Setup(m, &ids);
  m.Credit(Credit(1'000'000), [&](uint32_t id) { return &ids[id]; });
  m.RecordTick(Tick(1'001'000));
  StoredTick tick;
  for (uint32_t g = 1; g <= 8; ++g) {
    StoredGpu sg;
    sg.gpu_id = g;
    sg.processes_known = true;
    sg.set(StoredGpuField::kUtilPct, 55);
    tick.gpus.push_back(sg);
    StoredProcess p;
    p.gpu_pos = g - 1;
    p.pid = 100 + g;
    p.identity_id = g % 6;
    p.compute = true;
    p.mem_used_mib = 1024;
    tick.processes.push_back(p);
  }
  m.SetPending(tick, 1'001'000, [&](uint32_t id) { return &ids[id]; });
  int64_t now = 1'001'000;
  for (auto _ : state) {
    if (++now >= 1'002'000) now = 1'001'000;
    std::string body = m.Render(ExpositionFormat::kText, now);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_MetricsScrapeWhileTheTickRuns);

}  // namespace
}  // namespace cgov
