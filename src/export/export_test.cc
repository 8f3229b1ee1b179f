#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/base64.h"
#include "core/time_format.h"

#include "export/daemon_metrics.h"
#include "export/exposition.h"
#include "export/http_server.h"
#include "export/module_series.h"
#include "generated_box.h"
#include "loopback_client.h"

namespace cgov {
namespace {

using test_support::ClosedWithin;
using test_support::ConnectFrom;

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// One label that is not UTF-8 would make Prometheus reject the whole scrape (issue 21, item 8).
TEST(Exposition, LabelsThatAreNotUtf8OrHoldControlsAreEscaped) {
  std::string text;
  ExpositionWriter w(ExpositionFormat::kText, &text);
  w.Family("g", MetricType::kGauge, "gauge");
  w.Sample({{"h", "box\xff\x1b[31m\nx"}}, 1);
  w.Finish();
  EXPECT_EQ(text, "# HELP g gauge\n# TYPE g gauge\ng{h=\"box\\\\xff\\\\x1b[31m\\nx\"} 1\n");
}

TEST(Exposition, EscapesLabelsAndNamesCountersPerFormat) {
  std::string text, om;
  for (auto [format, out] : {std::pair{ExpositionFormat::kText, &text},
                             std::pair{ExpositionFormat::kOpenMetrics, &om}}) {
    ExpositionWriter w(format, out);
    w.Family("x_seconds_total", MetricType::kCounter, "help with \\ and\nnewline");
    w.Sample({{"a", "q\"uote\\back\nline"}}, 1.5);
    w.Family("energy", MetricType::kCounter, "no _total");
    w.Sample({}, 3);
    w.Family("g", MetricType::kGauge, "gauge");
    w.Sample({{"k", "v"}, {"l", ""}}, std::nan(""));
    w.Sample({}, 1e300);
    w.Finish();
  }
  EXPECT_EQ(text,
            "# HELP x_seconds_total help with \\\\ and\\nnewline\n"
            "# TYPE x_seconds_total counter\n"
            "x_seconds_total{a=\"q\\\"uote\\\\back\\nline\"} 1.5\n"
            "# HELP energy no _total\n# TYPE energy counter\nenergy 3\n"
            "# HELP g gauge\n# TYPE g gauge\ng{k=\"v\",l=\"\"} NaN\ng 1e+300\n");
  EXPECT_THAT(om, HasSubstr("# TYPE x_seconds counter\nx_seconds_total{"));
  EXPECT_THAT(om, HasSubstr("# TYPE energy unknown\n"));
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_EQ(NegotiateFormat("application/openmetrics-text; version=1.0.0,text/plain;q=0.5"),
            ExpositionFormat::kOpenMetrics);
  EXPECT_EQ(NegotiateFormat("text/plain;version=0.0.4"), ExpositionFormat::kText);
  EXPECT_EQ(NegotiateFormat(""), ExpositionFormat::kText);
}

MetricsGpu Gpu(uint32_t id, int64_t index, std::optional<MicroUsd> price) {
  MetricsGpu g;
  g.gpu_id = id;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.name = "NVIDIA H100 80GB HBM3";
  g.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  g.memory_reserved_bytes = uint64_t{480} << 20;
  g.price_per_gpu_hour = price;
  g.price_source = "test";
  return g;
}

MetricsTick TickAt(int64_t wall_ms, uint32_t util) {
  MetricsTick t;
  t.wall_ms = wall_ms;
  GpuFastSample s;
  s.util_gpu_pct = util;
  s.mem_used_bytes = 1024ull << 20;
  s.mem_total_bytes = 81559ull << 20;
  s.power_mw = 123450;
  t.gpus = {s, GpuFastSample{}};  // GPU 1 read nothing: unknown, not 0
  t.gpus[1].lost = true;
  t.nvml_ok = true;
  t.processes_ok = true;
  t.host_ok = true;
  return t;
}

TEST(DaemonMetrics, ServesReadingsCountersAndNothingStale) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  o.process_series = true;  // --metrics-processes
  o.max_process_series = 2;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(7, 0, 3'600'000), Gpu(9, 1, std::nullopt)});
  MetricsTick t = TickAt(100'000, 55);
  for (uint32_t pid : {10, 11, 12}) {
    MetricsProcess p;
    p.pid = pid;
    p.compute = true;
    p.used_memory_bytes = uint64_t{pid} << 20;
    p.user = "alice";
    p.command = "python";
    t.processes.push_back(p);
  }
  m.RecordTick(t);
  IdentityRecord alice;
  alice.user = "alice";
  alice.project = "llm";
  TickCredit credit;
  credit.ts_ms = 99'000;
  credit.gpus = {{7, 1000, Phase::kUnderutilized, 55'000, {}, {}},
                 {9, 1000, std::nullopt, 0, {}, {}}};
  credit.identities = {{1, 7, 1000, 0, 1000, Phase::kUnderutilized}};
  m.Credit(credit, [&](uint32_t id) { return id == 1 ? &alice : nullptr; });

  const std::string text = m.Render(ExpositionFormat::kText, 100'500);
  // cgov's names, base units, dcgm-exporter's labels; no DCGM_FI_* series unless asked for.
  EXPECT_THAT(text, HasSubstr("cgov_gpu_utilization_ratio{gpu=\"0\",UUID=\"GPU-0\","
                              "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\","
                              "Hostname=\"node-a\",pci_bus_id=\"00000000:10:00.0\"} 0.55\n"));
  EXPECT_THAT(text, HasSubstr("cgov_gpu_memory_used_bytes{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr("pci_bus_id=\"00000000:10:00.0\"} 1073741824\n"));
  EXPECT_THAT(text, HasSubstr("} 83943751680\n")) << "free: total less used and reserved";
  EXPECT_THAT(text, HasSubstr("} 123.45\n")) << "power in W";
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_"))) << "dcgm-exporter's names are opt-in";
  EXPECT_THAT(text, Not(HasSubstr("node_gpu_hourly_cost"))) << "OpenCost's name is OpenCost's";
  EXPECT_THAT(text, Not(HasSubstr("cgov_gpu_utilization_ratio{gpu=\"1\""))) << "lost GPU";
  EXPECT_THAT(text, HasSubstr("cgov_gpu_phase_seconds_total{gpu=\"0\",UUID=\"GPU-0\""));
  EXPECT_THAT(text, HasSubstr("phase=\"underutilized\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("UUID=\"GPU-1\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB "
                              "HBM3\",Hostname=\"node-a\",pci_bus_id=\"00000000:11:00.0\","
                              "phase=\"unknown\"} 1\n"));
  // $3.60 an hour for one second: $0.001; the unpriced GPU has no cost series.
  EXPECT_THAT(text, HasSubstr("cgov_gpu_cost_usd_total{gpu=\"0\",UUID=\"GPU-0\""));
  EXPECT_THAT(text, HasSubstr("phase=\"underutilized\"} 0.001\n"));
  EXPECT_THAT(text, Not(HasSubstr("cgov_gpu_cost_usd_total{gpu=\"1\"")));
  EXPECT_THAT(text, HasSubstr("cgov_gpu_price_usd_per_hour{gpu=\"0\",UUID=\"GPU-0\""));
  EXPECT_THAT(text, HasSubstr("cgov_identity_gpu_seconds_total{Hostname=\"node-a\",user=\"alice\","
                              "project=\"llm\",team=\"\",namespace=\"\",pod=\"\",container=\"\","
                              "pod_uid=\"\",slurm_job=\"\",phase=\"underutilized\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("cgov_identity_cost_usd_total{Hostname=\"node-a\",user=\"alice\","
                              "project=\"llm\",team=\"\",namespace=\"\",pod=\"\",container=\"\","
                              "pod_uid=\"\",slurm_job=\"\"} 0.001\n"));
  // Capped at 2 process series, the biggest kept, the rest counted.
  EXPECT_THAT(text, HasSubstr("pid=\"12\""));
  EXPECT_THAT(text, Not(HasSubstr("pid=\"10\"")));
  EXPECT_THAT(text, HasSubstr("cgov_series_dropped_total{Hostname=\"node-a\","
                              "metric=\"cgov_process_gpu_memory_bytes\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("cgov_collector_success{collector=\"sampler\",Hostname=\"node-a\"} 1"));
  EXPECT_THAT(text, HasSubstr("cgov_sample_age_seconds{Hostname=\"node-a\"} 0.5\n"));
  EXPECT_TRUE(m.SamplerFresh(100'500));

  // The next tick has only pid 12: the other processes' series are gone with them.
  MetricsTick next = TickAt(100'800, 60);
  next.processes = {t.processes.back()};
  m.RecordTick(next);
  const std::string after = m.Render(ExpositionFormat::kText, 100'900);
  EXPECT_THAT(after, HasSubstr("pid=\"12\""));
  EXPECT_THAT(after, Not(HasSubstr("pid=\"11\"")));
  EXPECT_THAT(after, HasSubstr("pci_bus_id=\"00000000:10:00.0\"} 0.6\n")) << "the new reading";

  // 20 s later with no tick: the readings go, the counters stay, the sampler reports failure.
  const std::string stale = m.Render(ExpositionFormat::kText, 120'000);
  EXPECT_THAT(stale, Not(HasSubstr("cgov_gpu_utilization_ratio")));
  EXPECT_THAT(stale, Not(HasSubstr("cgov_process_gpu_memory_bytes{")));
  EXPECT_THAT(stale, HasSubstr("phase=\"underutilized\"} 1\n"));
  EXPECT_THAT(stale,
              HasSubstr("cgov_collector_success{collector=\"sampler\",Hostname=\"node-a\"} 0"));
  EXPECT_THAT(stale, HasSubstr("cgov_collector_success{collector=\"nvml\",Hostname=\"node-a\"} 0"));
  EXPECT_FALSE(m.SamplerFresh(120'000));
}

// Each sample of `metric` in `text` by the value of `label` (summed over the other labels), and
// by "label|phase" when the series has a phase.
std::map<std::string, double> SamplesBy(const std::string& text, const std::string& metric,
                                        const std::string& label) {
  std::map<std::string, double> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with(metric + "{")) continue;
    auto value_of = [&](const std::string& name) -> std::string {
      const std::string head = name + "=\"";
      const size_t at = line.find("," + head) != std::string::npos ? line.find("," + head) + 1
                                                                   : line.find("{" + head) + 1;
      if (at == 0) return "";
      const size_t start = at + head.size();
      return line.substr(start, line.find('"', start) - start);
    };
    std::string key = value_of(label);
    if (const std::string phase = value_of("phase"); !phase.empty()) key += "|" + phase;
    if (const std::string pattern = value_of("pattern"); !pattern.empty()) key += "|" + pattern;
    if (const std::string basis = value_of("basis"); !basis.empty()) key += "|" + basis;
    out[key] += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return out;
}

// GPU 0's cost counter of one phase, or -1.
double GpuCost(const std::string& text, const std::string& phase) {
  const std::map<std::string, double> cost = SamplesBy(text, "cgov_gpu_cost_usd_total", "gpu");
  auto it = cost.find("0|" + phase);
  return it != cost.end() ? it->second : -1;
}

// Issue 57, 9: cgov_gpu_cost_usd_total was the phase's milliseconds × the *current* price, so a
// SIGHUP that lowered the price made the counter go down (Prometheus reads a reset). Each credit
// is priced when it is made, at the price in force then.
TEST(DaemonMetrics, ARepriceChangesWhatComesAfterAndTheCostNeverGoesDown) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(7, 0, 3'600'000)});  // $3.60 an hour: $0.001 a second
  TickCredit credit;
  credit.gpus = {{7, 10'000, Phase::kIdleHeld, 0, {}, {}}};
  for (int k = 0; k < 3; ++k) {
    credit.ts_ms = 10'000 * (k + 1);
    m.Credit(credit, [](uint32_t) { return nullptr; });
  }
  EXPECT_DOUBLE_EQ(GpuCost(m.Render(ExpositionFormat::kText, 30'500), "idle_held"), 0.03);
  m.SetGpus({Gpu(7, 0, 360'000)});  // SIGHUP: $0.36 an hour from now on
  const double after_reprice = GpuCost(m.Render(ExpositionFormat::kText, 30'600), "idle_held");
  EXPECT_DOUBLE_EQ(after_reprice, 0.03) << "what was counted stays";
  credit.ts_ms = 40'000;
  m.Credit(credit, [](uint32_t) { return nullptr; });
  EXPECT_DOUBLE_EQ(GpuCost(m.Render(ExpositionFormat::kText, 40'500), "idle_held"), 0.031);
}

// Every sample of a GPU's counters summed over its phases (cgov_gpu_phase_seconds_total{gpu}).
double GpuSeconds(const std::string& text, const std::string& gpu) {
  double sum = 0;
  for (const auto& [key, seconds] : SamplesBy(text, "cgov_gpu_phase_seconds_total", "gpu")) {
    if (key.starts_with(gpu + "|")) sum += seconds;
  }
  return sum;
}

// Issue 57, item 8: one rule for what a sample covers. /metrics counted 12 GPU-seconds for 13
// samples a second apart where the history counts 13: the newest sample's time was credited only
// when the next sample came. Now a scrape counts it up to the scrape (one interval at most), as
// the history does for data that ends then; the counters still never go down, and equal the
// history's at every scrape, phase by phase and identity by identity.
TEST(DaemonMetrics, TheNewestSampleCountsUpToTheScrapeAsTheHistoryCountsIt) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(7, 0, 3'600'000)});
  IdentityRecord alice;
  alice.user = "alice";
  auto identity_of = [&](uint32_t id) -> const IdentityRecord* {
    return id == 1 ? &alice : nullptr;
  };
  HistoryAggregator history;
  history.set_credit_sink([&](const TickCredit& c) { m.Credit(c, identity_of); });
  const RunRecord run{1, 0, 1000, "daemon", "node-a"};
  double last = 0;
  for (int k = 0; k < 13; ++k) {
    StoredTick tick;
    StoredGpu g;
    g.gpu_id = 7;
    g.processes_known = true;
    g.set(StoredGpuField::kUtilPct, k % 3 == 0 ? 0 : 80);
    tick.gpus.push_back(g);
    StoredProcess p;
    p.pid = 42;
    p.identity_id = 1;
    p.compute = true;
    p.mem_used_mib = 20'000;
    tick.processes.push_back(p);
    // One sample 300 ms late, the next one on time again.
    auto at = [](int i) { return 100'000 + i * 1000 + (i == 7 ? 300 : 0); };
    const int64_t ts = at(k);
    history.Add(ts, run, tick);
    m.SetPending(tick, ts, identity_of);
    for (int64_t after : {0, 99, 250, 650, 999, 1000, 1700}) {
      if (k < 12 && ts + after >= at(k + 1)) continue;  // the next sample comes first
      const int64_t now = ts + after;
      // The history as a report reads it when its data ends at the scrape's last tenth of the
      // interval (a flood of scrapes rebuilds the exposition ten times a tick at most).
      HistoryAggregator ended = history;
      ended.set_credit_sink(nullptr);
      ended.Finish(ts + after / 100 * 100);
      int64_t history_ms = 0;
      for (const HourBucket& b : ended.TakeCompleteHours()) {
        history_ms += b.gpus.at(7).usage.KnownMs();
      }
      const std::string text = m.Render(ExpositionFormat::kText, now);
      const double seconds = GpuSeconds(text, "0");
      EXPECT_DOUBLE_EQ(seconds, static_cast<double>(history_ms) / 1000)
          << "sample " << k << " +" << after;
      EXPECT_GE(seconds, last) << "a counter never goes down: sample " << k << " +" << after;
      last = seconds;
      if (seconds > 0) {
        EXPECT_THAT(text, HasSubstr("cgov_identity_held_seconds_total{Hostname=\"node-a\","
                                    "user=\"alice\""));
      }
    }
  }
  EXPECT_DOUBLE_EQ(last, 13.0) << "13 samples a second apart: 13 GPU-seconds, the history's";
}

// Issue 57: the ledger's generated boxes through /metrics. Each run of the recorder is a daemon
// process of its own (its counters from 0: Prometheus' increase() adds them across the restart);
// every tick is credited by the history aggregator's own sink; a scrape at the end of the data
// counts the newest tick as the history does. Summed over the runs, each GPU's seconds by phase
// are the history's to the millisecond, its dollars the history's within a micro-dollar a tick
// (each tick's are priced when it is credited), each user's held seconds the history's, the GPUs'
// and users' energy the history's to the millijoule (issue 62); the
// scrape before the last credit equals the one after it.
TEST(LedgerProperties, MetricsOfAGeneratedBoxAreTheHistorysFigures) {
  uint64_t boxes = 60;
  if (const char* n = std::getenv("CGOV_LEDGER_BOXES")) boxes = std::strtoull(n, nullptr, 10) / 3;
  uint64_t first = 20261128;  // CGOV_LEDGER_SEED: another run of boxes
  if (const char* seed = std::getenv("CGOV_LEDGER_SEED")) first = std::strtoull(seed, nullptr, 10);
  bool any_swings = false, any_band = false;
  for (uint64_t seed = first; seed < first + boxes && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const test_support::Box box = test_support::Generate(seed);
    std::vector<MetricsGpu> gpus;
    for (const GpuRecord& g : box.in.gpus) {
      gpus.push_back(Gpu(g.id, g.index, box.in.gpu_prices.at(g.id).per_gpu_hour));
    }
    auto identity_of = [&](uint32_t id) -> const IdentityRecord* {
      auto it = box.in.identities.find(id);
      return it != box.in.identities.end() ? &it->second : nullptr;
    };
    std::vector<std::unique_ptr<DaemonMetrics>> runs;
    std::map<int64_t, size_t> run_of_tick;
    HistoryAggregator history;
    history.set_credit_sink(
        [&](const TickCredit& c) { runs[run_of_tick.at(c.ts_ms)]->Credit(c, identity_of); });
    uint32_t current_run = 0;
    for (const test_support::Box::Tick& t : box.ticks) {
      if (t.run.id != current_run) {
        current_run = t.run.id;
        if (!runs.empty()) runs.back()->ClearPending();  // that process is gone
        MetricsOptions o;
        o.hostname = "box";
        o.interval_ms = t.run.interval_ms;
        // An identity's series leaves an hour after its last credit (Prometheus keeps what it
        // read, and increase() adds the series' next life to it): kept here, read once.
        o.identity_expiry_ms = int64_t{1} << 60;
        runs.push_back(std::make_unique<DaemonMetrics>(o));
        runs.back()->SetGpus(gpus);
      }
      run_of_tick[t.ts_ms] = runs.size() - 1;
      history.Add(t.ts_ms, t.run, t.tick);
      runs.back()->SetPending(t.tick, t.ts_ms, identity_of);
    }
    const int64_t scrape_at = box.ticks.back().ts_ms + box.ticks.back().run.interval_ms;
    const std::string before = runs.back()->Render(ExpositionFormat::kText, scrape_at);
    history.Finish(box.end_ms);
    runs.back()->ClearPending();
    std::map<std::string, double> seconds, dollars, held, patterns, swings, energy, user_energy;
    std::map<std::string, double> energy_seconds, user_idle_energy;
    for (const auto& m : runs) {
      const std::string text = m->Render(ExpositionFormat::kText, scrape_at);
      for (const auto& [k, v] : SamplesBy(text, "cgov_gpu_phase_seconds_total", "gpu"))
        seconds[k] += v;
      for (const auto& [k, v] : SamplesBy(text, "cgov_gpu_pattern_seconds_total", "gpu")) {
        patterns[k] += v;
      }
      for (const auto& [k, v] : SamplesBy(text, "cgov_gpu_swings_total", "gpu")) swings[k] += v;
      for (const auto& [k, v] : SamplesBy(text, "cgov_gpu_cost_usd_total", "gpu")) dollars[k] += v;
      for (const auto& [k, v] : SamplesBy(text, "cgov_identity_held_seconds_total", "user"))
        held[k] += v;
      for (const auto& [k, v] : SamplesBy(text, "cgov_gpu_phase_energy_joules_total", "gpu")) {
        energy[k] += v;
      }
      for (const auto& [k, v] : SamplesBy(text, "cgov_identity_energy_joules_total", "user")) {
        user_energy[k] += v;
      }
      for (const auto& [k, v] :
           SamplesBy(text, "cgov_identity_idle_held_energy_joules_total", "user")) {
        user_idle_energy[k] += v;
      }
      for (const auto& [k, v] : SamplesBy(text, "cgov_gpu_energy_seconds_total", "gpu")) {
        energy_seconds[k] += v;
      }
    }
    EXPECT_EQ(SamplesBy(before, "cgov_gpu_phase_seconds_total", "gpu"),
              SamplesBy(runs.back()->Render(ExpositionFormat::kText, scrape_at),
                        "cgov_gpu_phase_seconds_total", "gpu"))
        << "the newest tick counted up to the scrape is what its credit counts";
    HistoryOptions ho;
    Result<HistorySummary> s = SummarizeHistory(box.in, ho);
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (const HistoryGpuRow& g : s->gpus) {
      const std::string gpu = std::to_string(g.gpu.index);
      double gpu_dollars = 0;
      for (size_t p = 0; p <= kPhaseCount; ++p) {
        const std::string phase =
            p < kPhaseCount ? std::string(PhaseKey(static_cast<Phase>(p))) : "unknown";
        const int64_t ms = p < kPhaseCount ? g.totals.usage.phase_ms[p] : g.totals.usage.unknown_ms;
        EXPECT_NEAR(seconds[gpu + "|" + phase], static_cast<double>(ms) / 1000, 1e-6)
            << "GPU " << gpu << " " << phase;
        // Issue 62: its energy by phase is the history's to the millijoule.
        const int64_t mj =
            p < kPhaseCount ? g.totals.usage.energy_mj[p] : g.totals.usage.energy_unknown_mj;
        EXPECT_NEAR(energy[gpu + "|" + phase], static_cast<double>(mj) / 1000, 1e-3)
            << "GPU " << gpu << " " << phase << " energy";
        gpu_dollars += dollars[gpu + "|" + phase];
      }
      const double exact =
          static_cast<double>(CostOf(*g.price.per_gpu_hour, g.totals.usage.HeldMs())) /
          kMicroPerUsd;
      EXPECT_NEAR(gpu_dollars, exact, static_cast<double>(box.ticks.size()) * 1e-6 + 1e-9)
          << "GPU " << gpu;
      // Item 7: the patterns the findings read, as the fleet report reads them back.
      for (const UsagePattern& p : kUsagePatterns) {
        const double ms = static_cast<double>(g.totals.usage.*p.field) / (p.x100 ? 100 : 1);
        EXPECT_NEAR(patterns[gpu + "|" + p.key], ms / 1000, 1e-6) << "GPU " << gpu << " " << p.key;
      }
      EXPECT_EQ(swings[gpu], g.totals.usage.transitions) << "GPU " << gpu;
      // The share of its time with a power reading, and the counter's, as the fleet reads them.
      EXPECT_NEAR(energy_seconds[gpu + "|power"],
                  static_cast<double>(g.totals.usage.energy_known_ms) / 1000, 1e-6)
          << gpu;
      EXPECT_NEAR(energy_seconds[gpu + "|counter"],
                  static_cast<double>(g.totals.usage.energy_metered_ms) / 1000, 1e-6)
          << gpu;
      any_swings = any_swings || g.totals.usage.transitions > 0;
      any_band = any_band || g.totals.usage.band_ms > 0;
    }
    for (const WhoRow& w : s->who) {
      EXPECT_NEAR(held[w.key], static_cast<double>(w.held_ms) / 1000, 1e-6) << w.key;
      EXPECT_NEAR(user_energy[w.key], static_cast<double>(w.energy_mj) / 1000, 1e-3) << w.key;
      EXPECT_NEAR(user_idle_energy[w.key], static_cast<double>(w.idle_held_energy_mj) / 1000, 1e-3)
          << w.key;
    }
  }
  if (boxes >= 20) {
    EXPECT_TRUE(any_swings && any_band) << "the boxes have bursty and steady GPUs";
  }
}

TEST(DaemonMetrics, BudgetsServeAmountThresholdsAndThisHostsSpend) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(7, 0, 3'600'000), Gpu(9, 1, std::nullopt)});
  const int64_t now = *ParseTimestampMs("2026-11-25T10:00Z");
  BudgetStatus seed;
  seed.budget = {HistoryBy::kProject, "llm", BudgetPeriod::kMonth, 5'000'000'000, {80, 100}, 1};
  seed.period = PeriodOf(BudgetPeriod::kMonth, now);
  seed.spent = 100'000'000;  // $100 in the history before this start
  // The daemon owns the budgets and credits them (with or without /metrics); the exporter
  // serves what they hold.
  auto budgets = std::make_shared<SharedBudgets>();
  budgets->Set(BudgetTracker({seed}, now));
  m.AddSection(std::make_shared<BudgetSeries>(budgets));  // as the budgets module adds it
  IdentityRecord alice;
  alice.user = "alice";
  alice.project = "llm";
  // A minute on the $3.60 GPU ($0.06); the unpriced GPU's minute is not credited at all.
  budgets->Credit(now + 1000, alice, "node-a", 3'600'000, 60'000);

  const std::string text = m.Render(ExpositionFormat::kText, now + 2000);
  const std::string labels = "{scope=\"project\",name=\"llm\",period=\"month\",Hostname=\"node-a\"";
  EXPECT_THAT(text,
              HasSubstr("# TYPE cgov_budget_usd gauge\ncgov_budget_usd" + labels + "} 5000\n"));
  EXPECT_THAT(text, HasSubstr("cgov_budget_spent_usd" + labels + "} 100.06\n"));
  EXPECT_THAT(text, HasSubstr("cgov_budget_alert_threshold_usd" + labels + ",pct=\"80\"} 4000\n"));
  EXPECT_THAT(text, HasSubstr("cgov_budget_alert_threshold_usd" + labels + ",pct=\"100\"} 5000\n"));
  EXPECT_THAT(text,
              HasSubstr("cgov_budget_period_start_timestamp_seconds" + labels + "} 1793491200\n"))
      << "2026-11-01T00:00Z";

  DaemonMetrics none(o);
  EXPECT_THAT(none.Render(ExpositionFormat::kText, now), Not(HasSubstr("cgov_budget")))
      << "no --budgets, no series";
}

// A module's series (NoticeSeries: the notify module's) come after the registry's own, in the
// same exposition, and a section that moved is rendered again though nothing else changed: the
// cached exposition follows its generation.
TEST(DaemonMetrics, AModulesSectionIsServedAndRenderedAgainWhenItMoves) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(7, 0, 3'600'000)});
  auto notices = std::make_shared<NoticeSeries>();
  m.AddSection(notices);
  const std::string before = m.Render(ExpositionFormat::kText, 1000);
  EXPECT_THAT(before, HasSubstr("cgov_notices_sent_total{Hostname=\"node-a\"} 0\n"));
  EXPECT_LT(before.find("cgov_honor_labels_check"), before.find("cgov_notices_sent_total"))
      << "after the registry's own families";
  notices->Set({.sent = 3, .failed_attempts = 1, .dropped = 2, .refused = 4, .queued = 5});
  const std::string after = m.Render(ExpositionFormat::kText, 1000);
  EXPECT_THAT(after, HasSubstr("cgov_notices_sent_total{Hostname=\"node-a\"} 3\n"));
  EXPECT_THAT(after, HasSubstr("cgov_notice_failures_total{Hostname=\"node-a\"} 1\n"));
  EXPECT_THAT(
      after,
      HasSubstr("cgov_notices_dropped_total{Hostname=\"node-a\",reason=\"queue_full\"} 2\n"));
  EXPECT_THAT(after,
              HasSubstr("cgov_notices_dropped_total{Hostname=\"node-a\",reason=\"refused\"} 4\n"));
  EXPECT_THAT(after, HasSubstr("cgov_notices_queued{Hostname=\"node-a\"} 5\n"));
  m.SetCollectorSuccess("kubernetes", false);
  EXPECT_THAT(
      m.Render(ExpositionFormat::kText, 1000),
      HasSubstr("cgov_collector_success{collector=\"kubernetes\",Hostname=\"node-a\"} 0\n"));
  EXPECT_THAT(DaemonMetrics(o).Render(ExpositionFormat::kText, 1000),
              Not(HasSubstr("collector=\"kubernetes\"")))
      << "a module's collector is served once the module says how it is";
}

TEST(DaemonMetrics, DcgmNamesAreAddedOnlyWhenAsked) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  o.dcgm_names = true;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(7, 0, 3'600'000)});
  m.RecordTick(TickAt(100'000, 57));
  const std::string text = m.Render(ExpositionFormat::kText, 100'500);
  // The same reading under both names, each in its own unit (57 % is 0.57, not 0.5700000000000001).
  EXPECT_THAT(text, HasSubstr("pci_bus_id=\"00000000:10:00.0\"} 0.57\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",device=\"nvidia0\","
                              "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\","
                              "pci_bus_id=\"00000000:10:00.0\",container=\"\",namespace=\"\","
                              "pod=\"\"} 57\n"))
      << "a GPU no pod holds: dcgm-exporter's empty pod labels";
  EXPECT_THAT(text, HasSubstr("# TYPE DCGM_FI_DEV_FB_USED gauge\nDCGM_FI_DEV_FB_USED{gpu=\"0\""));
  EXPECT_THAT(text, HasSubstr("pod=\"\"} 1024\n")) << "FB_USED in MiB";
  EXPECT_THAT(text, HasSubstr("} 80055\n")) << "FB_FREE in MiB: total less used and reserved";
  EXPECT_THAT(text, HasSubstr("cgov_gpu_memory_used_bytes{gpu=\"0\""));
  EXPECT_THAT(text, Not(HasSubstr("node_gpu_hourly_cost")));
}

// Issue 47: dcgm-exporter's names for OpenCost and Kubecost. A GPU held by one pod carries its
// namespace/pod/container (dcgm-exporter's convention); a GPU shared by two pods serves its
// engine activity once per pod, each its share (the sum is the GPU's); device readings of the
// shared GPU stay unlabelled; units and types as dcgm-exporter's etc/default-counters.csv.
TEST(DaemonMetrics, DcgmNamesCarryTheGpusPodAndSplitASharedGpusEngineActivity) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  o.dcgm_names = true;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(1, 0, std::nullopt), Gpu(2, 1, std::nullopt), Gpu(3, 2, std::nullopt)});
  MetricsTick t = TickAt(100'000, 80);
  t.gpus = {t.gpus[0], t.gpus[0], t.gpus[0]};
  GpmMetrics gpm;
  gpm.graphics_active_pct = 80;
  t.gpm.assign(3, gpm);
  MemoryHealth health;
  health.row_remapping = true;
  health.remapped_correctable = 2;
  t.memory_health.assign(3, health);
  t.gpu_pods = {{{"ml", "train-0", "trainer", 1.0}},
                {{"ml", "train-0", "trainer", 0.9}, {"ml", "vision-0", "worker", 0.1}},
                {}};
  m.RecordTick(t);
  const std::string text = m.Render(ExpositionFormat::kText, 100'500);
  const std::string gpu0 =
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-0\",device=\"nvidia0\","
      "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\",pci_bus_id=\"00000000:10:00.0\",";
  EXPECT_THAT(text, HasSubstr(gpu0 + "container=\"trainer\",namespace=\"ml\",pod=\"train-0\"} "
                                     "0.8\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-0\",device=\"nvidia0\","
                              "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\","
                              "pci_bus_id=\"00000000:10:00.0\",container=\"trainer\","
                              "namespace=\"ml\",pod=\"train-0\"} 123.45\n"));
  EXPECT_THAT(text, HasSubstr("pci_bus_id=\"00000000:11:00.0\",container=\"trainer\","
                              "namespace=\"ml\",pod=\"train-0\"} 0.72\n"));
  EXPECT_THAT(text, HasSubstr("pci_bus_id=\"00000000:11:00.0\",container=\"worker\","
                              "namespace=\"ml\",pod=\"vision-0\"} 0.08\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"GPU-1\",device=\"nvidia1\","
                              "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\","
                              "pci_bus_id=\"00000000:11:00.0\",container=\"\",namespace=\"\","
                              "pod=\"\"} 123.45\n"))
      << "a shared GPU's device readings: no pod";
  EXPECT_THAT(text, HasSubstr("pci_bus_id=\"00000000:12:00.0\",container=\"\",namespace=\"\","
                              "pod=\"\"} 0.8\n"))
      << "a GPU nobody holds: empty pod labels, as dcgm-exporter";
  EXPECT_THAT(text, HasSubstr("# TYPE DCGM_FI_DEV_FB_RESERVED gauge\n"));
  EXPECT_THAT(text, HasSubstr("pod=\"train-0\"} 480\n")) << "FB_RESERVED in MiB";
  EXPECT_THAT(text, HasSubstr("# TYPE DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS counter\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE cgov_gpu_remapped_rows_correctable gauge\n"));
  EXPECT_THAT(text, HasSubstr("cgov_gpu_engine_active_ratio{gpu=\"0\""));
  EXPECT_THAT(
      text, Not(HasSubstr("cgov_gpu_engine_active_ratio{gpu=\"0\",UUID=\"GPU-0\",device="
                          "\"nvidia0\",modelName=\"NVIDIA H100 80GB "
                          "HBM3\",Hostname=\"node-a\",pci_bus_id=\"00000000:10:00.0\",container")))
      << "cgov's names carry no pod labels (the identity series do)";
}

// Issue 48: the process's own figures under Prometheus' client-library names, at each scrape
// (never cached: they move), none unless given.
TEST(DaemonMetrics, ProcessSelfMetricsAsTheClientLibrariesNameThem) {
  MetricsOptions o;
  o.hostname = "node-a";
  DaemonMetrics m(o);
  SelfStats self;
  self.cpu_seconds = 1.5;
  self.resident_bytes = 10 << 20;
  self.virtual_bytes = 200 << 20;
  self.open_fds = 12;
  self.max_fds = 1024;
  self.start_time_seconds = 1795700000.5;
  const std::string text = m.Render(ExpositionFormat::kText, 0, &self);
  EXPECT_THAT(text, HasSubstr("# TYPE process_cpu_seconds_total counter\n"
                              "process_cpu_seconds_total 1.5\n"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes 10485760\n"));
  EXPECT_THAT(text, HasSubstr("process_virtual_memory_bytes 209715200\n"));
  EXPECT_THAT(text, HasSubstr("process_open_fds 12\n"));
  EXPECT_THAT(text, HasSubstr("process_max_fds 1024\n"));
  EXPECT_THAT(text, HasSubstr("process_start_time_seconds 1795700000.5\n"));
  self.cpu_seconds = 2.25;
  EXPECT_THAT(m.Render(ExpositionFormat::kText, 0, &self),
              HasSubstr("process_cpu_seconds_total 2.25\n"))
      << "read at each scrape";
  EXPECT_THAT(m.Render(ExpositionFormat::kOpenMetrics, 0, &self),
              HasSubstr("process_cpu_seconds_total 2.25\n"));
  EXPECT_THAT(m.Render(ExpositionFormat::kText, 0), Not(HasSubstr("\nprocess_")));
}

// Beyond the cap a new identity is credited to "(other)", which takes the cap's last place: the
// identities' totals stay the GPUs'. Identities idle past the expiry leave; label values from
// the outside are bounded.
TEST(DaemonMetrics, IdentitiesBeyondTheCapAreCreditedToOtherAndExpire) {
  MetricsOptions o;
  o.hostname = "h";
  o.max_identity_series = 2;
  o.identity_expiry_ms = 10'000;
  DaemonMetrics m(o);
  m.SetGpus({Gpu(1, 0, std::nullopt)});
  std::vector<IdentityRecord> users(3);
  for (int i = 0; i < 3; ++i) users[i].user = "u" + std::to_string(i);
  users[0].project = std::string(120, 'p') + "\xc3\xa9\xc3\xa9\xc3\xa9";  // 126 bytes: kept
  users[2].project = std::string(125, 'p') + "\xc3\xa9\xc3\xa9";          // 129 bytes: cut
  auto credit = [&](int64_t ts, std::vector<uint32_t> who) {
    TickCredit c;
    c.ts_ms = ts;
    for (uint32_t id : who) c.identities.push_back({id, 1, 1000, 0, 1000, Phase::kProductive});
    m.Credit(c, [&](uint32_t id) { return &users[id]; });
  };
  credit(0, {0, 1, 2});
  std::string text = m.Render(ExpositionFormat::kText, 0);
  EXPECT_THAT(text, HasSubstr("user=\"u0\",project=\"" + users[0].project + "\""));
  EXPECT_THAT(text, Not(HasSubstr("user=\"u1\"")));
  EXPECT_THAT(text, Not(HasSubstr("user=\"u2\"")));
  EXPECT_THAT(text, HasSubstr("user=\"(other)\",project=\"(other)\",team=\"(other)\","
                              "namespace=\"(other)\",pod=\"(other)\",container=\"(other)\","
                              "pod_uid=\"(other)\",slurm_job=\"(other)\",phase=\"productive\"} "
                              "2\n"))
      << "u1 and u2, a second each";
  EXPECT_THAT(text, HasSubstr("metric=\"cgov_identity_gpu_seconds_total\"} 2\n"));
  credit(20'000, {2});  // u0 and "(other)" idle for longer than the expiry: gone; u2 gets a slot
  text = m.Render(ExpositionFormat::kText, 20'000);
  EXPECT_THAT(text, Not(HasSubstr("user=\"u0\"")));
  EXPECT_THAT(text, Not(HasSubstr("user=\"(other)\"")));
  EXPECT_THAT(text, HasSubstr("user=\"u2\",project=\"" + std::string(125, 'p') + "\u2026\""))
      << "cut before the character that would pass 128 bytes, marked";
}

// docs/metrics.md, "Series budget": a node serves at most kFixedSeries + kPerGpuSeries per GPU
// + kPerIdentitySeries per identity with series of its own (at most max_identity_series, 256 by
// default, "(other)" included), plus one per GPU process with --metrics-processes.
// With --metrics-names dcgm, kPerGpuDcgmSeries more per GPU; a GPU with NVML GPM time,
// kPerGpuGpmPatternSeries more (its GPM patterns). Fixed: the self-metrics, the
// collectors (--kubernetes and --pod-resources add one each), the build info, the honor-labels
// check, the six process_* series of the daemon itself (kSelf: every one known), and with every
// module on (kModules) each module's failure counter and each collector's and module's duration.
constexpr size_t kFixedSeries = 44, kPerGpuSeries = 63, kPerGpuGpmPatternSeries = 8,
                 kPerGpuDcgmSeries = 26, kPerIdentitySeries = 11, kPerIdentityWorkSeries = 3;
constexpr const char* kModules[] = {"metrics",       "driver_events", "kubernetes",
                                    "pod_resources", "notify",        "policy",
                                    "budgets",       "tick_log",      "work"};

const SelfStats kSelf{.cpu_seconds = 1,
                      .resident_bytes = 1,
                      .virtual_bytes = 1,
                      .open_fds = 1,
                      .max_fds = 1,
                      .start_time_seconds = 1};

// Every series of an exposition (its name and labels), once.
std::set<std::string> SeriesOf(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    out.insert(line.substr(0, line.rfind(' ')));
  }
  return out;
}

// The sum of one family's samples in an exposition.
double SumOf(const std::string& text, const std::string& family) {
  double sum = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(family + "{")) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// The registry remembers what each identity id resolved to (its labels, its counters): that
// must change no figure. Two registries take the same generated credits (ids reused, records
// unknown at times, identities expiring, the cap reached, Slurm labels changing); one forgets
// every id before each credit. Their expositions are the same at every scrape.
TEST(DaemonMetrics, RememberingIdentityIdsChangesNoFigure) {
  uint64_t seed = 20261129;
  if (const char* env = std::getenv("CGOV_METRICS_SEED")) seed = std::strtoull(env, nullptr, 10);
  SCOPED_TRACE("seed " + std::to_string(seed) + " (CGOV_METRICS_SEED)");
  MetricsOptions o;
  o.hostname = "h";
  o.max_identity_series = 12;
  o.identity_expiry_ms = 40'000;
  DaemonMetrics remembering(o), forgetting(o);
  for (DaemonMetrics* m : {&remembering, &forgetting}) {
    m->SetGpus({Gpu(1, 0, MicroUsd{4'000'000}), Gpu(2, 1, MicroUsd{2'500'000})});
  }
  std::vector<IdentityRecord> records(60);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].user = "u" + std::to_string(i % 23);
    records[i].project = "p" + std::to_string(i % 7);
    records[i].slurm_job = i % 3 == 0 ? std::to_string(100 + i % 5) : "";
  }
  std::mt19937_64 rng(seed);
  auto below = [&](uint64_t n) { return rng() % n; };
  auto identity_of = [&](uint32_t id) -> const IdentityRecord* {
    return id % 11 == 10 ? nullptr : &records[id];  // ids the dictionary does not know
  };
  for (int64_t t = 0; t < 900; ++t) {
    TickCredit c;
    c.ts_ms = t * 1000;
    for (uint32_t gpu = 1; gpu <= 2; ++gpu) {
      const Phase phase = below(3) == 0 ? Phase::kIdleHeld : Phase::kProductive;
      c.gpus.push_back({gpu, 1000, phase, 40'000, {}, {}});
      // Quiet spells of a minute and more let identities expire; ids recur across them.
      const uint64_t holders = (t / 60) % 4 == 3 ? 0 : 1 + below(5);
      for (uint64_t h = 0; h < holders; ++h) {
        const auto id = static_cast<uint32_t>(below(records.size()));
        c.identities.push_back({id, gpu, 1000, phase == Phase::kIdleHeld ? 1000 : 0,
                                static_cast<int64_t>(1000 / holders), phase});
      }
    }
    if (t == 450) {
      SlurmJobs jobs;
      for (int j = 100; j < 105; ++j) {
        jobs[std::to_string(j)] = {std::to_string(j), "", "acct" + std::to_string(j % 2), "gpu"};
      }
      for (DaemonMetrics* m : {&remembering, &forgetting}) {
        m->SetSlurmJobs(std::make_shared<const SlurmJobs>(jobs));
      }
    }
    forgetting.ForgetIdentityIds();
    remembering.Credit(c, identity_of);
    forgetting.Credit(c, identity_of);
    if (t % 10 == 9) {
      const std::string a = remembering.Render(ExpositionFormat::kText, c.ts_ms + 500);
      const std::string b = forgetting.Render(ExpositionFormat::kText, c.ts_ms + 500);
      ASSERT_EQ(a, b) << "tick " << t;
      if (t == 899) {
        EXPECT_THAT(a, HasSubstr("slurm_account=\"acct"));
        EXPECT_THAT(a, HasSubstr("user=\"(other)\""));
      }
    }
  }
}

// A replaced database numbers its identities afresh: after ForgetIdentityIds, id 0 is whoever
// the new dictionary says, and what the old id 0 was credited stays its own.
TEST(DaemonMetrics, AnIdNamedAfreshIsCreditedToItsNewRecord) {
  MetricsOptions o;
  o.hostname = "h";
  DaemonMetrics m(o);
  m.SetGpus({Gpu(1, 0, std::nullopt)});
  IdentityRecord alice, bob;
  alice.user = "alice";
  bob.user = "bob";
  const IdentityRecord* named = &alice;
  auto credit = [&](int64_t ts) {
    TickCredit c;
    c.ts_ms = ts;
    c.identities.push_back({0, 1, 1000, 0, 1000, Phase::kProductive});
    m.Credit(c, [&](uint32_t) { return named; });
  };
  credit(0);
  credit(1000);
  named = &bob;
  m.ForgetIdentityIds();
  credit(2000);
  const std::string text = m.Render(ExpositionFormat::kText, 2000);
  EXPECT_THAT(text, HasSubstr("cgov_identity_gpu_seconds_total{Hostname=\"h\",user=\"alice\""));
  EXPECT_THAT(text, HasSubstr("cgov_identity_gpu_seconds_total{Hostname=\"h\",user=\"bob\""));
  EXPECT_NEAR(SumOf(text, "cgov_identity_gpu_seconds_total"), 3, 1e-9);
  for (const std::string& line : {std::string("user=\"alice\""), std::string("user=\"bob\"")}) {
    std::istringstream in(text);
    double seconds = 0;
    for (std::string l; std::getline(in, l);) {
      if (l.starts_with("cgov_identity_gpu_seconds_total{") && l.find(line) != std::string::npos) {
        seconds += std::stod(l.substr(l.rfind(' ') + 1));
      }
    }
    EXPECT_EQ(seconds, line.find("alice") != std::string::npos ? 2 : 1) << line;
  }
}

// An hour at 1 Hz on 8 GPUs with 200 GPU processes at any time, each in a pod of its own living
// 1 to 10 minutes (~2,000 identities in the hour), scraped every minute (no identity expires
// within the hour, so a series once served is served at every later scrape: scraping more often
// would see no other series): the distinct series ever served stay within the budget, and the
// identities' seconds still add up to every second credited.
TEST(DaemonMetrics, SeriesStayWithinTheBudgetThroughAnHourOfProcessChurn) {
  MetricsOptions o;
  o.hostname = "node-a";
  o.interval_ms = 1000;
  DaemonMetrics m(o);
  std::vector<MetricsGpu> gpus;
  for (uint32_t i = 0; i < 8; ++i) gpus.push_back(Gpu(i + 1, i, 3'600'000));
  m.SetGpus(gpus);
  struct Proc {
    uint32_t pid, identity;
    int64_t ends_ms;
    size_t gpu;
  };
  std::vector<IdentityRecord> identities;
  std::vector<Proc> live;
  uint32_t next_pid = 1000;
  uint64_t rng = 88172645463325252ull;
  auto random = [&] {  // xorshift64: the same run every time
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  };
  std::set<std::string> ever;
  int64_t credited_ms = 0;
  for (int64_t t = 0; t < 3600; ++t) {
    const int64_t now = t * 1000;
    std::erase_if(live, [&](const Proc& p) { return p.ends_ms <= now; });
    while (live.size() < 200) {
      IdentityRecord r;
      const std::string n = std::to_string(identities.size());
      r.user = "u" + std::to_string(random() % 40);
      r.project = "p" + std::to_string(random() % 20);
      r.pod = "uid-" + n;
      r.kube_namespace = "batch";
      r.kube_pod_name = "job-" + n;
      r.kube_container_name = "main";
      identities.push_back(r);
      live.push_back({next_pid++, static_cast<uint32_t>(identities.size() - 1),
                      now + 60'000 + static_cast<int64_t>(random() % 540'000), random() % 8});
    }
    MetricsTick tick;
    tick.wall_ms = now;
    GpuFastSample g;
    g.util_gpu_pct = 50;
    g.mem_used_bytes = 1024ull << 20;
    g.mem_total_bytes = 81559ull << 20;
    tick.gpus.assign(8, g);
    tick.nvml_ok = tick.processes_ok = tick.host_ok = true;
    TickCredit c;
    c.ts_ms = now;
    for (size_t gpu = 0; gpu < 8; ++gpu) {
      c.gpus.push_back({gpus[gpu].gpu_id, 1000, Phase::kUnderutilized, 50'000, {}, {}});
      std::vector<const Proc*> on;
      for (const Proc& p : live) {
        if (p.gpu != gpu) continue;
        on.push_back(&p);
        tick.processes.push_back({gpu, p.pid, true, uint64_t{1} << 30, "u", "python"});
      }
      int64_t left = 1000;
      for (size_t i = 0; i < on.size(); ++i) {
        const int64_t share = i + 1 == on.size() ? left : 1000 / static_cast<int64_t>(on.size());
        left -= share;
        credited_ms += share;
        c.identities.push_back(
            {on[i]->identity, gpus[gpu].gpu_id, 1000, 0, share, Phase::kUnderutilized});
      }
    }
    m.RecordTick(std::move(tick));
    m.Credit(c, [&](uint32_t id) { return &identities[id]; });
    DaemonSelf self;
    self.ticks = t + 1;
    m.SetDaemonSelf(self);
    if (t % 60 == 0) {
      ever.merge(SeriesOf(m.Render(ExpositionFormat::kText, now + 500, &kSelf)));
    }
  }
  const std::string last = m.Render(ExpositionFormat::kText, 3'599'500, &kSelf);
  ever.merge(SeriesOf(last));
  ASSERT_GT(identities.size(), 1500u);
  // The figure docs/metrics.md quotes (--gtest_output=xml:FILE records it).
  RecordProperty("distinct_series", static_cast<int>(ever.size()));
  EXPECT_LE(ever.size(), kFixedSeries + 8 * (kPerGpuSeries + kPerGpuGpmPatternSeries) +
                             256 * kPerIdentitySeries);
  EXPECT_THAT(last, HasSubstr("user=\"(other)\""));
  EXPECT_THAT(last, Not(HasSubstr("pid=\""))) << "no per-process series unless asked for";
  EXPECT_NEAR(SumOf(last, "cgov_identity_gpu_seconds_total"),
              static_cast<double>(credited_ms) / 1000, 1e-6);

  // The budget's terms, measured: one GPU and one identity more cost exactly this many series.
  auto count = [](size_t gpu_count, size_t identity_count, bool dcgm = false) {
    MetricsOptions small;
    small.hostname = "n";
    small.dcgm_names = dcgm;
    DaemonMetrics d(small);
    std::vector<MetricsGpu> g;
    for (uint32_t i = 0; i < gpu_count; ++i) g.push_back(Gpu(i + 1, i, 3'600'000));
    d.SetGpus(g);
    MetricsTick tick;  // every reading known: the most series a GPU can have
    GpuFastSample s;
    s.util_gpu_pct = s.util_mem_pct = s.enc_util_pct = s.dec_util_pct = 50;
    s.mem_used_bytes = 1ull << 30;
    s.mem_total_bytes = 80ull << 30;
    s.power_mw = s.power_limit_mw = 100'000;
    s.temp_c = s.sm_clock_mhz = s.mem_clock_mhz = 50;
    s.clock_reasons = 0;
    s.energy_mj = 1000;
    s.xid_errors = 1;
    s.last_xid = 79;
    tick.gpus.assign(gpu_count, s);
    GpmMetrics gpm;
    for (auto field :
         {&GpmMetrics::graphics_active_pct, &GpmMetrics::sm_active_pct,
          &GpmMetrics::sm_occupancy_pct, &GpmMetrics::tensor_active_pct,
          &GpmMetrics::dram_active_pct, &GpmMetrics::pcie_tx_mib_s, &GpmMetrics::pcie_rx_mib_s,
          &GpmMetrics::nvlink_tx_mib_s, &GpmMetrics::nvlink_rx_mib_s}) {
      gpm.*field = 1;
    }
    tick.gpm.assign(gpu_count, gpm);
    MemoryHealth health;
    health.row_remapping = true;  // four series (retired pages would be three)
    tick.memory_health.assign(gpu_count, health);
    tick.nvml_ok = tick.processes_ok = tick.host_ok = true;
    d.RecordTick(std::move(tick));
    std::vector<IdentityRecord> who(identity_count);
    TickCredit c;
    for (uint32_t i = 0; i < identity_count; ++i) {
      who[i].user = "u" + std::to_string(i);
      c.identities.push_back({i, 1, 1000, 0, 1000, Phase::kProductive});
    }
    for (uint32_t i = 0; i < gpu_count; ++i) {
      for (size_t p = 0; p <= kPhaseCount; ++p) {  // every phase, "unknown" too
        c.gpus.push_back({i + 1,
                          1000,
                          p < kPhaseCount ? std::optional(static_cast<Phase>(p)) : std::nullopt,
                          50'000,
                          {},
                          {}});
      }
    }
    d.Credit(c, [&](uint32_t id) { return &who[id]; });
    // Jobs that report their work, in each unit a progress file may name.
    for (uint32_t i = 0; i < identity_count; ++i) {
      for (const char* unit : {"samples", "tokens", "steps"}) d.CreditWork(&who[i], unit, 1, 0);
    }
    d.SetCollectorSuccess("kubernetes", true);
    d.SetCollectorSuccess("pod_resources", true);
    DaemonSelf self;
    self.collector_seconds = {{"nvml", 0}, {"gpu_processes", 0}, {"procfs", 0}, {"history_db", 0}};
    for (const char* module : kModules) {
      self.module_failures[module] = 0;
      self.collector_seconds.emplace_back(module, 0);
    }
    d.SetDaemonSelf(self);
    return SeriesOf(d.Render(ExpositionFormat::kText, 0, &kSelf)).size();
  };
  EXPECT_EQ(count(1, 1) - count(0, 1), kPerGpuSeries);
  EXPECT_EQ(count(2, 1) - count(1, 1), count(1, 1) - count(0, 1));
  EXPECT_EQ(count(1, 2) - count(1, 1), kPerIdentitySeries + kPerIdentityWorkSeries);
  EXPECT_EQ(count(0, 0), kFixedSeries);
  EXPECT_EQ(count(1, 1, true) - count(1, 1), kPerGpuDcgmSeries);
}

// A raw HTTP exchange: whatever the server answers until it closes (or 3 s pass). `half_close`:
// the client shuts its sending side after the request, as a client that is done does.
std::string Exchange(uint16_t port, const std::string& request, bool half_close = false) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  timeval tv{3, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    for (size_t sent = 0; sent < request.size();) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    if (half_close) shutdown(fd, SHUT_WR);
    char buffer[4096];
    for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) out.append(buffer, n);
  }
  close(fd);
  return out;
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpServerOptions o = {}) {
    o.address = *ParseListenAddress("127.0.0.1:0");
    auto started = HttpServer::Start(o, [](const ServedRequest& r) {
      ServedResponse response;
      response.body = "path=" + r.path + " accept=" + r.accept + "\n";
      return response;
    });
    ASSERT_TRUE(started.ok()) << started.status().message();
    server_ = std::move(started).value();
  }
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, AnswersGetAndRefusesBodiesMethodsAndHugeHeads) {
  Start();
  const uint16_t port = server_->port();
  ASSERT_GT(port, 0);
  std::string r = Exchange(port,
                           "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n"
                           "Connection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(r, HasSubstr("path=/metrics accept=text/plain\n"));
  r = Exchange(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(r, HasSubstr("Allow: GET, HEAD"));
  r = Exchange(port,
               "GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
               "3\r\nabc\r\n0\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 413"));
  r = Exchange(
      port, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(1 << 20, 'a') + "\r\n\r\n");
  EXPECT_THAT(r, Not(HasSubstr("path=/metrics"))) << "a 1 MiB header is never served";
  if (!r.empty()) {
    EXPECT_THAT(r, StartsWith("HTTP/1.1 4"));
  }
  // The server is still fine.
  r = Exchange(port, "HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(r, Not(HasSubstr("path=")));
  EXPECT_GE(server_->refused(), 2u);
}

// Issue 21 item 20: pipelined and keep-alive requests each got one answer, then a close.
TEST_F(HttpServerTest, ServesPipelinedRequestsOnOneConnection) {
  Start();
  const std::string keep = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string r = Exchange(
      server_->port(), keep + keep + "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  size_t answers = 0;
  for (size_t at = r.find("HTTP/1.1 200"); at != std::string::npos;
       at = r.find("HTTP/1.1 200", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 3u) << r;
  EXPECT_THAT(r, HasSubstr("path=/a accept=\n"));
  EXPECT_THAT(r, HasSubstr("path=/b accept=\n"));
  EXPECT_EQ(server_->answered(), 3u);
}

// A client that sends its request (or part of one) and shuts its side is answered and closed at
// once, not after the 10 s idle timeout: its slot is free for the next scrape. (With epoll,
// libmicrohttpd 0.9.75 noticed the end of input only at the timeout.)
TEST_F(HttpServerTest, AHalfClosedConnectionIsClosedAtOnce) {
  Start();
  for (const std::string request : {"GET /a HTTP/1.1\r\nHost: x\r\n\r\n", "GET /hea"}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string r = Exchange(server_->port(), request, /*half_close=*/true);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 2.5) << request;
    if (request.ends_with("\r\n\r\n")) {
      EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
    }
  }
}

TEST_F(HttpServerTest, BasicAuthGuardsEveryPath) {
  HttpServerOptions o;
  o.users = {{"prom", "s3cret", false}};
  Start(o);
  std::string r =
      Exchange(server_->port(), "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 401"));
  EXPECT_THAT(r, HasSubstr("WWW-Authenticate: Basic realm=\"cgov\""));
  // prom:wrong, then prom:s3cret
  r = Exchange(server_->port(),
               "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic "
               "cHJvbTp3cm9uZw==\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 401"));
  r = Exchange(server_->port(),
               "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic "
               "cHJvbTpzM2NyZXQ=\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
  // prom:s3cret\0anything is not prom:s3cret; the scheme in lower case is still Basic.
  r = Exchange(server_->port(),
               "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic "
               "cHJvbTpzM2NyZXQAYW55dGhpbmc=\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 401"));
  r = Exchange(server_->port(),
               "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: basic "
               "cHJvbTpzM2NyZXQ=\r\nConnection: close\r\n\r\n");
  EXPECT_THAT(r, StartsWith("HTTP/1.1 200"));
}

// Liveness probes send no credentials: /health is answered without them, nothing else is.
TEST_F(HttpServerTest, OpenPathsNeedNoCredentials) {
  HttpServerOptions o;
  o.users = {{"prom", "s3cret", false}};
  o.open_paths = {"/health"};
  Start(o);
  EXPECT_THAT(
      Exchange(server_->port(), "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
      StartsWith("HTTP/1.1 200"));
  for (const char* path : {"/metrics", "/health/", "/healthx", "/"}) {
    EXPECT_THAT(Exchange(server_->port(), std::string("GET ") + path +
                                              " HTTP/1.1\r\nHost: x\r\n"
                                              "Connection: close\r\n\r\n"),
                StartsWith("HTTP/1.1 401"))
        << path;
  }
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Issue 46 item 1: each byte reset the 10 s idle timeout, so a client dripping a header line
// every few seconds held its slot forever. A head must now be whole within its deadline,
// however it is paced.
TEST_F(HttpServerTest, ADrippingHeadIsCutOffAtItsDeadlineHoweverItIsPaced) {
  HttpServerOptions o;
  o.head_deadline_s = 1;
  Start(o);
  // Beside it, a keep-alive connection's next head has its own deadline, from the previous
  // answer: three requests 0.4 s apart (1.2 s in all) are not cut off.
  std::thread keep_alive([this] {
    const int keep = ConnectFrom(server_->port(), "127.0.0.1");
    ASSERT_GE(keep, 0);
    for (int i = 0; i < 3; ++i) {
      const std::string request = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
      send(keep, request.data(), request.size(), MSG_NOSIGNAL);
      char buffer[4096];
      EXPECT_GT(recv(keep, buffer, sizeof(buffer), 0), 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
    }
    close(keep);
  });
  const int fd = ConnectFrom(server_->port(), "127.0.0.1");
  ASSERT_GE(fd, 0);
  const auto start = std::chrono::steady_clock::now();
  send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
  bool closed = false;
  while (!closed && SecondsSince(start) < 5) {  // a line every 200 ms: never idle
    send(fd, "X-Drip: a\r\n", 11, MSG_NOSIGNAL);
    closed = ClosedWithin(fd, std::chrono::milliseconds(200));
  }
  close(fd);
  EXPECT_TRUE(closed);
  EXPECT_GE(SecondsSince(start), 0.9);
  EXPECT_LT(SecondsSince(start), 3.0);
  keep_alive.join();
  EXPECT_EQ(server_->cut_off(), 1u) << "the dripping head alone";
  EXPECT_EQ(server_->answered(), 3u);
}

// Issue 46 item 1: 130 slow connections held all 128 slots; /health stopped answering. One
// address now holds at most `per_address_limit` of them, and when more than half the slots are
// taken a head has only the pressed deadline.
TEST_F(HttpServerTest, SlowClientsCannotTakeEverySlotFromHealth) {
  HttpServerOptions o;
  o.connection_limit = 8;
  o.per_address_limit = 3;
  o.head_deadline_s = 30;
  o.pressed_head_deadline_ms = 500;
  Start(o);
  std::vector<int> slow;
  for (int i = 0; i < 10; ++i) {  // ten from one address: three are kept
    const int fd = ConnectFrom(server_->port(), "127.0.0.2");
    if (fd >= 0) {
      send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
      slow.push_back(fd);
    }
  }
  size_t refused = 0;
  for (int fd : slow) refused += ClosedWithin(fd, std::chrono::milliseconds(300)) ? 1 : 0;
  EXPECT_EQ(refused, 7u);
  EXPECT_THAT(Exchange(server_->port(), "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(server_->cut_off(), 0u) << "three of eight slots: no pressure, a 30 s deadline";
  // Two more addresses: nine slow connections for eight slots, past half: late heads are cut
  // off at 0.5 s until no more than half the slots are taken (then the 30 s deadline holds).
  for (const char* source : {"127.0.0.3", "127.0.0.4"}) {
    for (int i = 0; i < 3; ++i) {
      const int fd = ConnectFrom(server_->port(), source);
      if (fd >= 0) {
        send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
        slow.push_back(fd);
      }
    }
  }
  // Polled (bounded: 5 s), not slept: the pressed deadline cuts them off from 0.5 s on.
  size_t still_open = slow.size();
  for (int poll = 0; poll < 50; ++poll) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    still_open = 0;
    for (size_t i = 0; i < slow.size(); ++i) {
      if (i < 3 || i >= 10)
        still_open += ClosedWithin(slow[i], std::chrono::milliseconds(10)) ? 0 : 1;
    }
    if (still_open <= o.connection_limit / 2 && server_->cut_off() >= 1) break;
  }
  EXPECT_LE(still_open, o.connection_limit / 2);
  EXPECT_GE(server_->cut_off(), 1u);
  for (int fd : slow) close(fd);
  EXPECT_THAT(Exchange(server_->port(), "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"),
              StartsWith("HTTP/1.1 200"));
}

// Issue 46 item 2: wrong passwords against a bcrypt hash ran on both server threads at once and
// /health waited behind them (16 against a cost-14 hash: 7.7 s). One check runs at a time; the
// rest are answered 429 at once, and /health stays prompt.
TEST_F(HttpServerTest, ABcryptFloodLeavesHealthPromptAndIsAnswered429) {
  HttpServerOptions o;
  // "test" at cost 12 (Prometheus' basic-auth guide): ~0.2 s a check.
  o.users = {{"prom", "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay", true}};
  o.open_paths = {"/health"};
  Start(o);
  std::atomic<bool> flooding = true;
  std::atomic<int> too_many = 0, unauthorized = 0;
  std::vector<std::thread> flood;
  for (int t = 0; t < 8; ++t) {
    flood.emplace_back([&, t] {
      for (int i = 0; flooding; ++i) {
        // prom:<a different wrong password each time>: none is remembered.
        const std::string wrong = Base64Encode(fmt::format("prom:wrong-{}-{}", t, i));
        const std::string r =
            Exchange(server_->port(), "GET /metrics HTTP/1.1\r\nAuthorization: Basic " + wrong +
                                          "\r\nConnection: close\r\n\r\n");
        (r.starts_with("HTTP/1.1 429") ? too_many : unauthorized).fetch_add(1);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double worst = 0;
  for (int i = 0; i < 10; ++i) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THAT(Exchange(server_->port(), "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"),
                StartsWith("HTTP/1.1 200"));
    worst = std::max(worst, SecondsSince(start));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  flooding = false;
  for (std::thread& t : flood) t.join();
  EXPECT_LT(worst, 1.0) << "/health under the flood";
  EXPECT_GT(too_many.load(), 0);
  EXPECT_GT(unauthorized.load(), 0);
}

// Issue 21 item 11: "pass\0anything" was accepted as "pass"; "basic" (lower case) refused.
TEST(BasicAuthorization, TheWholePasswordCountsAndTheSchemeIsCaseInsensitive) {
  auto plain = ParseBasicAuthorization("Basic cHJvbTpzM2NyZXQ=");  // prom:s3cret
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->first, "prom");
  EXPECT_EQ(plain->second, "s3cret");
  EXPECT_EQ(ParseBasicAuthorization("basic cHJvbTpzM2NyZXQ="), plain);
  EXPECT_EQ(ParseBasicAuthorization("BASIC  cHJvbTpzM2NyZXQ= "), plain);
  auto nul =
      ParseBasicAuthorization("Basic cHJvbTpzM2NyZXQAYW55dGhpbmc=");  // prom:s3cret\0anything
  ASSERT_TRUE(nul);
  EXPECT_EQ(nul->second, std::string("s3cret\0anything", 15));
  auto colon = ParseBasicAuthorization("Basic cHJvbTphOmI=");  // prom:a:b
  ASSERT_TRUE(colon);
  EXPECT_EQ(colon->second, "a:b");
  for (const char* bad : {"Bearer cHJvbTpzM2NyZXQ=", "Basic cHJvbTpzM2NyZXQ", "Basic ====",
                          "Basic cHJvbQ==", "Basic c*Jv", "Basicc HJvbTpzM2NyZXQ=", ""}) {
    EXPECT_FALSE(ParseBasicAuthorization(bad)) << bad;
  }
}

TEST(BasicAuthFile, OneLineUserColonPassword) {
  auto plain = ParseBasicAuthFile("prom:a:b c\r\n");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->first, "prom");
  EXPECT_EQ(plain->second, "a:b c");
  for (std::string_view bad : {"", "\n", "prom", ":pw", "prom:", "prom:pw\nsecond:line"}) {
    EXPECT_FALSE(ParseBasicAuthFile(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseBasicAuthFile("nocolon").status().message(),
            "line 1: expected USER:PASSWORD on one line");
}

TEST(ListenAddress, ParsesLoopbackAnyAndIpv6AndSaysWhatIsWrong) {
  auto a = ParseListenAddress("127.0.0.1:9400");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->IsLoopback());
  EXPECT_EQ(a->port, 9400);
  a = ParseListenAddress("localhost:1");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  a = ParseListenAddress("[::1]:9400");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->ipv6);
  EXPECT_TRUE(a->IsLoopback());
  a = ParseListenAddress("0.0.0.0:9400");
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->IsLoopback());
  EXPECT_THAT(ParseListenAddress("28601").status().message(),
              HasSubstr("a port alone; name the address too: 127.0.0.1:28601"));
  EXPECT_THAT(ParseListenAddress("gpu-node").status().message(), HasSubstr("no port"));
  EXPECT_THAT(ParseListenAddress(":9400").status().message(), HasSubstr("no host"));
  EXPECT_THAT(ParseListenAddress("127.0.0.1:99999").status().message(), HasSubstr("port"));
  EXPECT_THAT(ParseListenAddress("gpu-node:9400").status().message(), HasSubstr("numeric"));
}

TEST(HttpServer, ABusyPortIsAClearError) {
  HttpServerOptions o;
  o.address = *ParseListenAddress("127.0.0.1:0");
  auto first = HttpServer::Start(o, [](const ServedRequest&) { return ServedResponse{}; });
  ASSERT_TRUE(first.ok());
  o.address.port = (*first)->port();
  auto second = HttpServer::Start(o, [](const ServedRequest&) { return ServedResponse{}; });
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.status().message(), HasSubstr("--listen 127.0.0.1:"));
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
}

TEST(HttpServer, AcceptsGzipReadsAcceptEncodingAsRfc9110Says) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("GZIP"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("br, gzip;q=0.5, deflate"));
  EXPECT_TRUE(AcceptsGzip("gzip ; q=1"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip("identity, *;q=0.1"));
  EXPECT_TRUE(AcceptsGzip("gzip;q=0.001"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("br, deflate"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("*, gzip;q=0"));  // gzip named and refused: `*` does not bring it back
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzipper, xgzip"));
}

}  // namespace
}  // namespace cgov
