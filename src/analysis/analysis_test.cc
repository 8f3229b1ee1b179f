// The analysis engine: hand-computed cases and properties over random timelines.
#include <limits>
#include <random>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/cost.h"
#include "analysis/findings.h"
#include "analysis/phases.h"
#include "analysis/pricing.h"
#include "analysis/savings.h"
#include "analysis/timeline.h"
#include "core/money.h"
#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

GpuPoint Point(double util, uint64_t compute_mib = 0) {
  GpuPoint p;
  p.util_pct = util;
  p.compute_memory_bytes = compute_mib << 20;
  return p;
}

ResolvedPrice Priced(double usd) {
  ResolvedPrice p;
  p.per_gpu_hour = static_cast<MicroUsd>(usd * kMicroPerUsd);
  p.source = "--price-per-gpu-hour";
  return p;
}

TEST(Money, ParseFormatRound) {
  EXPECT_EQ(*ParseUsd("8"), 8'000'000);
  EXPECT_EQ(*ParseUsd("$12.29"), 12'290'000);
  EXPECT_EQ(*ParseUsd("0.000125"), 125);
  for (const char* bad : {"", "-1", "1.", ".5", "1.0000001", "eight", "1e3", "1,5"}) {
    EXPECT_FALSE(ParseUsd(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatUsd(80'000'000), "$80.00");
  EXPECT_EQ(FormatUsd(1'234'567'890), "$1,234.57");
  EXPECT_EQ(FormatUsd(400, 4), "$0.0004");
  EXPECT_EQ(RoundToCent(13'333'333), 13'330'000);
  EXPECT_EQ(RoundToCent(13'335'000), 13'340'000);
  EXPECT_EQ(CostOf(8'000'000, 10 * kHourMs), 80'000'000);
}

TEST(Phases, ThresholdsFromTheDesign) {
  PhaseThresholds t;
  EXPECT_EQ(Classify(9.9, 0, t), Phase::kTrulyIdle);
  EXPECT_EQ(Classify(0, 100ull << 20, t), Phase::kTrulyIdle) << "100 MiB is not more than 100 MiB";
  EXPECT_EQ(Classify(0, (100ull << 20) + 1, t), Phase::kIdleHeld);
  EXPECT_EQ(Classify(0, std::nullopt, t), Phase::kTrulyIdle) << "unknown memory is not held";
  EXPECT_EQ(Classify(10, 0, t), Phase::kUnderutilized);
  EXPECT_EQ(Classify(69.9, 0, t), Phase::kUnderutilized);
  EXPECT_EQ(Classify(70, 0, t), Phase::kProductive);
  EXPECT_EQ(Classify(89.9, 0, t), Phase::kProductive);
  EXPECT_EQ(Classify(90, 0, t), Phase::kComputeBound);
}

TEST(Phases, SharesSumToExactlyOneHundredByLargestRemainder) {
  auto s = SharesPct({1, 1, 1, 0, 0});  // 33.33... each
  EXPECT_DOUBLE_EQ(s[0] + s[1] + s[2], 100.0);
  EXPECT_DOUBLE_EQ(s[0], 33.4) << "the first of equal remainders gets the unit";
  EXPECT_DOUBLE_EQ(s[1], 33.3);
  auto zero = SharesPct({0, 0, 0, 0, 0});
  EXPECT_DOUBLE_EQ(zero[0], 0);
}

// The issue's case: $8/GPU-hour, 8 GPUs x 1.25 h, mean utilization 60 %, 200,000 samples.
TEST(Cost, HandComputedCase) {
  UsageAccumulator acc(8, 1000);
  std::vector<GpuPoint> points(8, Point(60));
  const int64_t end = kHourMs + kHourMs / 4;
  for (int64_t t = 0; t < end; t += 1000) acc.Add(t, points, {});
  UsageTotals usage = acc.Finish(end);
  std::vector<ResolvedPrice> prices(8, Priced(8));
  CostBlock cost = ComputeCost(usage, prices, 200'000, "samples");
  ASSERT_TRUE(cost.priced);
  EXPECT_DOUBLE_EQ(cost.gpu_hours, 10);
  EXPECT_DOUBLE_EQ(cost.effective_gpu_hours, 6);
  EXPECT_EQ(cost.total, 80'000'000);
  EXPECT_EQ(FormatUsd(*cost.per_effective_gpu_hour), "$13.33");
  EXPECT_DOUBLE_EQ(*cost.per_unit_usd, 0.0004);
  EXPECT_DOUBLE_EQ(*cost.units_per_gpu_hour, 20'000);
  EXPECT_EQ(cost.waste, 32'000'000) << "40 % of $80";
  EXPECT_DOUBLE_EQ(cost.waste_fraction, 0.4);
  EXPECT_EQ(*cost.hourly, 64'000'000) << "$80 over 1.25 h of wall time";
  EXPECT_EQ(*cost.monthly, *cost.hourly * 720);
  // The rest of docs/analysis.md's worked example.
  std::vector<Finding> findings = Recommend(usage, cost, prices);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "steady_underutilization");
  EXPECT_NEAR(findings[0].savings_fraction, 0.5 * 25 / 85, 1e-12);
  SavingsBlock savings = CombineSavings(findings, cost, usage);
  EXPECT_NEAR(savings.utilization_fraction, 0.147, 0.001);
  EXPECT_EQ(FormatUsd(*savings.combined_usd), "$11.76");
  EXPECT_EQ(SharesPct(usage.PhaseMs())[static_cast<size_t>(Phase::kUnderutilized)], 100.0);
}

TEST(Cost, UnknownPriceStillReportsGpuHours) {
  UsageAccumulator acc(1, 1000);
  acc.Add(0, {Point(50)}, {});
  UsageTotals usage = acc.Finish(1000);
  ResolvedPrice unknown;
  unknown.source = "price unknown: no catalog entry";
  CostBlock cost = ComputeCost(usage, {unknown}, std::nullopt, "");
  EXPECT_FALSE(cost.priced);
  EXPECT_EQ(cost.total, 0);
  EXPECT_DOUBLE_EQ(cost.gpu_hours, 1.0 / 3600);
  EXPECT_EQ(cost.price_source, "price unknown: no catalog entry");
}

TEST(Timeline, GapsAreReportedNeverFilled) {
  UsageAccumulator acc(1, 1000);
  acc.Add(0, {Point(100)}, {});
  acc.Add(1000, {Point(100)}, {});
  acc.Add(10'000, {Point(100)}, {});  // 9 s after the previous tick: 2 s counted, 7 s gap
  UsageTotals u = acc.Finish(10'500);
  EXPECT_EQ(u.gpus[0].KnownMs(), 1000 + 2000 + 500);
  EXPECT_EQ(u.gap_ms, 7000);
  EXPECT_EQ(u.covered_ms, 3500);
}

TEST(Timeline, LostAndUnknownTimeIsHeldButNotClassified) {
  UsageAccumulator acc(2, 1000);
  GpuPoint lost;  // no utilization
  acc.Add(0, {Point(95), lost}, {});
  UsageTotals u = acc.Finish(1000);
  EXPECT_EQ(u.gpus[1].unknown_ms, 1000);
  EXPECT_EQ(u.gpus[1].KnownMs(), 0);
  EXPECT_EQ(u.HeldMs(), 2000);
}

TEST(Timeline, GraphicsOnlyMemoryIsNotIdleHeld) {
  UsageAccumulator acc(1, 1000);
  GpuPoint xorg = Point(0, 0);
  xorg.graphics_only_memory_bytes = 128ull << 20;
  acc.Add(0, {xorg}, {});
  UsageTotals u = acc.Finish(1000);
  EXPECT_EQ(u.gpus[0].phase_ms[static_cast<size_t>(Phase::kTrulyIdle)], 1000);
  EXPECT_EQ(u.gpus[0].graphics_only_ms, 1000);
}

// A timeline of `seconds` ticks where `util(t)` gives each GPU's utilization.
template <typename F>
UsageTotals Play(size_t gpus, int seconds, F util, uint64_t held_mib = 0) {
  UsageAccumulator acc(gpus, 1000);
  for (int t = 0; t < seconds; ++t) {
    std::vector<GpuPoint> points;
    for (size_t g = 0; g < gpus; ++g) points.push_back(Point(util(t, g), held_mib));
    acc.Add(t * 1000, points, {});
  }
  return acc.Finish(seconds * 1000);
}

bool Has(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.id == id) return true;
  }
  return false;
}

TEST(Findings, StarvedLoaderGetsInputPipelineAdviceNotPrecision) {
  UsageTotals u = Play(
      4, 600, [](int t, size_t) { return t % 20 < 14 ? 95.0 : 3.0; }, 40'000);
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(4, Priced(4)), std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  EXPECT_TRUE(Has(f, "input_pipeline_starvation"));
  EXPECT_FALSE(Has(f, "compute_bound_precision"));
  for (const Finding& x : f) {
    for (const std::string& r : x.remediations) {
      EXPECT_NE(std::find(RemediationVocabulary().begin(), RemediationVocabulary().end(), r),
                RemediationVocabulary().end())
          << r;
    }
  }
}

TEST(Findings, ComputeBoundGetsPrecisionAdviceNotLoaderAdvice) {
  UsageTotals u = Play(
      2, 600, [](int, size_t) { return 98.0; }, 60'000);
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(2, Priced(4)), std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  EXPECT_TRUE(Has(f, "compute_bound_precision"));
  EXPECT_FALSE(Has(f, "input_pipeline_starvation"));
  SavingsBlock s = CombineSavings(f, cost, u);
  EXPECT_LE(s.utilization_fraction, cost.waste_fraction + 1e-12) << "capped by the 2 % waste";
}

// Issue 14's four blind spots: each gets the right finding, with savings where waste exists, and
// observes the measured value (not its threshold).
TEST(Findings, SteadyTwentyPercentIsLowUtilizationWithSavings) {
  UsageTotals u = Play(
      1, 600, [](int, size_t) { return 20.0; }, 10'000);
  CostBlock cost = ComputeCost(u, {Priced(4)}, std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  ASSERT_TRUE(Has(f, "steady_underutilization"));
  for (const Finding& x : f) {
    if (x.id != "steady_underutilization") continue;
    EXPECT_DOUBLE_EQ(x.observed, 20) << "the measured mean, not the threshold";
    EXPECT_NE(x.observed, x.threshold);
    EXPECT_GT(x.savings_fraction, 0.3);
    EXPECT_NE(x.recommendation.find("MIG"), std::string::npos) << "far too small: share it";
  }
  EXPECT_GT(CombineSavings(f, cost, u).utilization_fraction, 0);
}

TEST(Findings, RelativeSwingsAreBurstsNotComputeBound) {
  for (double trough : {15.0, 30.0}) {
    UsageTotals u = Play(
        4, 600, [&](int t, size_t) { return t % 20 < 14 ? 95.0 : trough; }, 40'000);
    CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(4, Priced(4)), std::nullopt, "");
    std::vector<Finding> f = Recommend(u, cost, {});
    EXPECT_TRUE(Has(f, "input_pipeline_starvation")) << trough;
    EXPECT_FALSE(Has(f, "compute_bound_precision")) << trough;
    EXPECT_GT(CombineSavings(f, cost, u).utilization_fraction, 0) << trough;
  }
  // A GPU wobbling around 60 % does not swing.
  UsageTotals steady = Play(
      1, 600, [](int t, size_t) { return t % 2 ? 55.0 : 75.0; }, 40'000);
  CostBlock cost = ComputeCost(steady, {Priced(4)}, std::nullopt, "");
  EXPECT_FALSE(Has(Recommend(steady, cost, {}), "input_pipeline_starvation"));
}

TEST(Findings, AGpuThatComputedNothingIsUnusedWithItsDollars) {
  UsageTotals u = Play(
      8, 3600, [](int, size_t g) { return g == 7 ? 0.0 : 95.0; }, 0);
  const std::vector<ResolvedPrice> prices(8, Priced(4));
  CostBlock cost = ComputeCost(u, prices, std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, prices);
  ASSERT_TRUE(Has(f, "unused_gpu"));
  EXPECT_FALSE(Has(f, "gpu_imbalance")) << "the idle GPU is the unused one";
  for (const Finding& x : f) {
    if (x.id != "unused_gpu") continue;
    EXPECT_EQ(x.gpus, std::vector<unsigned>{7});
    EXPECT_NEAR(x.savings_fraction, 1.0 / 8, 1e-3);
    EXPECT_NE(x.recommendation.find("computed nothing for 1.0 h of GPU-time ($4.00"),
              std::string::npos)
        << x.recommendation;
  }
  // A third of a shared box's GPU-time idle between jobs: idle capacity, with savings.
  UsageTotals shared = Play(
      3, 6 * 600,
      [](int t, size_t g) { return (t / 600 + static_cast<int>(g)) % 3 == 0 ? 0.0 : 80.0; }, 0);
  CostBlock shared_cost =
      ComputeCost(shared, std::vector<ResolvedPrice>(3, Priced(4)), std::nullopt, "");
  std::vector<Finding> g = Recommend(shared, shared_cost, {});
  EXPECT_TRUE(Has(g, "idle_capacity"));
  EXPECT_GT(CombineSavings(g, shared_cost, shared).utilization_fraction, 0.1);
}

// Xid counters ride on the samples from 0; the window's count is the largest seen, even from a
// GPU that is lost from then on (Xid 79 is how a GPU gets lost).
TEST(Findings, XidErrorsAreCriticalAndSayWhetherToOpenAHardwareTicket) {
  struct Case {
    uint32_t xid;
    const char* says;
  };
  for (const Case& c : {Case{79, "fallen off the bus"}, Case{13, "graphics engine exception"},
                        Case{777, "Xid 777."}}) {
    UsageAccumulator acc(2, 1000);
    for (int t = 0; t < 60; ++t) {
      std::vector<GpuPoint> points = {Point(t < 30 ? 90.0 : 0.0, 1000), Point(50, 1000)};
      points[0].xid_errors = t < 20 ? 0 : (t < 25 ? 1 : 2);
      if (t >= 20) points[0].last_xid = c.xid;
      if (t >= 30) points[0].util_pct.reset();  // lost: nothing else known
      points[1].xid_errors = 0;
      acc.Add(t * 1000, points, {});
    }
    UsageTotals u = acc.Finish(60'000);
    EXPECT_EQ(u.gpus[0].xid_errors, 2u);
    EXPECT_EQ(u.gpus[0].first_xid_ms, 20'000);
    EXPECT_EQ(u.gpus[1].xid_errors, 0u);
    CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(2, Priced(4)), std::nullopt, "");
    std::vector<Finding> f = Recommend(u, cost, {}, {}, {"0", "1"});
    ASSERT_FALSE(f.empty());
    const Finding& x = f.front();
    EXPECT_EQ(x.id, "xid_errors") << "critical, sorted first";
    EXPECT_EQ(x.severity, Severity::kCritical);
    EXPECT_EQ(x.observed, 2);
    EXPECT_EQ(x.gpus, std::vector<unsigned>{0});
    EXPECT_EQ(x.window_start_ms, 20'000);
    EXPECT_NE(x.recommendation.find(c.says), std::string::npos) << x.recommendation;
    const bool hardware = c.xid == 79;
    EXPECT_EQ(x.recommendation.find("hardware ticket with the GPU's serial") != std::string::npos,
              hardware)
        << x.recommendation;
    EXPECT_EQ(x.savings_fraction, 0);
  }
  UsageTotals quiet = Play(1, 60, [](int, size_t) { return 50.0; });
  CostBlock cost = ComputeCost(quiet, {Priced(4)}, std::nullopt, "");
  EXPECT_FALSE(Has(Recommend(quiet, cost, {}), "xid_errors"));
}

// 10 minutes at 98 % utilization.gpu with GPM readings `sm` and `tensor` (nullopt: no GPM).
UsageTotals BoundWithGpm(std::optional<double> sm, std::optional<double> tensor) {
  UsageAccumulator acc(1, 1000);
  for (int t = 0; t < 600; ++t) {
    GpuPoint p = Point(98, 60'000);
    p.sm_active_pct = sm;
    p.tensor_active_pct = tensor;
    acc.Add(t * 1000, {p}, {});
  }
  return acc.Finish(600'000);
}

const Finding* ById(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(Findings, GpmTensorActivityDecidesThePrecisionAdvice) {
  auto findings = [](UsageTotals u) {
    CostBlock cost = ComputeCost(u, {Priced(4)}, std::nullopt, "");
    return Recommend(u, cost, {});
  };
  // Tensor pipes nearly idle: the advice cites them.
  std::vector<Finding> idle_tensor = findings(BoundWithGpm(92, 2));
  const Finding* f = ById(idle_tensor, "compute_bound_precision");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->recommendation.find("Tensor-pipe activity was 2.0 %"), std::string::npos)
      << f->recommendation;
  EXPECT_EQ(ById(idle_tensor, "low_sm_activity"), nullptr) << "92 % of SMs busy";
  // Tensor pipes busy: mixed precision has nothing to give.
  EXPECT_EQ(ById(findings(BoundWithGpm(92, 55)), "compute_bound_precision"), nullptr);
  // No GPM: the advice stands on utilization alone, as before.
  std::vector<Finding> no_gpm = findings(BoundWithGpm(std::nullopt, std::nullopt));
  f = ById(no_gpm, "compute_bound_precision");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->recommendation.find("Tensor-pipe"), std::string::npos);
  EXPECT_EQ(ById(no_gpm, "low_sm_activity"), nullptr);
}

TEST(Findings, FullUtilizationWithFewActiveSmsIsItsOwnFinding) {
  UsageTotals u = BoundWithGpm(25, 40);
  CostBlock cost = ComputeCost(u, {Priced(4)}, std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  const Finding* low = ById(f, "low_sm_activity");
  ASSERT_NE(low, nullptr);
  EXPECT_EQ(low->severity, Severity::kWarning);
  EXPECT_DOUBLE_EQ(low->observed, 25);
  EXPECT_EQ(low->threshold, 50);
  EXPECT_EQ(low->gpus, std::vector<unsigned>{0});
  EXPECT_NE(low->recommendation.find("only 25 % of the SMs work"), std::string::npos);
  EXPECT_EQ(low->remediations, (std::vector<std::string>{"larger_batch", "cuda_mps", "mig"}));
  EXPECT_NEAR(low->savings_fraction, 0.5 * 0.75, 1e-9) << "all compute-bound, 75 % of SMs idle";
  SavingsBlock s = CombineSavings(f, cost, u);
  EXPECT_LE(s.utilization_fraction, cost.waste_fraction + 1e-12);
}

TEST(Findings, IdleHeldTailWithItsDurationAndDollars) {
  // Busy for 10 min, then 5 min with memory held and nothing running.
  UsageTotals u = Play(
      1, 900, [](int t, size_t) { return t < 600 ? 90.0 : 0.0; }, 20'000);
  CostBlock cost = ComputeCost(u, {Priced(3.6)}, std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  ASSERT_TRUE(Has(f, "idle_tail"));
  ASSERT_TRUE(Has(f, "idle_held_gpu"));
  for (const Finding& x : f) {
    if (x.id == "idle_tail") {
      EXPECT_DOUBLE_EQ(x.observed, 300);
      EXPECT_EQ(x.window_start_ms, 600'000);
    }
  }
  EXPECT_EQ(cost.phase_cost[static_cast<size_t>(Phase::kIdleHeld)], 300'000)
      << "300 s at $3.60/h is $0.30";
}

// Regression (issue 43, 6): idle_held_gpu fired on its ">= 300 GPU-seconds" branch but showed
// 2.083 % against ">= 5 %". Each finding's observed value satisfies its own threshold as printed.
TEST(Findings, TheObservedValueMeetsTheThresholdThatFired) {
  // 8 GPUs for an hour; one held idle for 10 min: 600 GPU-seconds, 2.1 % of the GPU-time.
  UsageTotals u = Play(
      8, 3600, [](int t, size_t g) { return g == 0 && t >= 3000 ? 0.0 : 80.0; }, 20'000);
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(8, Priced(2)), std::nullopt, "");
  const std::vector<Finding> f = Recommend(u, cost, {});
  const Finding* held = nullptr;
  for (const Finding& x : f) {
    if (x.id == "idle_held_gpu") held = &x;
  }
  ASSERT_NE(held, nullptr);
  EXPECT_DOUBLE_EQ(held->observed, 600);
  EXPECT_EQ(held->threshold, 300);
  EXPECT_EQ(held->threshold_text, ">= 300 GPU-seconds (under 5 % of GPU-time)");
  EXPECT_EQ(held->observed_unit, "GPU-seconds (2.1 % of GPU-time)");
  // Over the findings of many shapes: a ">=" threshold is met by what is shown beside it.
  for (int idle_s : {0, 200, 400, 1200, 3000}) {
    UsageTotals v = Play(
        4, 3600,
        [&](int t, size_t g) {
          return g == 1 && t >= 3600 - idle_s ? 0.0 : 60.0 + 10 * static_cast<double>(g);
        },
        20'000);
    CostBlock c = ComputeCost(v, std::vector<ResolvedPrice>(4, Priced(2)), std::nullopt, "");
    for (const Finding& x : Recommend(v, c, {})) {
      if (x.threshold_text.rfind(">=", 0) == 0) {
        EXPECT_GE(x.observed + 1e-9, x.threshold) << x.id << " idle " << idle_s;
      }
    }
  }
}

// Regression (issue 43, 7): a history report said "Sampled every 0 ms" (its usage had no interval).
TEST(Findings, TheSamplingIntervalIsSaidOnlyWhenKnown) {
  UsageTotals u = Play(2, 3600, [](int, size_t) { return 45.0; });
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(2, Priced(2)), std::nullopt, "");
  auto steady = [&](int64_t interval_ms) {
    u.interval_ms = interval_ms;
    for (const Finding& x : Recommend(u, cost, {})) {
      if (x.id == "steady_underutilization") return x.recommendation;
    }
    return std::string("(no finding)");
  };
  EXPECT_NE(steady(30'000).find("Sampled every 30 s: stalls shorter"), std::string::npos)
      << steady(30'000);
  const std::string unknown = steady(0);
  EXPECT_EQ(unknown.find("every 0 ms"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("Stalls shorter than the sampling interval look steady"),
            std::string::npos)
      << unknown;
}

// Issue 57, 10: idle_capacity ("GPUs that worked at other times") fired on a GPU at 0 %
// throughout: held by a process 40 % of the time, free the rest. It never worked: not idle
// capacity (the held part is idle-held's).
TEST(Findings, IdleCapacityIsOnlyOfGpusThatWorkedAtOtherTimes) {
  UsageAccumulator acc(1, 1000);
  for (int t = 0; t < 3600; ++t) acc.Add(t * 1000, {Point(0, t < 2160 ? 0 : 50'000)}, {});
  UsageTotals u = acc.Finish(3600 * 1000);
  CostBlock cost = ComputeCost(u, {Priced(2)}, std::nullopt, "");
  EXPECT_FALSE(Has(Recommend(u, cost, {}), "idle_capacity"));
  // A GPU that works before and after the same idle stretch has idle capacity.
  UsageAccumulator worked(1, 1000);
  for (int t = 0; t < 3600; ++t) {
    const bool busy = t < 1000 || t >= 2800;
    worked.Add(t * 1000, {Point(busy ? 90 : 0, busy ? 50'000 : 0)}, {});
  }
  UsageTotals w = worked.Finish(3600 * 1000);
  EXPECT_TRUE(
      Has(Recommend(w, ComputeCost(w, {Priced(2)}, std::nullopt, ""), {}), "idle_capacity"));
}

// Issue 57, 10: the imbalance finding said 87.5 points where the table's means (to 0.1) differed
// by 87.3. Its observed value is the difference of the means as shown.
TEST(Findings, ImbalanceIsTheDifferenceOfTheMeansAsShown) {
  // GPU 0: 95.04 % (shown 95.0); GPU 1: 7.56 % (shown 7.6), memory held: idle, not unused.
  UsageTotals u = Play(
      2, 25, [](int t, size_t g) { return g == 0 ? (t == 0 ? 96.0 : 95.0) : (t < 11 ? 7.0 : 8.0); },
      50'000);
  ASSERT_NEAR(*u.gpus[0].MeanUtilPct(), 95.04, 1e-9);
  ASSERT_NEAR(*u.gpus[1].MeanUtilPct(), 7.56, 1e-9);
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(2, Priced(2)), std::nullopt, "");
  bool found = false;
  for (const Finding& f : Recommend(u, cost, {})) {
    if (f.id != "gpu_imbalance") continue;
    found = true;
    EXPECT_NEAR(f.observed, 95.0 - 7.6, 1e-9) << "not 87.48, shown as 87.5";
  }
  EXPECT_TRUE(found);
}

// Issue 57, 10: cpu_contention's observed share counted GPUs the job never used (an unused GPU's
// whole time is "under 70 % while the CPU was saturated"). It is a share of the used GPUs' time.
TEST(Findings, HostBoundSharesAreOfTheGpusTheWorkRanOn) {
  UsageTotals u = Play(2, 600, [](int, size_t g) { return g == 0 ? 30.0 : 0.0; });
  ASSERT_GT(u.gpus[1].KnownMs(), 0);
  u.gpus[0].cpu_other_ms = u.gpus[0].KnownMs() * 3 / 10;  // 30 % of the used GPU's time
  u.gpus[1].cpu_other_ms = u.gpus[1].KnownMs();           // all of the unused one's
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(2, Priced(2)), std::nullopt, "");
  bool found = false;
  for (const Finding& f : Recommend(u, cost, {})) {
    if (f.id != "cpu_contention") continue;
    found = true;
    EXPECT_NEAR(f.observed, 30, 1e-6) << "not (30 % + 100 %) / 2";
    EXPECT_EQ(f.gpus, std::vector<unsigned>{0});
  }
  EXPECT_TRUE(found);
}

// Issue 57, 12: with a price of the user's own, the spot finding applied the catalog's discount
// without saying so.
TEST(Findings, TheSpotFindingSaysWhenItsDiscountIsTheCatalogsOnTheUsersPrice) {
  UsageTotals u = Play(
      1, 600, [](int, size_t) { return 60.0; }, 40'000);
  PriceOptions mine;
  mine.price_per_gpu_hour = 3'000'000;
  for (bool given : {false, true}) {
    Result<ResolvedPrice> p =
        ResolvePrice(given ? mine : PriceOptions{}, "NVIDIA H100 80GB HBM3", BuiltinCatalog());
    ASSERT_TRUE(p.ok());
    CostBlock cost = ComputeCost(u, {*p}, std::nullopt, "");
    bool found = false;
    for (const Finding& f : Recommend(u, cost, {*p})) {
      if (f.id != "spot_instances") continue;
      found = true;
      EXPECT_EQ(f.savings_reasoning.find("--price-per-gpu-hour") != std::string::npos, given)
          << f.savings_reasoning;
    }
    EXPECT_TRUE(found) << given;
  }
}

// Properties over random timelines.
TEST(Properties, RandomTimelines) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> util(0, 100);
  std::uniform_int_distribution<int> step(200, 5000), gpus_d(1, 8), ticks_d(1, 300);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t gpus = static_cast<size_t>(gpus_d(rng));
    UsageAccumulator acc(gpus, 1000);
    int64_t t = 0;
    const int ticks = ticks_d(rng);
    for (int k = 0; k < ticks; ++k) {
      std::vector<GpuPoint> points;
      for (size_t g = 0; g < gpus; ++g) {
        GpuPoint p = Point(std::round(util(rng)), rng() % 2 ? 50'000 : 0);
        if (rng() % 20 == 0) p.util_pct.reset();
        points.push_back(p);
      }
      acc.Add(t, points, {});
      t += step(rng);
    }
    const int64_t end = t;
    UsageTotals u = acc.Finish(end);
    auto shares = SharesPct(u.PhaseMs());
    double sum = 0;
    for (double s : shares) sum += s;
    if (u.KnownMs() > 0) {
      EXPECT_NEAR(sum, 100.0, 1e-9) << "trial " << trial;
    }
    EXPECT_LE(u.covered_ms + u.gap_ms, end) << "a gap never gains GPU-seconds";
    EXPECT_LE(u.HeldMs(), static_cast<int64_t>(gpus) * end);
    CostBlock cost =
        ComputeCost(u, std::vector<ResolvedPrice>(gpus, Priced(2.49)), std::nullopt, "");
    if (cost.hourly) {
      EXPECT_EQ(*cost.monthly, *cost.hourly * 720) << "to the cent, exactly";
      EXPECT_EQ(*cost.yearly, *cost.hourly * 8760);
      EXPECT_EQ(*cost.hourly % 10'000, 0) << "hourly is rounded to the cent";
    }
    // Cents are allocated once: every figure is whole cents, the phases add up to the total.
    MicroUsd phases = 0, waste = 0;
    for (size_t p = 0; p < kPhaseCount; ++p) {
      EXPECT_EQ(cost.phase_cost[p] % 10'000, 0) << "trial " << trial;
      phases += cost.phase_cost[p];
      waste += cost.phase_waste[p];
    }
    EXPECT_EQ(cost.total % 10'000, 0);
    EXPECT_EQ(waste, cost.waste) << "trial " << trial;
    if (u.UnknownMs() == 0) {
      EXPECT_EQ(phases, cost.total) << "trial " << trial;
    }
    EXPECT_LE(phases, cost.total) << "trial " << trial;
    std::vector<Finding> f = Recommend(u, cost, {});
    // Coverage: waste is never met with silence (a lever, or the "no lever found" line).
    if (cost.waste_fraction >= 0.10) {
      EXPECT_FALSE(f.empty()) << "trial " << trial;
    }
    SavingsBlock s = CombineSavings(f, cost, u);
    EXPECT_LE(s.combined_fraction, 1.0);
    EXPECT_GE(s.combined_fraction, 0.0);
    EXPECT_LE(s.utilization_fraction, s.waste_fraction + 1e-12) << "never above the waste";
    EXPECT_LE(cost.waste, cost.total);
  }
}

// Issue 57, 1: an H100 at 95 % beside an unused L4 printed "$1.08 wasted" but "Estimated
// recoverable: 50.0 % of the spend"; the unused-GPU lever is worth the L4's dollars alone.
TEST(Savings, ALeverClaimsTheDollarsOfTheGpusItActsOn) {
  UsageTotals u = Play(2, 3600, [](int, size_t g) { return g == 0 ? 95.0 : 0.0; });
  CostBlock cost = ComputeCost(u, {Priced(5.435), Priced(0.8048)}, std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  SavingsBlock s = CombineSavings(f, cost, u);
  SpendFractionsOntoFindings(s, &f);
  const double l4_share = 0.8048 / (5.435 + 0.8048);
  EXPECT_TRUE(s.by_spend);
  EXPECT_NEAR(s.utilization_fraction, l4_share, 1e-3) << "the L4's dollars, not half the spend";
  EXPECT_NEAR(s.waste_fraction, l4_share + 0.05 * (1 - l4_share), 1e-3) << "waste of the spend";
  ASSERT_TRUE(s.combined_usd.has_value());
  EXPECT_LE(*s.combined_usd, cost.waste)
      << FormatUsd(*s.combined_usd) << " > " << FormatUsd(cost.waste);
  for (const Finding& x : f) {
    if (x.id == "unused_gpu") {
      EXPECT_NEAR(x.savings_fraction, l4_share, 1e-3);
    }
  }
}

// Found by the generated boxes through the real binaries (FleetE2E.Generated...): a short run
// whose exact spend ($0.0451) rounds up to $0.05 claimed its savings share of the rounded total
// ($0.04 of savings beside $0.03 of waste), and summary.json's total_micro_usd, the figure the CI
// gate compares, was the rounded total. Both are the exact micro-dollars now.
TEST(Savings, AShortRunsSavingsAreAShareOfItsExactSpend) {
  UsageTotals u = Play(2, 17, [](int, size_t g) { return g == 0 ? 0.0 : 100.0; });
  CostBlock cost = ComputeCost(u, {Priced(7.2), Priced(2.35)}, std::nullopt, "");
  // 17 s x $7.20 + 17 s x $2.35
  ASSERT_EQ(cost.exact_total, CostOf(7'200'000, 17'000) + CostOf(2'350'000, 17'000));
  EXPECT_EQ(cost.total, 50'000) << "shown: to the cent";
  EXPECT_EQ(cost.waste, 30'000) << "the unused GPU's $0.034";
  std::vector<Finding> f = Recommend(u, cost, {});
  SavingsBlock s = CombineSavings(f, cost, u);
  ASSERT_TRUE(s.combined_usd.has_value());
  EXPECT_LE(*s.combined_usd, cost.waste)
      << FormatUsd(*s.combined_usd) << " > " << FormatUsd(cost.waste);
}

// The same rule on generated boxes: GPUs at random prices, random timelines; no GPU's levers
// claim more than its own wasted dollars, and all of them not more than the box's.
TEST(Properties, SavingsNeverExceedTheWastedDollarsPerGpuOrOverall) {
  const unsigned seed = 20261128;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> util(0, 100), price_d(0.3, 12.5);
  std::uniform_int_distribution<int> gpus_d(1, 8), ticks_d(20, 300);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t gpus = static_cast<size_t>(gpus_d(rng));
    std::vector<int> mode(gpus);  // 0 busy, 1 idle, 2 bursty, 3 random
    for (int& m : mode) m = static_cast<int>(rng() % 4);
    UsageAccumulator acc(gpus, 1000);
    int64_t t = 0;
    const int ticks = ticks_d(rng);
    for (int k = 0; k < ticks; ++k) {
      std::vector<GpuPoint> points;
      for (size_t g = 0; g < gpus; ++g) {
        const double u = mode[g] == 0   ? 96
                         : mode[g] == 1 ? 0
                         : mode[g] == 2 ? (k % 6 < 3 ? 95 : 3)
                                        : std::round(util(rng));
        points.push_back(Point(u, rng() % 2 ? 50'000 : 0));
      }
      acc.Add(t, points, {});
      t += 1000;
    }
    UsageTotals u = acc.Finish(t);
    std::vector<ResolvedPrice> prices;
    for (size_t g = 0; g < gpus; ++g)
      prices.push_back(Priced(std::round(price_d(rng) * 100) / 100));
    CostBlock cost = ComputeCost(u, prices, std::nullopt, "");
    std::vector<Finding> f = Recommend(u, cost, {});
    SavingsBlock s = CombineSavings(f, cost, u);
    double waste_usd = 0;
    for (const GpuSavings& row : s.gpus) {
      const GpuUsage& g = u.gpus[row.gpu];
      int64_t waste_x100 = 0;
      for (int64_t w : g.waste_ms_x100) waste_x100 += w;
      const double gpu_waste =
          static_cast<double>(CostOf(*prices[row.gpu].per_gpu_hour, waste_x100)) / 100;
      const double claimed = row.Contribution() * static_cast<double>(cost.exact_total);
      EXPECT_LE(claimed, gpu_waste + 1)
          << "seed " << seed << " trial " << trial << " GPU " << row.gpu;
    }
    for (size_t g = 0; g < gpus; ++g) {
      int64_t waste_x100 = 0;
      for (int64_t w : u.gpus[g].waste_ms_x100) waste_x100 += w;
      waste_usd += static_cast<double>(CostOf(*prices[g].per_gpu_hour, waste_x100)) / 100;
    }
    EXPECT_LE(s.utilization_fraction * static_cast<double>(cost.exact_total),
              waste_usd + static_cast<double>(gpus))
        << "seed " << seed << " trial " << trial;
    EXPECT_LE(s.combined_fraction, 1.0);
  }
}

// A hand-made lever (no per-GPU data: it acts on the whole spend) and a $100 priced cost.
Finding Lever(const char* id, Axis axis, double fraction) {
  Finding f;
  f.id = id;
  f.axis = axis;
  f.savings_fraction = fraction;
  return f;
}

CostBlock HundredDollars(double waste_fraction) {
  CostBlock cost;
  cost.priced = true;
  cost.total = cost.exact_total = 100'000'000;
  cost.waste_fraction = waste_fraction;
  return cost;
}

TEST(Savings, ArithmeticEveryStep) {
  const std::vector<Finding> f = {Lever("a", Axis::kUtilization, 0.3),
                                  Lever("b", Axis::kUtilization, 0.4),
                                  Lever("spot", Axis::kRate, 0.6)};
  SavingsBlock s = CombineSavings(f, HundredDollars(0.5), UsageTotals{});
  EXPECT_DOUBLE_EQ(s.utilization_uncapped, 1 - 0.7 * 0.6);  // 0.58, not 0.7
  EXPECT_DOUBLE_EQ(s.utilization_fraction, 0.5) << "capped by the measured waste";
  EXPECT_DOUBLE_EQ(s.rate_fraction, 0.6);
  EXPECT_DOUBLE_EQ(s.combined_fraction, 1 - 0.5 * 0.4);
  EXPECT_EQ(*s.combined_usd, 80'000'000);
}

// Regression (issue 43, 5): the phases' costs, each rounded to the cent on its own, added up to
// a cent more than the total ($7,304.65 against $7,304.64).
TEST(Cost, PhaseCentsAddUpToTheTotal) {
  // One GPU at $3.60/h ($0.001 a second), 10,006 s in each of three phases: each phase is
  // $10.006, $10.01 when rounded alone ($30.03 for the three), against a $30.018 total ($30.02).
  UsageAccumulator acc(1, 1000);
  for (int t = 0; t < 3 * 10'006; ++t) {
    const double util = t < 10'006 ? 0.0 : t < 2 * 10'006 ? 50.0 : 95.0;
    acc.Add(static_cast<int64_t>(t) * 1000, {Point(util)}, {});
  }
  UsageTotals u = acc.Finish(3 * 10'006 * 1000);
  CostBlock cost = ComputeCost(u, {Priced(3.6)}, std::nullopt, "");
  MicroUsd phases = 0;
  for (MicroUsd p : cost.phase_cost) phases += p;
  EXPECT_EQ(FormatUsd(cost.total), "$30.02");
  EXPECT_EQ(phases, cost.total) << FormatUsd(phases);
  EXPECT_EQ(cost.phase_cost[static_cast<size_t>(Phase::kTrulyIdle)], 10'010'000);
}

TEST(Money, AllocateCentsByLargestRemainder) {
  // Three thirds of a cent-rounded dollar: 33.33 + 33.33 + 33.34, the extra cent to the first
  // of the largest remainders.
  EXPECT_EQ(AllocateCents({333'333, 333'333, 333'334}, 1'000'000),
            (std::vector<int64_t>{33, 33, 34}));
  EXPECT_EQ(AllocateCents({5'000, 5'000}, 10'000), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(AllocateCents({}, 0), std::vector<int64_t>{});
  // Floors that pass the total: a cent is taken back from the last of the smallest remainders.
  EXPECT_EQ(AllocateCents({20'000, 20'000}, 30'000), (std::vector<int64_t>{2, 1}));
  // A total of cents rounded elsewhere, more cents above the floors than there are parts (the
  // ledger's generated box 20261763: idle days adding up to $0.07 of an $0.08 idle line).
  EXPECT_EQ(AllocateCents({34'900, 34'900}, 80'000), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(AllocateCents({34'900}, 80'000), (std::vector<int64_t>{8}));
  EXPECT_EQ(AllocateCents({90'000, 90'000}, 120'000), (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(AllocateCents({0, 90'000}, 20'000), (std::vector<int64_t>{0, 2}));
}

TEST(Savings, TheSeedExampleStillHolds) {
  const std::vector<Finding> f = {Lever("steady_underutilization", Axis::kUtilization, 0.4),
                                  Lever("spot_instances", Axis::kRate, 0.6)};
  SavingsBlock s = CombineSavings(f, HundredDollars(0.6), UsageTotals{});
  EXPECT_DOUBLE_EQ(s.combined_fraction, 0.76) << "1 - (1 - 0.4)(1 - 0.6)";
  EXPECT_EQ(*s.combined_usd, 76'000'000);
}

// Regression (issue 43, 1): make run's job. GPU 6 was claimed by idle_held_gpu and gpu_imbalance
// together, so the combined savings exceeded what GPUs 6, 7 and the bursty GPUs' troughs hold.
TEST(Savings, OneGpuIsNeverClaimedByTwoLevers) {
  UsageAccumulator acc(8, 1000);
  for (int t = 0; t < 600; ++t) {
    std::vector<GpuPoint> points;
    for (size_t g = 0; g < 6; ++g) points.push_back(Point(t % 20 < 14 ? 95.0 : 3.0, 40'000));
    points.push_back(Point(0, 20'000));  // GPU 6: a notebook holding memory, computing nothing
    points.push_back(Point(0));          // GPU 7: nobody
    acc.Add(t * 1000, points, {});
  }
  UsageTotals u = acc.Finish(600'000);
  CostBlock cost = ComputeCost(u, std::vector<ResolvedPrice>(8, Priced(4)), std::nullopt, "");
  std::vector<Finding> f = Recommend(u, cost, {});
  for (const char* id :
       {"idle_held_gpu", "gpu_imbalance", "unused_gpu", "input_pipeline_starvation"}) {
    ASSERT_TRUE(Has(f, id)) << id;
  }
  SavingsBlock s = CombineSavings(f, cost, u);
  const double troughs = 0.7 * 0.3 * 0.97;  // of each bursty GPU: 70 % of its troughs' waste
  EXPECT_NEAR(s.utilization_fraction, 1.0 / 8 + 1.0 / 8 + 6.0 / 8 * troughs, 1e-9)
      << "GPU 6 once, GPU 7 once, the troughs of GPUs 0-5";
  double added = 0;
  for (const GpuSavings& g : s.gpus) {
    EXPECT_LE(g.fraction, g.waste_fraction + 1e-12) << "GPU " << g.name;
    EXPECT_DOUBLE_EQ(g.weight, 1.0 / 8) << "GPU " << g.name;
    added += g.Contribution();
    if (g.gpu == 6) {
      ASSERT_EQ(g.levers.size(), 2u) << "idle-held and imbalance both act on GPU 6";
      EXPECT_DOUBLE_EQ(g.uncapped, 1 - (1 - 1.0) * (1 - 0.8));
      EXPECT_DOUBLE_EQ(g.fraction, 1.0);
    }
  }
  ASSERT_EQ(s.gpus.size(), 8u);
  EXPECT_NEAR(added, s.utilization_fraction, 1e-12) << "the GPUs' steps add up to the total";
  EXPECT_LE(s.utilization_fraction, cost.waste_fraction + 1e-12);
  // Each finding's own fraction is its per-GPU fractions weighted by the GPUs' time.
  for (const Finding& x : f) {
    if (x.axis != Axis::kUtilization) continue;
    double weighted = 0;
    for (const GpuShare& g : x.gpu_savings) weighted += g.fraction / 8;
    EXPECT_NEAR(weighted, x.savings_fraction, 1e-9) << x.id;
  }
}

TEST(Pricing, ResolutionOrderAndUnknown) {
  const PriceCatalog& catalog = BuiltinCatalog();
  ASSERT_FALSE(catalog.gpu_models.empty()) << "data/prices.json must parse";
  PriceOptions explicit_price{8'000'000, "", false};
  EXPECT_EQ(ResolvePrice(explicit_price, "NVIDIA H100 80GB HBM3", catalog)->per_gpu_hour,
            8'000'000);
  PriceOptions instance{std::nullopt, "p4d.24xlarge", false};
  auto p4d = ResolvePrice(instance, "NVIDIA H100 80GB HBM3", catalog);
  ASSERT_TRUE(p4d.ok());
  EXPECT_EQ(p4d->per_gpu_hour, 2'744'705) << "$21.957642 / 8";
  EXPECT_NE(p4d->source.find("p4d.24xlarge (aws us-east-1, 8 GPUs;"), std::string::npos)
      << p4d->source;
  // The default is the reference: the median of six providers' lowest H100 SXM prices
  // ($2.69 RunPod, $3.85 Nebius, $3.99 Lambda, $6.88 AWS, $10.9791 GCP, $12.29 Azure).
  auto model = ResolvePrice({}, "NVIDIA H100 80GB HBM3", catalog);
  EXPECT_EQ(model->per_gpu_hour, 5'435'000) << "($3.99 + $6.88) / 2";
  EXPECT_EQ(model->source.rfind("reference price: H100 SXM 80GB, median of 6 providers' "
                                "on-demand list prices ($2.69–$12.29 per GPU-hour, as of ",
                                0),
            0u)
      << model->source;
  auto unknown = ResolvePrice({}, "NVIDIA Fake GPU", catalog);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->per_gpu_hour.has_value()) << "never a silent default";
  EXPECT_NE(unknown->source.find("price unknown"), std::string::npos);
  auto spot = ResolvePrice({std::nullopt, "", true}, "NVIDIA H100 80GB HBM3", catalog);
  // Regression (issue 43, 2): the spot price was GCP's listed $6.571, above the $5.435 on-demand
  // reference. GCP's discount (1 - 6.571 / 10.9791 = 40.15 %) now applies to the reference.
  EXPECT_EQ(spot->per_gpu_hour, 3'252'852) << "$5.435 x 6.571 / 10.9791";
  EXPECT_LT(*spot->per_gpu_hour, *model->per_gpu_hour) << "never a spot price above on-demand";
  EXPECT_EQ(spot->on_demand, model->per_gpu_hour) << "compared with the same reference";
  EXPECT_NE(spot->source.find("reference price (spot): H100 SXM 80GB, the on-demand reference "
                              "$5.4350 (median of 6 providers) less 40.1 %, the spot discount of "
                              "gcp ($6.5710 spot against $10.9791 on-demand"),
            std::string::npos)
      << spot->source;
  auto no_spot = ResolvePrice({std::nullopt, "", true}, "NVIDIA L4", catalog);
  EXPECT_FALSE(no_spot->per_gpu_hour) << "no provider lists a fixed L4 spot price";
  auto typo = ResolvePrice({std::nullopt, "p5.48xlarg", false}, "x", catalog);
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("p5.48xlarge"), std::string::npos) << "lists known ones";
  // The short form a metric label carries: a few words, never the prose above.
  EXPECT_EQ(ResolvePrice(explicit_price, "NVIDIA H100 80GB HBM3", catalog)->label,
            "--price-per-gpu-hour");
  EXPECT_EQ(p4d->label, "instance-type p4d.24xlarge");
  EXPECT_EQ(model->label, "catalog H100 SXM 80GB");
  EXPECT_EQ(spot->label, "catalog H100 SXM 80GB (spot)");
  EXPECT_EQ(unknown->label, "unknown");
  EXPECT_EQ(no_spot->label, "unknown");
  ResolvedPrice mig = ShareOfPrice(*model, 3.0 / 7, "MIG 3g.40gb");
  EXPECT_EQ(mig.Label(), "catalog H100 SXM 80GB, MIG 3g.40gb at 42.9 %");
  EXPECT_EQ(ShareOfPrice(*model, 0, "MIG 1g.10gb").Label(), "unknown");
}

// Issue 11: the shipped catalog is dated, sourced and multi-provider.
TEST(Pricing, TheShippedCatalogIsSourcedAndDated) {
  const PriceCatalog& catalog = BuiltinCatalog();
  std::set<std::string> providers;
  for (const GpuModelPrice& m : catalog.gpu_models) {
    for (const CatalogOffer& o : m.offers) {
      providers.insert(o.provider);
      EXPECT_FALSE(o.price.source.empty()) << m.label;
      EXPECT_EQ(o.price.as_of.size(), 10u) << m.label << ": YYYY-MM-DD";
      EXPECT_TRUE(o.price.on_demand || o.price.spot) << m.label << " " << o.provider;
    }
    if (m.on_demand.median) {
      EXPECT_LE(m.on_demand.low, *m.on_demand.median) << m.label;
      EXPECT_GE(m.on_demand.high, *m.on_demand.median) << m.label;
    }
  }
  EXPECT_GE(providers.size(), 6u);
  for (const char* p : {"aws", "gcp", "azure"}) EXPECT_TRUE(providers.contains(p)) << p;
}

TEST(Pricing, ReferenceIsTheMedianOfEachProvidersLowestPrice) {
  auto offer = [](std::string provider, double usd) {
    CatalogOffer o;
    o.provider = std::move(provider);
    o.price.on_demand = static_cast<MicroUsd>(usd * kMicroPerUsd);
    o.price.as_of = "2026-01-0" + std::to_string(static_cast<int>(usd));
    return o;
  };
  // b's dearer offer does not count; four providers: the mean of the middle two.
  ReferencePrice r = ReferenceOf(
      {offer("a", 1), offer("b", 9), offer("b", 2), offer("c", 4), offer("d", 8)}, false);
  ASSERT_TRUE(r.median);
  EXPECT_EQ(*r.median, 3'000'000);
  EXPECT_EQ(r.providers, 4);
  EXPECT_EQ(r.low, 1'000'000);
  EXPECT_EQ(r.high, 8'000'000);
  EXPECT_EQ(r.oldest_as_of, "2026-01-01");
  EXPECT_EQ(r.newest_as_of, "2026-01-08");
  EXPECT_EQ(*ReferenceOf({offer("a", 1), offer("c", 4), offer("d", 8)}, false).median, 4'000'000);
  EXPECT_FALSE(ReferenceOf({offer("a", 1)}, true).median) << "no spot price listed";
}

TEST(Pricing, SpotIsTheProvidersDiscountOnTheReference) {
  auto offer = [](const char* provider, double on_demand, std::optional<double> spot) {
    CatalogOffer o;
    o.provider = provider;
    o.price.on_demand = static_cast<MicroUsd>(on_demand * kMicroPerUsd);
    if (spot) o.price.spot = static_cast<MicroUsd>(*spot * kMicroPerUsd);
    o.price.as_of = "2026-01-01";
    return o;
  };
  // Cheap providers list no spot; the dear one's spot is above the cheap on-demand prices.
  const std::vector<CatalogOffer> offers = {offer("a", 2, std::nullopt),
                                            offer("b", 3, std::nullopt), offer("c", 10, 6),
                                            offer("d", 8, 2)};
  const ReferencePrice on_demand = ReferenceOf(offers, false);
  ASSERT_EQ(*on_demand.median, 5'500'000);
  const ReferencePrice spot = SpotReferenceOf(offers, on_demand);
  ASSERT_TRUE(spot.median);
  EXPECT_EQ(spot.providers, 2);
  EXPECT_DOUBLE_EQ(spot.discount, (0.4 + 0.75) / 2) << "the median of c's 40 % and d's 75 %";
  EXPECT_EQ(*spot.median, 2'337'500) << "$5.50 less 57.5 %";
  EXPECT_EQ(spot.low, 1'375'000);
  EXPECT_EQ(spot.high, 3'300'000);
  EXPECT_LT(spot.high, *on_demand.median);
  // A "spot" price at or above its own on-demand price is no discount: no spot reference.
  EXPECT_FALSE(SpotReferenceOf({offer("a", 2, 2), offer("b", 3, 4)},
                               ReferenceOf({offer("a", 2, 2), offer("b", 3, 4)}, false))
                   .median);
}

// Issue 11 (model matching): a catalog `match` is a whole word of the NVML name, the longest one
// wins, and memory tells apart what the name does not. The names are what nvidia-smi prints.
TEST(Pricing, ResolvesTheNamesNvmlReportsToTheRightModel) {
  const PriceCatalog& catalog = BuiltinCatalog();
  const std::vector<std::pair<std::string, std::string>> table = {
      {"NVIDIA H100 80GB HBM3", "H100 SXM 80GB"},
      {"NVIDIA H100 PCIe", "H100 PCIe 80GB"},
      {"NVIDIA H100 NVL", "H100 NVL 94GB"},
      {"NVIDIA H200", "H200 141GB"},
      {"NVIDIA H200 NVL", "H200 NVL"},
      {"NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"},
      {"NVIDIA A100-SXM4-40GB", "A100 40GB"},
      {"NVIDIA A100-PCIE-40GB", "A100 40GB"},
      {"NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"},
      {"NVIDIA L40S", "L40S 48GB"},
      {"NVIDIA L4", "L4 24GB"},
      {"NVIDIA A10G", "A10G 24GB"},
      {"NVIDIA A10", "A10 24GB"},
      {"Tesla T4", "T4 16GB"},
      {"Tesla V100-SXM2-32GB", "V100"},
      {"NVIDIA GeForce RTX 4090", "RTX 4090 24GB"},
      {"NVIDIA RTX A6000", "RTX A6000 48GB"},
      {"NVIDIA B200", "B200 180GB"}};
  for (const auto& [name, label] : table) {
    const GpuModelPrice* m = FindModel(catalog, name, std::nullopt, nullptr);
    ASSERT_NE(m, nullptr) << name;
    EXPECT_EQ(m->label, label) << name;
  }
  for (const char* name : {"NVIDIA GH200 480GB", "NVIDIA A1000", "NVIDIA Fake GPU", ""}) {
    EXPECT_EQ(FindModel(catalog, name, std::nullopt, nullptr), nullptr) << name;
  }
  // A name without its memory size: the memory decides, and without it nothing is guessed.
  EXPECT_EQ(FindModel(catalog, "NVIDIA A100", 81920, nullptr)->label, "A100 SXM 80GB");
  EXPECT_EQ(FindModel(catalog, "NVIDIA A100", 40960, nullptr)->label, "A100 40GB");
  std::string why;
  EXPECT_EQ(FindModel(catalog, "NVIDIA A100", std::nullopt, &why), nullptr);
  EXPECT_NE(why.find("its memory size is unknown"), std::string::npos) << why;
  auto ambiguous = ResolvePrice({}, "NVIDIA A100", catalog);
  EXPECT_FALSE(ambiguous->per_gpu_hour);
  EXPECT_NE(ambiguous->source.find("matches both"), std::string::npos) << ambiguous->source;
  // H100s report 79.6 GiB of their 80 GB; an L40S 45 of 48: both agree with the catalog.
  EXPECT_EQ(FindModel(catalog, "NVIDIA H100 80GB HBM3", 81559, nullptr)->label, "H100 SXM 80GB");
  EXPECT_EQ(FindModel(catalog, "NVIDIA L40S", 46068, nullptr)->label, "L40S 48GB");
  // The 80GB and 40GB A100s are priced differently (the 80GB one got the 40GB price before).
  EXPECT_NE(ResolvePrice({}, "NVIDIA A100-SXM4-80GB", catalog)->per_gpu_hour,
            ResolvePrice({}, "NVIDIA A100-SXM4-40GB", catalog)->per_gpu_hour);
  EXPECT_TRUE(ContainsWord("NVIDIA A100-SXM4-80GB", "A100"));
  EXPECT_FALSE(ContainsWord("NVIDIA A1000", "A100"));
  EXPECT_FALSE(ContainsWord("NVIDIA L40S", "L4"));
  // A version-1 catalog (one price per model) still reads, and its longest match wins too.
  auto parsed = ParsePriceCatalog(
      R"({"schema_version":1,"instance_types":[],"gpu_models":[
          {"model":"H100","match":["H100"],"on_demand_usd_per_gpu_hour":3,
           "spot_usd_per_gpu_hour":null,"source":"s","as_of":"d"},
          {"model":"H100 NVL","match":["H100 NVL"],"on_demand_usd_per_gpu_hour":2,
           "spot_usd_per_gpu_hour":null,"source":"s","as_of":"d"}]})",
      "t.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(ResolvePrice({}, "NVIDIA H100 NVL", *parsed)->per_gpu_hour, 2'000'000);
  EXPECT_EQ(ResolvePrice({}, "NVIDIA H100 80GB HBM3", *parsed)->per_gpu_hour, 3'000'000);
}

// Issue 57, 5: with a custom catalog, the spot explanation named the first offer listing a spot
// price (here a's, at no discount) rather than the offer the discount came from (b's).
TEST(Pricing, TheSpotExplanationNamesTheOfferItsDiscountCameFrom) {
  auto parsed = ParsePriceCatalog(
      R"({"schema_version":2,"gpu_models":[{"model":"X","match":["X"],"offers":[
          {"provider":"alpha","region":"r","gpus":1,"on_demand_usd_per_hour":2,
           "spot_usd_per_hour":2,"source":"alpha's list","as_of":"2026-01-01"},
          {"provider":"beta","region":"r","gpus":1,"on_demand_usd_per_hour":3,
           "spot_usd_per_hour":1.5,"source":"beta's list","as_of":"2026-01-02"}]}]})",
      "c.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  PriceOptions spot;
  spot.spot = true;
  Result<ResolvedPrice> p = ResolvePrice(spot, "NVIDIA X", *parsed);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NE(p->source.find("the spot discount of beta ($1.50 spot against $3.00 on-demand; "
                           "beta's list"),
            std::string::npos)
      << p->source;
  EXPECT_EQ(p->source.find("alpha"), std::string::npos) << p->source;
}

TEST(Pricing, Version2ErrorsNameTheOffer) {
  auto bad = ParsePriceCatalog(
      R"({"schema_version":2,"gpu_models":[{"model":"X","match":["X"],"offers":[
          {"provider":"p","region":"r","gpus":0,"on_demand_usd_per_hour":1,
           "spot_usd_per_hour":null,"source":"s","as_of":"d"}]}]})",
      "p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "p.json: gpu_models[0].offers[0].gpus: must be a whole number from 1 to 1000000");
  auto version = ParsePriceCatalog(R"({"schema_version":3})", "p.json");
  EXPECT_NE(version.status().message().find("reads versions 1 and 2"), std::string::npos);
}

// A MIG instance costs its share of its parent's price, looked up by the parent's name (the
// instance's own name, "... MIG 3g.40gb", is in no catalog row of its own).
TEST(Pricing, MigInstancesCostTheirShareOfTheirGpu) {
  const PriceCatalog& catalog = BuiltinCatalog();
  MigInstance mig;
  mig.profile = "3g.40gb";
  mig.parent_name = "NVIDIA H100 80GB HBM3";
  mig.price_share = 0.5;
  auto part = ResolveUnitPrice({}, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", mig, catalog);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->per_gpu_hour, 5'435'000 / 2);
  EXPECT_EQ(part->on_demand, 5'435'000 / 2);
  EXPECT_EQ(part->part, "MIG 3g.40gb at 50.0 %");
  EXPECT_EQ(part->Describe().rfind("MIG 3g.40gb at 50.0 % of reference price", 0), 0u)
      << part->Describe();
  auto given = ResolveUnitPrice({10'000'000, "", false}, "x", mig, catalog);
  EXPECT_EQ(given->per_gpu_hour, 5'000'000) << "an explicit price is the whole GPU's too";
  mig.price_share = 0;
  auto unknown = ResolveUnitPrice({}, "x", mig, catalog);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->per_gpu_hour) << "an unknown share is unpriced, never free";
  EXPECT_NE(unknown->source.find("share of its GPU is unknown"), std::string::npos);
  EXPECT_EQ(ResolveUnitPrice({}, "NVIDIA H100 80GB HBM3", std::nullopt, catalog)->per_gpu_hour,
            5'435'000)
      << "a whole GPU as before";
}

TEST(Cost, PartsOfAGpuAreListedUnderTheirSource) {
  UsageAccumulator acc(3, 1000);
  acc.Add(0, {Point(50), Point(50), Point(50)}, {});
  acc.Add(1000, {Point(50), Point(50), Point(50)}, {});
  UsageTotals usage = acc.Finish(2000);
  ResolvedPrice whole{10'000'000, 10'000'000, std::nullopt, false, "list", "", "list"};
  ResolvedPrice half = ShareOfPrice(whole, 0.5, "MIG 3g.40gb");
  ResolvedPrice quarter = ShareOfPrice(whole, 0.25, "MIG 2g.20gb");
  CostBlock cost = ComputeCost(usage, {whole, half, quarter}, std::nullopt, "");
  ASSERT_TRUE(cost.priced);
  const int64_t held = usage.gpus[0].HeldMs();
  ASSERT_GT(held, 0);
  EXPECT_EQ(cost.total, RoundToCent(CostOf(10'000'000, held) + CostOf(5'000'000, held) +
                                    CostOf(2'500'000, held)));
  EXPECT_FALSE(cost.price_per_gpu_hour) << "three prices: no single one";
  EXPECT_EQ(cost.price_source,
            "list (MIG instances at their share of the GPU's memory: MIG 2g.20gb at 25.0 %, MIG "
            "3g.40gb at 50.0 %)");
}

// Issue 21 item 14: a catalog price of 9.3e12 gave negative costs, 1e12 a wrong total.
TEST(Money, PricesAreBoundedAndCostsSaturateInsteadOfWrapping) {
  auto big = ParseUsd("1000000000");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("at most $999,999,999.999999"), std::string::npos)
      << big.status().message();
  EXPECT_EQ(*ParseUsd("999999999.999999"), kMaxPriceMicroUsd);
  EXPECT_EQ(*ParseUsd("0008"), 8'000'000) << "leading zeros are not digits of size";
  auto catalog = ParsePriceCatalog(
      R"({"schema_version":1,"instance_types":[],"gpu_models":[{"model":"X","match":["X"],
          "on_demand_usd_per_gpu_hour":9.3e12,"spot_usd_per_gpu_hour":null,"source":"s",
          "as_of":"2026-01-01"}]})",
      "hostile.json");
  ASSERT_FALSE(catalog.ok());
  EXPECT_NE(catalog.status().message().find("gpu_models[0].on_demand_usd_per_gpu_hour"),
            std::string::npos)
      << catalog.status().message();
  const MicroUsd max = std::numeric_limits<MicroUsd>::max();
  EXPECT_EQ(CostOf(kMaxPriceMicroUsd, std::numeric_limits<int64_t>::max()), max);
  EXPECT_EQ(AddUsd(max - 1, 5), max);
  EXPECT_EQ(AddUsd(2, 3), 5);
  UsageAccumulator acc(2, 1000);
  acc.Add(0, {Point(50), Point(50)}, {});
  UsageTotals usage = acc.Finish(std::numeric_limits<int64_t>::max() / 4);
  ResolvedPrice p{kMaxPriceMicroUsd, kMaxPriceMicroUsd, std::nullopt, false, "max", "", "max"};
  CostBlock cost = ComputeCost(usage, {p, p}, std::nullopt, "");
  EXPECT_GT(cost.total, 0) << "saturated, never wrapped negative";
  EXPECT_GE(cost.waste, 0);
  ASSERT_TRUE(cost.hourly && cost.yearly);
  EXPECT_GT(*cost.yearly, 0) << "the projections saturate too";
  EXPECT_EQ(MulUsd(max / 2, 3), max);
  EXPECT_EQ(RoundToCent(max), max / 10'000 * 10'000);
  EXPECT_EQ(*Divide(max, 1e-9), max);
}

TEST(Pricing, CatalogErrorsNameTheField) {
  auto bad = ParsePriceCatalog(
      R"({"schema_version":1,"instance_types":[],"gpu_models":[{"model":"X","match":["X"],
          "on_demand_usd_per_gpu_hour":-1,"spot_usd_per_gpu_hour":null,"source":"s","as_of":"d"}]})",
      "prices.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "prices.json: gpu_models[0].on_demand_usd_per_gpu_hour: must be a number of dollars "
            "from 0 to 999999999.999999 per GPU-hour, or null");
  // Found by fuzz/price_catalog_fuzz: the JSON parser's error quoted the file's raw bytes (an
  // escape sequence reached the terminal).
  auto raw = ParsePriceCatalog("{\"instance_types\":[{\"name\":\"\xff\x1b[2J\"}]}", "p.json");
  ASSERT_FALSE(raw.ok());
  EXPECT_TRUE(IsSafeText(raw.status().message())) << raw.status().message();
  EXPECT_THAT(raw.status().message(), ::testing::HasSubstr("p.json: not valid JSON: "));
}

}  // namespace
}  // namespace cgov
