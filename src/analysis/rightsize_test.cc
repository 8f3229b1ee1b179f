// The right-size plan (issue 61): boxes whose best packing is known give it, a nightly peak
// forbids packing, the replay refuses a plan that would have run out of memory once, MIG
// profiles fit by peak, p99 + headroom and compute, and on generated boxes (printed seeds) every
// accepted plan replays clean and its dollars stay savings: within the waste, parts adding up.
#include "analysis/rightsize.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "analysis/history_summary.h"
#include "analysis/plan_summary.h"
#include "generated_box.h"

namespace cgov {
namespace {

constexpr uint64_t kH100Mib = 81'559;

struct PlanGpuSpec {
  PlanGpuSpec(uint32_t mem, uint32_t util, uint32_t id, std::optional<uint32_t> sm = std::nullopt)
      : mem_mib(mem), util_pct(util), identity(id), sm_active_x10(sm) {}
  uint32_t mem_mib;  // the GPU's one process's memory (0: no process)
  uint32_t util_pct;
  uint32_t identity;
  std::optional<uint32_t> sm_active_x10;
};

StoredTick PlanTickOf(const std::vector<PlanGpuSpec>& specs) {
  StoredTick tick;
  for (size_t g = 0; g < specs.size(); ++g) {
    StoredGpu sg;
    sg.gpu_id = static_cast<uint32_t>(g + 1);
    sg.processes_known = true;
    sg.set(StoredGpuField::kUtilPct, specs[g].util_pct);
    if (specs[g].sm_active_x10) sg.set(StoredGpuField::kSmActivePctX10, *specs[g].sm_active_x10);
    tick.gpus.push_back(sg);
    if (specs[g].mem_mib == 0) continue;
    StoredProcess p;
    p.gpu_pos = static_cast<uint32_t>(g);
    p.pid = static_cast<uint32_t>(1000 + g);
    p.compute = true;
    p.identity_id = specs[g].identity;
    p.mem_used_mib = specs[g].mem_mib;
    tick.processes.push_back(p);
  }
  return tick;
}

std::vector<GpuRecord> H100s(size_t n) {
  std::vector<GpuRecord> out;
  for (size_t g = 0; g < n; ++g) {
    GpuRecord r;
    r.id = static_cast<uint32_t>(g + 1);
    r.index = static_cast<int64_t>(g);
    r.name = "NVIDIA H100 80GB HBM3";
    r.mem_total_mib = kH100Mib;
    out.push_back(r);
  }
  return out;
}

// The two passes over `ticks` (one a second in one run), as LoadPlan makes them.
PlanInput PlanOfTicks(const std::vector<GpuRecord>& gpus, const std::vector<StoredTick>& ticks,
                      const PlanOptions& o = {}) {
  const RunRecord run{1, 0, 1000, "test", "box"};
  PlanInput in;
  in.options = o;
  PlanProfiler profiler;
  for (size_t i = 0; i < ticks.size(); ++i)
    profiler.Add(static_cast<int64_t>(i) * 1000, run, ticks[i]);
  profiler.Finish(static_cast<int64_t>(ticks.size()) * 1000);
  in.profile = profiler.profile();
  in.groups = PackGroups(in.profile, gpus, o);
  PlanReplay replay(&in.groups, o);
  for (size_t i = 0; i < ticks.size(); ++i)
    replay.Add(static_cast<int64_t>(i) * 1000, run, ticks[i]);
  replay.Finish(static_cast<int64_t>(ticks.size()) * 1000);
  return in;
}

TEST(RightSize, EightLightGpusPackOntoTwo) {
  uint64_t seed = 20261129;
  if (const char* s = std::getenv("CGOV_PLAN_SEED")) seed = std::strtoull(s, nullptr, 10);
  std::printf("plan seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  std::vector<StoredTick> ticks;
  for (int t = 0; t < 3600; ++t) {
    std::vector<PlanGpuSpec> specs;
    for (uint32_t g = 0; g < 8; ++g) {
      specs.push_back({static_cast<uint32_t>(2048 + rng() % 8193),  // 2..10 GiB
                       static_cast<uint32_t>(rng() % 21), g + 1});  // 0..20 %
    }
    ticks.push_back(PlanTickOf(specs));
  }
  const PlanInput in = PlanOfTicks(H100s(8), ticks);
  ASSERT_EQ(in.groups.size(), 1u);
  const PlanGroup& g = in.groups[0];
  ASSERT_GE(g.chosen, 0) << "a packing passes the replay";
  const PlanCandidate& c = g.candidates[static_cast<size_t>(g.chosen)];
  EXPECT_EQ(c.bins.size(), 2u) << "4 x 20 % fill the 80 % ceiling: 2 GPUs";
  EXPECT_EQ(g.GpusPlanned(), 2u);
  EXPECT_EQ(c.MemOverMs(), 0);
  EXPECT_EQ(c.ComputeOverMs(), 0) << "sums of <= 20 % four at a time never pass 80 %";
  EXPECT_EQ(c.replay_ms, 3'600'000);
  size_t sources = 0;
  for (const PlanBin& b : c.bins) sources += b.sources.size();
  EXPECT_EQ(sources, 8u) << "every load has a place";
}

TEST(RightSize, ANightlyPeakForbidsPacking) {
  // A day at 1/min: every GPU at 8 GiB and 10 %, but an hour a night all at 50 GiB together.
  std::vector<StoredTick> ticks;
  for (int minute = 0; minute < 24 * 60; ++minute) {
    const bool night = minute >= 2 * 60 && minute < 3 * 60;
    ticks.push_back(PlanTickOf(
        std::vector<PlanGpuSpec>(8, PlanGpuSpec{night ? 51'200u : 8192u, night ? 60u : 10u, 1})));
  }
  const std::vector<GpuRecord> gpus = H100s(8);
  const RunRecord run{1, 0, 60'000, "test", "box"};
  PlanProfiler profiler;
  for (size_t i = 0; i < ticks.size(); ++i)
    profiler.Add(static_cast<int64_t>(i) * 60'000, run, ticks[i]);
  profiler.Finish(static_cast<int64_t>(ticks.size()) * 60'000);
  const PlanProfile& p = profiler.profile();
  EXPECT_EQ(p.gpus.at(1).mem_mib.Percentile(0.99), 51'200u) << "the hour is 4 % of the day";
  std::vector<PlanGroup> groups = PackGroups(p, gpus, {});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_TRUE(groups[0].candidates.empty()) << "two 50 GiB loads never share an 80 GB GPU";
  EXPECT_EQ(groups[0].GpusPlanned(), 8u);
}

TEST(RightSize, TheReplayRefusesAPlanThatRanOutOfMemoryOnce) {
  // Two GPUs at 30 GiB, 10 %; once in 1,000 s GPU 1 reaches 60 GiB. By p99 they fit on one GPU
  // (60 GiB with headroom); the replay sees 90 GiB in that one second and refuses.
  std::vector<StoredTick> ticks;
  for (int t = 0; t < 1000; ++t) {
    ticks.push_back(PlanTickOf({{t == 500 ? 61'440u : 30'720u, 10, 1}, {30'720u, 10, 2}}));
  }
  const PlanInput in = PlanOfTicks(H100s(2), ticks);
  ASSERT_EQ(in.groups.size(), 1u);
  const PlanGroup& g = in.groups[0];
  ASSERT_EQ(g.candidates.size(), 1u) << "the peak sizing frees nothing: not a candidate";
  EXPECT_EQ(g.candidates[0].sizing, "p99");
  EXPECT_EQ(g.candidates[0].bins.size(), 1u);
  EXPECT_EQ(g.candidates[0].MemOverMs(), 1000) << "the one second over";
  EXPECT_EQ(g.candidates[0].bins[0].peak_mem_mib, 92'160u);
  EXPECT_EQ(g.chosen, -1) << "a plan over memory once is refused";
  EXPECT_EQ(g.GpusPlanned(), 2u);
  // Without the spike the same packing passes.
  std::vector<StoredTick> calm;
  for (int t = 0; t < 1000; ++t) calm.push_back(PlanTickOf({{30'720u, 10, 1}, {30'720u, 10, 2}}));
  EXPECT_EQ(PlanOfTicks(H100s(2), calm).groups[0].chosen, 0);
}

TEST(RightSize, ComputeAboveTheCeilingOnlyCountsWhereThePlanPutIt) {
  // GPU 1 runs at 95 % alone (over the 80 % ceiling by itself); GPU 2 is empty but for a small
  // idle process. Packing GPU 2 onto GPU 1 adds nothing: not counted. Two GPUs at 50 % are.
  std::vector<StoredTick> ticks;
  for (int t = 0; t < 100; ++t) ticks.push_back(PlanTickOf({{40'960u, 95, 1}, {1024u, 0, 2}}));
  PlanInput in = PlanOfTicks(H100s(2), ticks);
  ASSERT_GE(in.groups[0].chosen, 0);
  EXPECT_EQ(in.groups[0].candidates[0].ComputeOverMs(), 0);
  // Two loads at 30 % SM activity, each at 60 % for 4 % of the time (their p95 is 30 %: they
  // pack), at different times: the sum passes the 80 % ceiling 8 % of the time.
  std::vector<StoredTick> busy;
  for (int t = 0; t < 100; ++t) {
    const uint32_t a = t < 4 ? 600u : 300u, b = t >= 50 && t < 54 ? 600u : 300u;
    busy.push_back(PlanTickOf({{1024u, 50, 1, a}, {1024u, 50, 2, b}}));
  }
  in = PlanOfTicks(H100s(2), busy);
  ASSERT_EQ(in.groups[0].candidates.size(), 1u) << "by peak (p99 60 %) they do not pack";
  const PlanCandidate& c = in.groups[0].candidates[0];
  EXPECT_EQ(c.ComputeOverMs(), 8'000) << "8 s at 90 % summed";
  EXPECT_EQ(c.bins[0].peak_compute_x10, 900u);
  EXPECT_EQ(in.groups[0].chosen, -1) << "8 % of the time over the ceiling, 5 % allowed";
  PlanOptions lenient;
  lenient.compute_over_pct = 10;
  EXPECT_EQ(PlanOfTicks(H100s(2), busy, lenient).groups[0].chosen, 0);
}

TEST(RightSize, MigProfilesOfEachModel) {
  auto names = [](std::string_view model, uint64_t mib) {
    std::string out;
    for (const MigProfile& p : MigProfilesFor(model, mib)) out += (out.empty() ? "" : " ") + p.name;
    return out;
  };
  EXPECT_EQ(names("NVIDIA H100 80GB HBM3", 81'559), "1g.10gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb");
  EXPECT_EQ(names("NVIDIA H200", 143'771), "1g.18gb 2g.35gb 3g.71gb 4g.71gb 7g.141gb");
  EXPECT_EQ(names("NVIDIA A100-SXM4-40GB", 40'960), "1g.5gb 2g.10gb 3g.20gb 4g.20gb 7g.40gb");
  EXPECT_EQ(names("NVIDIA A100-SXM4-80GB", 81'920), "1g.10gb 2g.20gb 3g.40gb 4g.40gb 7g.80gb");
  EXPECT_EQ(names("NVIDIA H100 NVL", 95'830), "1g.12gb 2g.24gb 3g.47gb 4g.47gb 7g.94gb");
  EXPECT_EQ(names("NVIDIA GH200 480GB", 97'871), "1g.12gb 2g.24gb 3g.48gb 4g.48gb 7g.96gb");
  EXPECT_EQ(names("NVIDIA B200", 183'359), "1g.23gb 2g.45gb 3g.90gb 4g.90gb 7g.180gb");
  EXPECT_EQ(names("NVIDIA A30", 24'576), "1g.6gb 2g.12gb 4g.24gb");
  EXPECT_EQ(names("NVIDIA L4", 23'034), "");
  EXPECT_EQ(names("Tesla T4", 15'360), "");
  const std::vector<MigProfile> h100 = MigProfilesFor("NVIDIA H100 80GB HBM3", 81'559);
  EXPECT_EQ(h100[0].usable_mib, 9685u) << "an eighth less the driver's 5 %";
  EXPECT_DOUBLE_EQ(h100[2].PriceShare(), 0.5);
  EXPECT_NEAR(h100[2].ComputeShare(), 3.0 / 7, 1e-12);
}

TEST(RightSize, AWorkloadGetsTheSmallestProfileThatHoldsIt) {
  const GpuRecord gpu = H100s(1)[0];
  auto advise = [&](uint32_t mem, uint32_t compute_x10, uint32_t gpus_at_once, uint32_t peak_mem) {
    WorkloadLoad w;
    w.mem_mib.Add(mem, 99'000);
    w.mem_mib.Add(peak_mem, 1'000);
    w.compute_x10.Add(compute_x10, 100'000);
    w.gpus_at_once.Add(gpus_at_once, 100'000);
    return AdviseWorkload(w, gpu, {});
  };
  // 8 GiB at 15 %: 1g.10gb holds the memory (9,685 MiB usable, 8,716 with headroom), not the
  // compute (1/7 x 80 % = 11.4 %): 2g.20gb.
  WorkloadAdvice a = advise(8192, 150, 1, 8192);
  ASSERT_TRUE(a.profile);
  EXPECT_EQ(a.profile->name, "2g.20gb");
  EXPECT_EQ(a.headroom_mib, a.profile->usable_mib - 8192);
  // At 10 % it is 1g.10gb.
  a = advise(8192, 100, 1, 8192);
  ASSERT_TRUE(a.profile);
  EXPECT_EQ(a.profile->name, "1g.10gb");
  // A peak (1 % of the time, so not the p99) above 1g's memory: never a profile the peak misses.
  a = advise(4096, 50, 1, 12'000);
  ASSERT_TRUE(a.profile);
  EXPECT_EQ(a.profile->name, "2g.20gb");
  // Two GPUs at once: no MIG (no NCCL peer-to-peer between instances), said why.
  a = advise(4096, 50, 2, 4096);
  EXPECT_FALSE(a.profile);
  EXPECT_NE(a.why.find("several GPUs"), std::string::npos) << a.why;
  // A workload on a MIG instance already is not partitioned again.
  GpuRecord instance = gpu;
  instance.mig = MigInstance{};
  WorkloadLoad small;
  small.mem_mib.Add(1024, 1000);
  small.gpus_at_once.Add(1, 1000);
  EXPECT_FALSE(AdviseWorkload(small, instance, {}).profile);
  // 70 GiB: only the whole GPU.
  a = advise(71'680, 300, 1, 71'680);
  EXPECT_FALSE(a.profile);
  EXPECT_NE(a.why.find("no profile"), std::string::npos) << a.why;
}

TEST(RightSize, APercentileNeverUnderstatesNorPassesThePeak) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    LoadHistogram h(64);
    std::vector<std::pair<uint32_t, int64_t>> values;
    int64_t total = 0;
    for (int i = 0; i < 50; ++i) {
      values.emplace_back(static_cast<uint32_t>(rng() % 100'000),
                          1 + static_cast<int64_t>(rng() % 5000));
      h.Add(values.back().first, values.back().second);
      total += values.back().second;
    }
    std::sort(values.begin(), values.end());
    for (double p : {0.5, 0.95, 0.99, 1.0}) {
      // The exact answer: the smallest value with >= p of the time at or under it.
      int64_t seen = 0;
      uint32_t exact = 0;
      for (const auto& [v, ms] : values) {
        seen += ms;
        exact = v;
        if (static_cast<double>(seen) >= static_cast<double>(total) * p) break;
      }
      const uint32_t got = h.Percentile(p);
      EXPECT_GE(got, exact) << "round " << round << " p" << p;
      EXPECT_LE(got, std::max(exact + 63, exact)) << "within a bucket";
      EXPECT_LE(got, h.max());
    }
  }
}

// The cheaper of a MIG profile and a cheaper GPU: a light workload (4 GiB, 5 %) on an H100 at
// $5.00 goes to a T4 at $0.30 (6 % of the price, under 1g.10gb's 12.5 %): 5 % x 989 / 65 TFLOPS
// = 76 % of the T4, under the 80 % ceiling. At 8 % the T4 would need 122 % and the L4 ($0.80,
// 16 %) costs more than 1g.10gb: MIG. A 60 GiB one fits no profile and neither card: none.
TEST(RightSize, ACheaperGpuIsChosenWhenItCostsLessThanTheProfile) {
  const std::vector<GpuRecord> gpus = H100s(3);
  std::vector<StoredTick> ticks;
  for (int t = 0; t < 600; ++t) {
    StoredTick tick = PlanTickOf({{4096u, 5, 1}, {4096u, 8, 2}, {61'440u, 5, 3}});
    for (StoredProcess& p : tick.processes)
      p.sm_util_pct = tick.gpus[p.gpu_pos].get(StoredGpuField::kUtilPct);
    ticks.push_back(tick);
  }
  const PlanInput in = PlanOfTicks(gpus, ticks);
  PlanContext c;
  c.input = &in;
  c.gpus = &gpus;
  for (const GpuRecord& g : gpus) {
    c.report_gpus.push_back({g.id, std::to_string(g.index), 600'000, 30'000});
    c.catalog_model[g.id] = g.name;
    c.attributed_ms[{g.id, g.id}] = 600'000;  // identity g holds GPU g alone
  }
  c.identity_names = {{1, "light"}, {2, "medium"}, {3, "large"}};
  c.known_ms = 3 * 600'000;
  c.skus = {{"NVIDIA H100 80GB HBM3", "H100 SXM 80GB", 80 * 1024, 989, 5'000'000},
            {"Tesla T4", "T4 16GB", 16 * 1024, 65, 300'000},
            {"NVIDIA L4", "L4 24GB", 24 * 1024, 121, 800'000}};
  std::vector<Finding> findings;
  const PlanSummary plan = BuildPlan(c, &findings);
  std::map<std::string, PlanWorkloadRow> rows;
  for (const PlanWorkloadRow& w : plan.workloads) rows[w.name] = w;
  EXPECT_EQ(rows["light"].profile, "T4 16GB");
  EXPECT_EQ(rows["light"].profile_kind, "gpu");
  EXPECT_DOUBLE_EQ(rows["light"].profile_price_share, 0.06);
  EXPECT_EQ(rows["light"].profile_mib, 14'745u) << "90 % of 16 GiB";
  EXPECT_NE(rows["light"].why.find("76.1 %"), std::string::npos) << rows["light"].why;
  EXPECT_EQ(rows["medium"].profile, "1g.10gb");
  EXPECT_EQ(rows["medium"].profile_kind, "mig");
  EXPECT_EQ(rows["large"].profile, "") << rows["large"].why;
  // The finding's per-GPU fractions: 1 - 0.06 of GPU 0's time, 1 - 1/8 of GPU 1's.
  const Finding* right = nullptr;
  for (const Finding& f : findings) right = f.id == kRightSizeFindingId ? &f : right;
  ASSERT_NE(right, nullptr);
  ASSERT_EQ(right->gpu_savings.size(), 2u);
  EXPECT_NEAR(right->gpu_savings[0].fraction, 0.94, 1e-12);
  EXPECT_NEAR(right->gpu_savings[1].fraction, 0.875, 1e-12);
  EXPECT_EQ(right->remediations, (std::vector<std::string>{"mig", "smaller_sku"}));
}

// The plan says when the window's raw ticks were pruned, and when there were none to plan from.
TEST(RightSize, APlanSaysWhatItCouldNotRead) {
  const std::vector<GpuRecord> gpus = H100s(1);
  std::vector<StoredTick> ticks(10, PlanTickOf({{1024u, 10, 1}}));
  PlanInput in = PlanOfTicks(gpus, ticks);
  in.raw_pruned_before_ms = 1'700'000'000'000;
  PlanContext c;
  c.input = &in;
  c.gpus = &gpus;
  std::vector<Finding> findings;
  PlanSummary plan = BuildPlan(c, &findings);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("raw ticks before 2023-11-14T22:13Z were pruned"), std::string::npos)
      << plan.notes[0];
  PlanInput empty;
  c.input = &empty;
  plan = BuildPlan(c, &findings);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("no raw ticks in the window"), std::string::npos);
}

// Generated boxes (tests/support/generated_box.h): the plan through the summary every view
// renders. Every accepted packing replayed clean; the plan's dollars within the waste and the
// combined savings; the groups' and workloads' parts adding up to their lever's to the cent.
TEST(RightSize, AGeneratedBoxsPlanIsSavingsWithinTheWaste) {
  uint64_t boxes = 60;
  if (const char* n = std::getenv("CGOV_LEDGER_BOXES")) boxes = std::strtoull(n, nullptr, 10);
  uint64_t first = 20261129;
  if (const char* seed = std::getenv("CGOV_PLAN_SEED")) first = std::strtoull(seed, nullptr, 10);
  std::printf("plan boxes: seeds %llu to %llu\n", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + boxes - 1));
  int planned = 0;
  for (uint64_t seed = first; seed < first + boxes; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    test_support::Box box = test_support::Generate(seed);
    PlanInput plan;
    PlanProfiler profiler;
    for (const auto& t : box.ticks) profiler.Add(t.ts_ms, t.run, t.tick);
    profiler.Finish(box.end_ms);
    plan.profile = profiler.profile();
    EXPECT_EQ(plan.profile.covered_ms * static_cast<int64_t>(box.in.gpus.size()), box.gpu_ms)
        << "each tick stands for the time the aggregator credits";
    plan.groups = PackGroups(plan.profile, box.in.gpus, plan.options);
    PlanReplay replay(&plan.groups, plan.options);
    for (const auto& t : box.ticks) replay.Add(t.ts_ms, t.run, t.tick);
    replay.Finish(box.end_ms);
    for (const PlanGroup& g : plan.groups) {
      if (g.chosen < 0) continue;
      const PlanCandidate& c = g.candidates[static_cast<size_t>(g.chosen)];
      EXPECT_EQ(c.MemOverMs(), 0);
      EXPECT_LE(c.ComputeOverMs() * 100, c.replay_ms * plan.options.compute_over_pct);
    }
    box.in.plan = plan;
    Result<HistorySummary> r = SummarizeHistory(box.in, HistoryOptions{});
    ASSERT_TRUE(r.ok()) << r.status().message();
    const HistorySummary& s = *r;
    const PlanSummary& p = s.plan;
    ASSERT_TRUE(p.computed);
    ASSERT_TRUE(s.cost.priced);
    const MicroUsd waste = RoundToCent(static_cast<MicroUsd>(
        std::llround(static_cast<double>(s.cost.exact_total) * s.savings.waste_fraction)));
    const MicroUsd utilization = RoundToCent(static_cast<MicroUsd>(
        std::llround(static_cast<double>(s.cost.exact_total) * s.savings.utilization_fraction)));
    EXPECT_LE(p.consolidate_usd, waste);
    EXPECT_LE(p.rightsize_usd, waste);
    EXPECT_LE(p.consolidate_usd, utilization + kMicroPerCent) << "within the combined savings";
    EXPECT_LE(p.rightsize_usd, utilization + kMicroPerCent);
    MicroUsd groups = 0, groups_month = 0, workloads = 0;
    for (const PlanGroupRow& g : p.groups) {
      groups += g.usd;
      groups_month += g.usd_month;
      EXPECT_EQ(g.freed.size() + g.gpus_planned, g.gpus.size()) << g.model;
    }
    for (const PlanWorkloadRow& w : p.workloads) {
      workloads += w.usd;
      if (w.profile.empty()) {
        EXPECT_EQ(w.usd, 0) << w.name;
      } else {
        EXPECT_LE(w.mem_peak_mib, w.profile_mib) << "the peak fits";
        EXPECT_EQ(w.headroom_mib, w.profile_mib - w.mem_p99_mib);
      }
    }
    EXPECT_EQ(groups, p.consolidate_usd);
    EXPECT_EQ(groups_month, p.consolidate_usd_month);
    EXPECT_EQ(workloads, p.rightsize_usd);
    if (p.gpus_planned < p.gpus_now) ++planned;
    // A plan that frees a GPU says so as a finding whose lever is in the combined savings.
    bool lever = false;
    for (const SavingsLever& l : s.savings.levers)
      lever = lever || l.finding_id == kConsolidateFindingId;
    EXPECT_EQ(lever, p.gpus_planned < p.gpus_now);
    if (HasFailure()) break;
  }
  EXPECT_GT(planned, 0) << "some generated boxes free a GPU";
}

}  // namespace
}  // namespace cgov
