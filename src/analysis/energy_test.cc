// Issue 62: a GPU's energy is power x time by the one per-sample rule, split between its holders
// as its time is, kept in the hourly rollups (older rows read as unknown) and summed by the
// report. Each figure is checked against a hand-computed integral.
#include <gtest/gtest.h>

#include <numeric>

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
  const GpuUsage& u = AllHours(&a).gpus.at(1).usage;
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
  for (int i = 0; i < 60; ++i, ts += 1000) a.Add(ts, run, EnergyTick(99, 6500, {{1, 1, 80}, {2, 2, 20}}));
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

}  // namespace
}  // namespace cgov
