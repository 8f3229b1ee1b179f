// Issue 62: a GPU's energy is power x time by the one per-sample rule, split between its holders
// as its time is, kept in the hourly rollups (older rows read as unknown) and summed by the
// report. Each figure is checked against a hand-computed integral.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>

#include "analysis/history_aggregator.h"
#include "analysis/history_summary.h"
#include "store/records.h"

namespace cgov {
namespace {

constexpr auto kBound = static_cast<size_t>(Phase::kComputeBound);
constexpr auto kHeld = static_cast<size_t>(Phase::kIdleHeld);
constexpr auto kIdle = static_cast<size_t>(Phase::kTrulyIdle);

struct EnergyHolder {
  uint32_t pid, identity;
  std::optional<uint32_t> sm_util = std::nullopt;
};

// GPU 1 at `util` (unknown: nullopt) drawing `power_dw` (0.1 W; unknown: nullopt).
StoredTick EnergyTick(std::optional<uint64_t> util, std::optional<uint64_t> power_dw,
                      const std::vector<EnergyHolder>& holders) {
  StoredTick t;
  StoredGpu g;
  g.gpu_id = 1;
  g.processes_known = true;
  if (util) g.set(StoredGpuField::kUtilPct, *util);
  if (power_dw) g.set(StoredGpuField::kPowerDw, *power_dw);
  t.gpus.push_back(g);
  for (const EnergyHolder& h : holders) {
    StoredProcess p;
    p.pid = h.pid;
    p.identity_id = h.identity;
    p.command_id = 1;
    p.compute = true;
    p.mem_used_mib = 4000;
    p.sm_util_pct = h.sm_util;
    t.processes.push_back(p);
  }
  return t;
}

HourBucket AllHours(HistoryAggregator* a) {
  HourBucket all;
  for (const HourBucket& b : a->TakeCompleteHours()) MergeInto(b, &all);
  return all;
}

TEST(Energy, EachGpusEnergyIsTheIntegralOfItsPowerOverItsTime) {
  // 1 s ticks: 3 s compute-bound at 700 W, 2 s idle-held at 71.5 W, 1 s with no utilization at
  // 100 W (phase unknown), 1 s with no power reading, then 1 s truly idle at 60 W that stands for
  // one interval (the last tick of the run).
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  for (int i = 0; i < 3; ++i, ts += 1000) a.Add(ts, run, EnergyTick(97, 7000, {{10, 1}}));
  for (int i = 0; i < 2; ++i, ts += 1000) a.Add(ts, run, EnergyTick(0, 715, {{10, 1}}));
  a.Add(ts, run, EnergyTick(std::nullopt, 1000, {{10, 1}}));
  ts += 1000;
  a.Add(ts, run, EnergyTick(97, std::nullopt, {{10, 1}}));
  ts += 1000;
  a.Add(ts, run, EnergyTick(0, 600, {}));
  a.Finish(ts + 60'000);
  const HourBucket all = AllHours(&a);
  const GpuUsage& u = all.gpus.at(1).usage;
  EXPECT_EQ(u.energy_mj[kBound], 3 * 700'000);
  EXPECT_EQ(u.energy_mj[kHeld], 2 * 71'500);
  EXPECT_EQ(u.energy_mj[kIdle], 60'000);
  EXPECT_EQ(u.energy_unknown_mj, 100'000) << "power known, phase not";
  EXPECT_EQ(u.energy_known_ms, 7000) << "the second without a power reading is not counted";
  EXPECT_EQ(u.EnergyMj(), 2'100'000 + 143'000 + 60'000 + 100'000);
  EXPECT_EQ(u.IdleEnergyMj(), 143'000 + 60'000);
}

TEST(Energy, AGapIsNotFilledAndATickStandsForAtMostTwoIntervals) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  a.Add(0, run, EnergyTick(97, 5000, {{10, 1}}));
  a.Add(30'000, run, EnergyTick(97, 5000, {{10, 1}}));  // 30 s later: the first stands for 2 s
  a.Finish(31'000);
  const GpuHour g = AllHours(&a).gpus.at(1);
  EXPECT_EQ(g.usage.EnergyMj(), 3 * 500'000);
  EXPECT_EQ(g.gap_ms, 28'000);
}

TEST(Energy, HoldersSharesAddUpToTheGpusEnergyToTheMillijoule) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  std::vector<TickCredit> credits;
  a.set_credit_sink([&](const TickCredit& c) { credits.push_back(c); });
  // 333.3 W: 333,300 mJ a second, split 90/7/3 by SM utilization while busy, evenly (111,100
  // each) while idle-held; three holders and an odd tick length so that shares round.
  a.Add(0, run, EnergyTick(95, 3333, {{1, 1, 90}, {2, 2, 7}, {3, 3, 3}}));
  a.Add(1000, run, EnergyTick(0, 3333, {{1, 1, 0}, {2, 2, 0}, {3, 3, 0}}));
  a.Finish(1000 + 777);
  ASSERT_EQ(credits.size(), 2u);
  for (const TickCredit& c : credits) {
    int64_t shares = 0;
    for (const TickCredit::Identity& i : c.identities) shares += i.energy_mj;
    EXPECT_EQ(shares, c.gpus[0].usage.EnergyMj()) << "tick at " << c.ts_ms;
  }
  EXPECT_EQ(credits[0].identities[0].energy_mj, 299'970) << "90 % of 333,300 mJ";
  EXPECT_EQ(credits[0].identities[1].energy_mj, 23'331);
  EXPECT_EQ(credits[0].identities[2].energy_mj, 333'300 - 299'970 - 23'331);
  EXPECT_EQ(credits[1].gpus[0].usage.EnergyMj(), 258'974) << "333.3 W x 0.777 s, rounded";
  const HourBucket all = AllHours(&a);
  int64_t held_energy = 0, energy = 0;
  for (uint32_t id : {1u, 2u, 3u}) {
    const IdentityHour& h = all.identities.at({id, 1});
    energy += h.energy_mj;
    held_energy += h.idle_held_energy_mj;
  }
  EXPECT_EQ(energy, all.gpus.at(1).usage.EnergyMj());
  EXPECT_EQ(held_energy, all.gpus.at(1).usage.energy_mj[kHeld]);
}

HistoryInput EnergyWindow(HistoryAggregator* a, int64_t end_ms) {
  HistoryInput in;
  in.until_ms = end_ms;
  in.gpus = {{1, "GPU-e", 0, "NVIDIA H100 80GB HBM3", 81559, "", "", {}}};
  in.identities[1].user = "alice";
  in.identities[2].user = "bob";
  in.hours = a->TakeCompleteHours();
  in.sessions = a->AllSessions();
  in.data_end_ms = end_ms;
  return in;
}

TEST(Energy, TheReportsIdleEnergyAndWhosSharesAddUp) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  // 60 s busy by alice and bob (80/20) at 650 W, 30 s idle-held by bob at 90 W, 30 s truly idle
  // at 60 W.
  for (int i = 0; i < 60; ++i, ts += 1000)
    a.Add(ts, run, EnergyTick(99, 6500, {{1, 1, 80}, {2, 2, 20}}));
  for (int i = 0; i < 30; ++i, ts += 1000) a.Add(ts, run, EnergyTick(0, 900, {{2, 2, 0}}));
  for (int i = 0; i < 30; ++i, ts += 1000) a.Add(ts, run, EnergyTick(0, 600, {}));
  a.Finish(ts);
  HistoryOptions o;
  o.price.price_per_gpu_hour = 2'000'000;
  o.grid_g_per_kwh = 400;
  Result<HistorySummary> r = SummarizeHistory(EnergyWindow(&a, ts), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const EnergyBlock& e = r->energy;
  EXPECT_EQ(e.total_mj, 60 * 650'000 + 30 * 90'000 + 30 * 60'000);
  EXPECT_EQ(e.idle_mj, 30 * 90'000 + 30 * 60'000);
  EXPECT_EQ(e.phase_mj[kHeld], 30 * 90'000);
  EXPECT_EQ(e.known_ms, 120'000);
  EXPECT_EQ(e.unattributed_mj, 30 * 60'000) << "the truly idle part: no one held the GPU";
  ASSERT_EQ(r->who.size(), 2u);
  std::map<std::string, const WhoRow*> who;
  for (const WhoRow& w : r->who) who[w.key] = &w;
  EXPECT_EQ(who["alice"]->energy_mj, 60 * 520'000);
  EXPECT_EQ(who["bob"]->energy_mj, 60 * 130'000 + 30 * 90'000);
  EXPECT_EQ(who["bob"]->idle_held_energy_mj, 30 * 90'000);
  EXPECT_EQ(who["alice"]->idle_held_energy_mj, 0);
  EXPECT_EQ(r->gpus[0].totals.usage.EnergyMj(), e.total_mj);
  // 43,500 J = 0.012083 kWh; at 400 g/kWh, 4.833 g.
  EXPECT_NEAR(EnergyBlock::Kwh(e.total_mj), 43'500.0 / 3'600'000.0, 1e-12);
  ASSERT_TRUE(e.Co2eKg(e.total_mj));
  EXPECT_NEAR(*e.Co2eKg(e.total_mj), 0.012083333 * 0.4, 1e-9);
  o.grid_g_per_kwh.reset();
  HistoryAggregator b;
  b.Add(0, run, EnergyTick(99, 6500, {{1, 1}}));
  b.Finish(1000);
  Result<HistorySummary> none = SummarizeHistory(EnergyWindow(&b, 1000), o);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->energy.Co2eKg(none->energy.total_mj)) << "no grid intensity is assumed";
}

TEST(Energy, RollupsKeepItAndRowsWrittenBeforeReadAsUnknown) {
  GpuHour h;
  h.usage.phase_ms = {1000, 0, 0, 0, 0};
  h.usage.energy_mj = {60'000, 1, 2, 3, 4};
  h.usage.energy_unknown_mj = 5;
  h.usage.energy_known_ms = 1000;
  h.util_band_ms[0] = 1000;
  std::string data;
  EncodeGpuHour(h, &data);
  EXPECT_EQ(data[0], 4) << "version byte";
  GpuHour back;
  ASSERT_TRUE(DecodeGpuHour(data, "r", &back).ok());
  EXPECT_EQ(back.usage.energy_mj, h.usage.energy_mj);
  EXPECT_EQ(back.usage.energy_unknown_mj, 5);
  EXPECT_EQ(back.usage.energy_known_ms, 1000);
  // A version 3 row: 45 fields (the utilization bands last), transitions, peak memory.
  std::string v3(1, '\x03');
  for (int i = 0; i < 45; ++i) PutVarint(i == 44 ? 1000 : 0, &v3);
  PutVarint(0, &v3);
  PutVarint(0, &v3);
  ASSERT_TRUE(DecodeGpuHour(v3, "v3", &back).ok());
  EXPECT_EQ(back.util_band_ms[9], 1000);
  EXPECT_EQ(back.usage.EnergyMj(), 0);
  EXPECT_EQ(back.usage.energy_known_ms, 0) << "energy unknown before version 4, not zero";
  std::string v5 = data;
  v5[0] = 5;
  EXPECT_FALSE(DecodeGpuHour(v5, "r", &back).ok()) << "a newer encoding is refused";

  IdentityHour i;
  i.held_ms = 1000;
  i.energy_mj = 700'000;
  i.idle_held_energy_mj = 70'000;
  std::string row;
  EncodeIdentityHour(i, &row);
  EXPECT_EQ(row[0], 3);
  IdentityHour iback;
  ASSERT_TRUE(DecodeIdentityHour(row, "i", &iback).ok());
  EXPECT_EQ(iback.energy_mj, 700'000);
  EXPECT_EQ(iback.idle_held_energy_mj, 70'000);
  std::string v2(1, '\x02');  // samples, held, idle-held, 5 phases, unknown, 2 shared
  for (int k = 0; k < 11; ++k) PutVarint(k == 1 ? 1000 : 0, &v2);
  ASSERT_TRUE(DecodeIdentityHour(v2, "v2", &iback).ok());
  EXPECT_EQ(iback.held_ms, 1000);
  EXPECT_EQ(iback.energy_mj, 0);
}

TEST(Energy, AHostileDurationCannotOverflowASample) {
  EXPECT_EQ(EnergyOf(700'000, 1000), 700'000);
  EXPECT_EQ(EnergyOf(1, 499), 0);
  EXPECT_EQ(EnergyOf(1, 500), 1) << "to the nearest mJ";
  EXPECT_EQ(EnergyOf(UINT32_MAX, INT64_MAX), kMaxSampleEnergyMj);
  EXPECT_EQ(EnergyOf(700'000, -5), 0);
}

// GPU 1 at 97 % drawing 100 W, held by identity 1, with the driver's counter when given.
StoredTick MeteredTick(std::optional<uint64_t> counter_mj) {
  StoredTick t = EnergyTick(97, 1000, {{10, 1}});
  if (counter_mj) t.gpus[0].set(StoredGpuField::kEnergyMj, *counter_mj);
  return t;
}

// The energy each tick was credited with (GPU 1), in order, and the GPU's total.
struct Credited {
  std::vector<int64_t> ticks;
  int64_t total = 0, metered_ms = 0, owed = 0;
};
Credited MeteredRun(const std::vector<std::pair<int64_t, std::optional<uint64_t>>>& ticks,
                    int64_t end) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  Credited c;
  a.set_credit_sink([&](const TickCredit& credit) {
    c.ticks.push_back(credit.gpus[0].usage.EnergyMj());
    int64_t holders = 0;
    for (const TickCredit::Identity& i : credit.identities) holders += i.energy_mj;
    EXPECT_EQ(holders, credit.gpus[0].usage.EnergyMj()) << "holders share the corrected energy";
    c.owed = credit.gpus[0].state.owed_mj;
  });
  for (const auto& [ts, counter] : ticks) a.Add(ts, run, MeteredTick(counter));
  a.Finish(end);
  const GpuUsage u = AllHours(&a).gpus.at(1).usage;
  c.total = u.EnergyMj();
  c.metered_ms = u.energy_metered_ms;
  return c;
}

// Ticks a second apart from 0 to `n` - 1 s, the counter given at some.
std::vector<std::pair<int64_t, std::optional<uint64_t>>> EverySecond(
    int n, const std::map<int, uint64_t>& counter) {
  std::vector<std::pair<int64_t, std::optional<uint64_t>>> out;
  for (int k = 0; k < n; ++k) {
    auto it = counter.find(k);
    out.emplace_back(k * 1000,
                     it != counter.end() ? std::optional<uint64_t>(it->second) : std::nullopt);
  }
  return out;
}

TEST(EnergyCounter, TheDriversCounterCorrectsPowerTimesTimeOverItsWindow) {
  // 100 W sampled (100,000 mJ a tick), but the counter measured 1,200 J over the first 10 s: the
  // tick that brings the reading is credited the 200 J the estimate missed.
  const Credited c = MeteredRun(EverySecond(15, {{0, 5'000'000}, {10, 6'200'000}}), 15'000);
  ASSERT_EQ(c.ticks.size(), 15u);
  EXPECT_EQ(c.ticks[9], 100'000);
  EXPECT_EQ(c.ticks[10], 100'000 + 200'000);
  EXPECT_EQ(c.total, 1'200'000 + 5 * 100'000) << "the counter's 10 s, then power x time";
  EXPECT_EQ(c.metered_ms, 10'000);
}

TEST(EnergyCounter, AShortfallIsTakenFromTheNextTicksNeverBelowZero) {
  // The counter measured 800 J where 1,000 J were estimated: 200 J come off the next ticks.
  const Credited c = MeteredRun(EverySecond(15, {{0, 5'000'000}, {10, 5'800'000}}), 15'000);
  EXPECT_EQ(c.ticks[10], 0);
  EXPECT_EQ(c.ticks[11], 0);
  EXPECT_EQ(c.ticks[12], 100'000);
  for (int64_t e : c.ticks) EXPECT_GE(e, 0);
  EXPECT_EQ(c.total, 800'000 + 5 * 100'000);
  EXPECT_EQ(c.owed, 0);
}

TEST(EnergyCounter, AResetNeitherLosesNorDoublesEnergy) {
  // The driver reloaded between 0 s and 10 s (its counter went back): that window keeps its
  // power x time; the next one, from the new counter, is measured.
  const Credited c = MeteredRun(
      EverySecond(25, {{0, 900'000'000}, {10, 40'000}, {20, 40'000 + 1'100'000}}), 25'000);
  EXPECT_EQ(c.ticks[10], 100'000) << "no correction from a counter that went back";
  EXPECT_EQ(c.ticks[20], 100'000 + 100'000);
  EXPECT_EQ(c.total, 1'000'000 + 1'100'000 + 5 * 100'000);
  EXPECT_EQ(c.metered_ms, 10'000);
}

TEST(EnergyCounter, AGapBetweenTicksStartsANewWindow) {
  // 20 s without ticks (not credited: at most two intervals of it) lie inside the counter's
  // window: its energy is not the ticks', so that window keeps power x time.
  std::vector<std::pair<int64_t, std::optional<uint64_t>>> ticks = EverySecond(5, {{0, 1'000'000}});
  for (int k = 0; k < 5; ++k) ticks.emplace_back(25'000 + k * 1000, std::nullopt);
  ticks[7].second = 1'000'000 + 3'000'000;  // at 27 s: 30 s at 100 W since the first reading
  const Credited c = MeteredRun(ticks, 30'000);
  EXPECT_EQ(c.total, 100'000 * 11) << "5 ticks, the last before the gap for 2 s, then 5";
  EXPECT_EQ(c.metered_ms, 0);
}

// Generated streams (printed seed): random power, a counter that reads the "true" energy (the
// sampled power x a random factor) now and then, driver reloads and gaps between ticks.
// Whatever the stream, no tick is credited below 0, the holders share each tick exactly, and the
// GPU's energy is the counter's over every window it measured plus power x time elsewhere (a
// model walked beside it), with a shortfall still owed at the end over-credited by that much.
TEST(EnergyCounter, OnGeneratedStreamsTheTotalIsTheCountersWindowsAndTheEstimateElsewhere) {
  uint64_t first = 20261129;  // CGOV_ENERGY_SEED: another run of streams
  if (const char* seed = std::getenv("CGOV_ENERGY_SEED")) first = std::strtoull(seed, nullptr, 10);
  std::printf("energy counter streams: seeds %llu to %llu\n",
              static_cast<unsigned long long>(first), static_cast<unsigned long long>(first + 199));
  for (uint64_t seed = first; seed < first + 200 && !HasFailure(); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    struct Tick {
      int64_t ts;
      uint64_t power_dw;
      std::optional<uint64_t> reading;
    };
    std::vector<Tick> ticks;
    int64_t ts = 0;
    uint64_t counter = rng() % 1'000'000'000;
    const int n = 50 + static_cast<int>(rng() % 200);
    for (int k = 0; k < n; ++k) {
      Tick t{ts, 300 + rng() % 6700, std::nullopt};
      if (rng() % 15 == 0) counter = rng() % 1000;  // a driver reload
      if (rng() % 5 == 0) t.reading = counter;
      const int64_t next = ts + (rng() % 40 == 0 ? 10'000 : 1000);  // now and then a gap
      // What the GPU truly burned until the next tick: the sampled power x 0.8 to 1.2.
      counter +=
          static_cast<uint64_t>(EnergyOf(static_cast<uint32_t>(t.power_dw * 100), next - ts)) *
          (80 + rng() % 41) / 100;
      ticks.push_back(t);
      ts = next;
    }
    const RunRecord run{1, 0, 1000, "t", "h"};
    HistoryAggregator a;
    int64_t owed = 0;
    a.set_credit_sink([&](const TickCredit& credit) {
      EXPECT_GE(credit.gpus[0].usage.EnergyMj(), 0);
      int64_t holders = 0;
      for (const TickCredit::Identity& i : credit.identities) holders += i.energy_mj;
      EXPECT_EQ(holders, credit.gpus[0].usage.EnergyMj());
      owed = credit.gpus[0].state.owed_mj;
    });
    int64_t model = 0, window_estimate = 0, prev_end = -1;
    std::optional<uint64_t> window_start;
    for (size_t k = 0; k < ticks.size(); ++k) {
      const Tick& t = ticks[k];
      StoredTick st = EnergyTick(rng() % 101, t.power_dw,
                                 {{10, 1, static_cast<uint32_t>(rng() % 100)},
                                  {11, 2, static_cast<uint32_t>(rng() % 100)}});
      if (t.reading) st.gpus[0].set(StoredGpuField::kEnergyMj, *t.reading);
      a.Add(t.ts, run, st);
      // The model: a tick stands for the time to the next, at most 2 s (the last one 1 s).
      const int64_t duration =
          k + 1 < ticks.size() ? std::min<int64_t>(ticks[k + 1].ts - t.ts, 2000) : 1000;
      if (prev_end >= 0 && t.ts != prev_end) {  // a gap closes the window, unmeasured
        model += window_estimate;
        window_estimate = 0;
        window_start.reset();
      }
      if (t.reading) {
        model += window_start && *t.reading >= *window_start
                     ? static_cast<int64_t>(*t.reading - *window_start)
                     : window_estimate;
        window_start = t.reading;
        window_estimate = 0;
      }
      window_estimate += EnergyOf(static_cast<uint32_t>(t.power_dw * 100), duration);
      prev_end = t.ts + duration;
    }
    a.Finish(ts - (ts - ticks.back().ts) + 1000);
    model += window_estimate;
    EXPECT_EQ(AllHours(&a).gpus.at(1).usage.EnergyMj(), model + owed);
  }
}

}  // namespace
}  // namespace cgov
