#include "analysis/run_compare.h"

#include <gtest/gtest.h>

#include "analysis/run_showback.h"

namespace cgov {
namespace {

RunDigest ARun(double usd, std::optional<double> work = std::nullopt,
               Tags tags = {{"project", "v"}}) {
  RunDigest r;
  r.path = "run";
  r.tags = std::move(tags);
  r.exit_code = 0;
  r.gpu_hours = usd / 2;  // priced at $2/GPU-hour
  r.effective_gpu_hours = r.gpu_hours / 2;
  r.total_usd = usd;
  r.waste_usd = usd / 2;
  r.waste_pct = 50;
  if (work) {
    r.work = work;
    r.unit = "samples";
    r.cost_per_unit_usd = usd / *work;
  }
  r.phase_share_pct = {50, 0, 0, 50, 0};
  return r;
}

TEST(CompareRuns, PerUnitWhenEveryRunHasWorkInOneUnit) {
  auto c = CompareRuns({ARun(10, 1000)}, ARun(15, 1000), 20.0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->figure, CompareFigure::kCostPerUnit);
  EXPECT_EQ(c->figure_name, "cost per sample");
  EXPECT_DOUBLE_EQ(c->baseline, 0.01);
  EXPECT_DOUBLE_EQ(*c->change_pct, 50);
  EXPECT_TRUE(c->regressed);
  EXPECT_EQ(c->verdict,
            "regression: cost per sample from $0.0100 to $0.0150 (+50.0 %), more than 20 %");
  // The same dollars for twice the work is cheaper per sample: no regression.
  auto cheaper = CompareRuns({ARun(10, 1000)}, ARun(15, 2000), 20.0);
  EXPECT_FALSE(cheaper->regressed);
  EXPECT_DOUBLE_EQ(*cheaper->change_pct, -25);
}

TEST(CompareRuns, PerRunWithoutWorkAndGpuHoursWithoutPrice) {
  auto c = CompareRuns({ARun(10, 1000)}, ARun(11), std::nullopt);
  EXPECT_EQ(c->figure, CompareFigure::kCostPerRun) << "work on one side only: per run";
  EXPECT_FALSE(c->regressed) << "no limit, no gate";
  EXPECT_EQ(c->verdict, "cost per run from $10.00 to $11.00 (+10.0 %)");
  RunDigest unpriced = ARun(12);
  unpriced.total_usd.reset();
  auto hours = CompareRuns({ARun(10)}, unpriced, 10.0);
  EXPECT_EQ(hours->figure, CompareFigure::kGpuHoursPerRun);
  EXPECT_EQ(hours->figure_key, "gpu_hours");
  EXPECT_DOUBLE_EQ(hours->current, 6);
  EXPECT_TRUE(hours->regressed);
}

TEST(CompareRuns, SeveralBaselinesNeedTheRiseToLeaveTheirSpread) {
  // Baselines 10, 12, 14: median 12, spread (14 - 10) / 12 = 33 %.
  std::vector<RunDigest> base = {ARun(10), ARun(14), ARun(12)};
  auto inside = CompareRuns(base, ARun(13.5), 10.0);
  EXPECT_DOUBLE_EQ(inside->baseline, 12);
  EXPECT_NEAR(*inside->spread_pct, 33.333, 1e-3);
  EXPECT_NEAR(*inside->change_pct, 12.5, 1e-9);
  EXPECT_FALSE(inside->regressed) << "+12.5 % but below the highest baseline (14)";
  EXPECT_NE(inside->verdict.find("within the run-to-run spread"), std::string::npos);
  auto beyond = CompareRuns(base, ARun(14.5), 10.0);
  EXPECT_TRUE(beyond->regressed);
  auto small = CompareRuns(base, ARun(14.5), 30.0);
  EXPECT_FALSE(small->regressed) << "+20.8 % is under the 30 % limit";
}

TEST(CompareRuns, FindingsNewAndGoneTagsAndNoBaseline) {
  RunDigest before = ARun(10), now = ARun(10, std::nullopt, {{"project", "v"}, {"branch", "x"}});
  before.findings = {{"unused_gpu", Severity::kWarning, "Unused", "", ""},
                     {"idle_held_gpu", Severity::kCritical, "Held", "", ""}};
  now.findings = {{"idle_held_gpu", Severity::kCritical, "Held", "", ""},
                  {"memory_pressure", Severity::kInfo, "Mem", "", ""}};
  auto c = CompareRuns({before}, now, std::nullopt);
  ASSERT_EQ(c->findings_new.size(), 1u);
  EXPECT_EQ(c->findings_new[0].id, "memory_pressure");
  ASSERT_EQ(c->findings_gone.size(), 1u);
  EXPECT_EQ(c->findings_gone[0].id, "unused_gpu");
  EXPECT_TRUE(c->notes.empty()) << "a branch tag is the point of a baseline";
  RunDigest other = ARun(10, std::nullopt, {{"project", "w"}});
  EXPECT_EQ(CompareRuns({other}, now, std::nullopt)->notes.size(), 1u);
  EXPECT_FALSE(CompareRuns({}, now, 10.0).ok());
  // 0 -> 0: no change can be measured against nothing (the header's contract). This read the
  // empty optional's storage, 0 by chance at -O2, garbage at -O0 (issue 44's test build).
  EXPECT_FALSE(CompareRuns({ARun(0)}, ARun(0), 10.0)->change_pct.has_value()) << "0 -> 0";
}

// Regression (issue 43, 10): the same 3 s job at 2.9 s and 3.1 s on one GPU at $18/h read
// "$0.01 -> $0.02 (+100 %)" (cents compared) and failed the gate.
TEST(CompareRuns, UnroundedFiguresAndANoiseFloorOfOneSample) {
  auto job = [](double seconds, double total_shown) {
    RunDigest r = ARun(0);
    r.gpu_hours = seconds / 3600;
    r.total_usd = total_shown;  // summary.json's cents
    r.price_per_gpu_hour_usd = 18;
    r.interval_s = 1;
    r.gpu_count = 1;
    return r;
  };
  auto c = CompareRuns({job(2.9, 0.01)}, job(3.1, 0.02), 5.0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->figure, CompareFigure::kCostPerRun);
  EXPECT_NEAR(*c->change_pct, 100.0 * 0.2 / 2.9, 1e-9) << "+6.9 %, not +100 %";
  EXPECT_DOUBLE_EQ(c->noise_floor, 18.0 / 3600) << "one second of one GPU at $18/h";
  EXPECT_FALSE(c->regressed);
  EXPECT_EQ(c->verdict,
            "within the noise floor: cost per run from $0.0145 to $0.0155 (+6.9 %), a rise of at "
            "most one sample interval of every GPU ($0.0050)");
  // Beyond the floor, the same rule still gates: 3 s -> 9 s.
  auto slower = CompareRuns({job(2.9, 0.01)}, job(9, 0.05), 5.0);
  EXPECT_TRUE(slower->regressed) << slower->verdict;
}

// Issue 57, 2: a run of GPUs at two prices has no one price, so the gate compared the cents
// summary.json shows: $0.0052 -> $0.0139 read "+0.0 %" and passed. It gates on micro-dollars.
TEST(CompareRuns, ARunOfSeveralPricesGatesOnItsMicroDollarsNotItsCents) {
  auto job = [](int64_t micro) {
    RunDigest r = ARun(0);
    r.gpu_hours = 0.01;
    r.total_usd = 0.01;  // both round to a cent
    r.total_micro_usd = micro;
    r.price_per_gpu_hour_usd.reset();  // two prices: none is the run's
    return r;
  };
  auto c = CompareRuns({job(5'200)}, job(13'900), 10.0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->figure, CompareFigure::kCostPerRun);
  EXPECT_NEAR(*c->change_pct, 100.0 * (13'900 - 5'200) / 5'200, 1e-9);
  EXPECT_TRUE(c->regressed) << c->verdict;
}

TEST(CompareRuns, UnitCostsBelowACentShowPerMillion) {
  EXPECT_EQ(FormatUnitCost(0.00002468), "$24.68/M");
  EXPECT_EQ(FormatUnitCost(0.0123), "$0.0123");
}

TEST(AggregateRuns, GroupsAddUpToTheTotalInCents) {
  std::vector<RunDigest> runs;
  for (int i = 0; i < 50; ++i) {
    RunDigest r = ARun(0.01 * (i + 1) + 0.333, 100.0 * (i + 1),
                       {{"project", i % 3 == 0   ? "a"
                                    : i % 3 == 1 ? "b"
                                                 : "c"}});
    if (i == 7) r.tags.clear();
    if (i == 9) r.exit_code = 1;
    if (i % 10 == 0) r.findings = {{"unused_gpu", Severity::kWarning, "Unused", "", ""}};
    runs.push_back(r);
  }
  const RunShowback s = AggregateRuns(runs, "project");
  ASSERT_EQ(s.rows.size(), 4u);
  int64_t cents = 0, total_runs = 0;
  double hours = 0;
  for (const RunGroupRow& row : s.rows) {
    cents += row.cents;
    total_runs += row.runs;
    hours += row.gpu_hours;
  }
  EXPECT_EQ(cents, s.total.cents);
  EXPECT_EQ(total_runs, 50);
  EXPECT_NEAR(hours, s.total.gpu_hours, 1e-9);
  EXPECT_EQ(s.total.failed_runs, 1);
  EXPECT_EQ(s.rows.back().key, "(untagged)") << "the cheapest group";
  ASSERT_EQ(s.findings.size(), 1u);
  EXPECT_EQ(s.findings[0].runs, 5);
  ASSERT_TRUE(s.total.cost_per_unit_usd.has_value());
  EXPECT_NEAR(*s.total.cost_per_unit_usd, static_cast<double>(s.total.cents) / 100 / *s.total.work,
              1e-12);
  EXPECT_NEAR(s.total.WastePct(), 50, 1e-9);
}

}  // namespace
}  // namespace cgov
