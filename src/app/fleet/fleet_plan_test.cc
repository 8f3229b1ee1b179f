// The fleet's right-size plan on the PromQuery seam: what it asks (range queries at the step,
// the memory's highest and the compute's mean per step), the step's bounds, and a known plan
// from known series; MIG instances and unknown GPUs are left out, hostile values ignored.
#include "app/fleet/fleet_plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/time_format.h"
#include "fakes/fake_prom_query.h"

namespace cgov {
namespace {

const int64_t kPlanFrom = *ParseTimestampMs("2026-11-16T10:00:00Z");
const int64_t kPlanTo = *ParseTimestampMs("2026-11-16T11:00:00Z");

TEST(FleetPlan, TheStepKeepsAWindowAndAFleetWithinTheirPoints) {
  EXPECT_EQ(FleetPlanStepMs(kPlanFrom, kPlanFrom + 600'000, 4), 1000) << "10 min: 1 s";
  EXPECT_EQ(FleetPlanStepMs(0, 7 * 86'400'000LL, 8), 61'000) << "7 d: 10,000 steps at most";
  EXPECT_EQ(FleetPlanStepMs(0, 7 * 86'400'000LL, 1000), 605'000) << "1,000 GPUs: 1 M points";
  EXPECT_EQ(FleetPlanStepMs(0, 1, 0), 1000);
}

TEST(FleetPlan, KnownSeriesGiveTheKnownPlan) {
  HistoryInput fleet;
  for (uint32_t g = 0; g < 4; ++g) {
    GpuRecord r;
    r.id = g + 1;
    r.uuid = "GPU-" + std::to_string(g);
    r.host = "a";
    r.index = g;
    r.name = "NVIDIA H100 80GB HBM3";
    fleet.gpus.push_back(r);
  }
  GpuRecord mig = fleet.gpus[0];
  mig.id = 5;
  mig.mig = MigInstance{};
  fleet.gpus.push_back(mig);
  // GPU 0: 60 GiB, 95 % / 5 % by turns; GPU 1: 20 GiB idle; GPU 2: 0.5 GiB (the driver) idle;
  // GPU 3: 30 GiB at 45 %. A host the fleet does not know, a MIG instance and a NaN: ignored.
  const std::vector<double> mem_gib = {60, 20, 0.5, 30};
  const std::vector<double> util = {0.95, 0, 0, 0.45};
  FakePromQuery fake([&](const PromRequest& r) {
    std::vector<PromSeries> out;
    auto labels = [](const std::string& host, int g, const std::string& instance = "") {
      std::vector<std::pair<std::string, std::string>> l = {
          {"Hostname", host}, {"UUID", "GPU-" + std::to_string(g)}, {"modelName", "x"}};
      if (!instance.empty()) l.emplace_back("GPU_I_ID", instance);
      return l;
    };
    if (r.step_s == 0) {  // the memory totals
      for (int g = 0; g < 4; ++g)
        out.push_back(Series(labels("a", g), {{r.time_s, 81'559 * 1048576.0}}));
      return Result<std::vector<PromSeries>>(out);
    }
    if (r.expr.find("sm_active") != std::string::npos) return Result<std::vector<PromSeries>>(out);
    const bool memory = r.expr.find("memory_used") != std::string::npos;
    for (int g = 0; g < 4; ++g) {
      std::vector<std::pair<double, double>> points;
      int k = 0;
      for (double t = r.start_s; t <= r.end_s + 1e-6; t += r.step_s, ++k) {
        const double u = g == 0 && k % 2 ? 0.05 : util[static_cast<size_t>(g)];
        points.emplace_back(t, memory ? mem_gib[static_cast<size_t>(g)] * 1073741824.0 : u);
      }
      if (g == 3) points[5].second = std::nan("");
      if (g == 3) points[6].second = 1e300;  // no measurement: left out, never converted
      out.push_back(Series(labels("a", g), points));
    }
    out.push_back(Series(labels("elsewhere", 0), {{r.start_s, 1e15}}));
    out.push_back(Series(labels("a", 0, "1"), {{r.start_s, 1e15}}));
    return Result<std::vector<PromSeries>>(out);
  });
  Result<PlanInput> in = LoadFleetPlan(fake, fleet, kPlanFrom, kPlanTo, {});
  ASSERT_TRUE(in.ok()) << in.status().message();
  const std::vector<PromRequest> asked = fake.requests();
  ASSERT_EQ(asked.size(), 4u);
  EXPECT_EQ(asked[0].expr,
            "max by (Hostname, UUID, GPU_I_ID, modelName) (max_over_time("
            "cgov_gpu_memory_used_bytes[1000ms]))");
  EXPECT_EQ(asked[2].expr,
            "avg by (Hostname, UUID, GPU_I_ID, modelName) (avg_over_time("
            "cgov_gpu_utilization_ratio[1000ms]))");
  EXPECT_EQ(asked[0].step_s, 1.0);
  EXPECT_EQ(asked[0].start_s, static_cast<double>(kPlanFrom) / 1000 + 1);
  EXPECT_EQ(in->profile.covered_ms, 3'600'000) << "one step a point, the hour covered";
  ASSERT_EQ(in->groups.size(), 1u) << "the MIG instance is not moved";
  const PlanGroup& g = in->groups[0];
  EXPECT_EQ(g.gpu_ids, (std::vector<uint32_t>{1, 2, 3, 4}));
  ASSERT_GE(g.chosen, 0);
  const PlanCandidate& c = g.candidates[static_cast<size_t>(g.chosen)];
  ASSERT_EQ(c.bins.size(), 2u);
  EXPECT_EQ(c.bins[0].sources, (std::vector<uint32_t>{1, 3})) << "60 GiB takes the idle 0.5";
  EXPECT_EQ(c.bins[1].sources, (std::vector<uint32_t>{4, 2})) << "30 GiB takes the idle 20";
  EXPECT_EQ(c.MemOverMs(), 0);
  EXPECT_EQ(in->profile.gpus.at(1).compute_x10.max(), 950u);
  EXPECT_NE(in->source_note.find("1 s step"), std::string::npos) << in->source_note;
  EXPECT_TRUE(in->profile.workloads.empty()) << "no per-process memory in Prometheus";
}

// A week at a 61 s step from a start off the second: every one of the 9,914 points is matched to
// its step (steps counted as start + k x step, as Prometheus evaluates them), none lost to drift.
TEST(FleetPlan, AWeeksStepsMatchEveryPoint) {
  HistoryInput fleet;
  GpuRecord r;
  r.id = 1;
  r.uuid = "GPU-0";
  r.host = "a";
  r.name = "NVIDIA H100 80GB HBM3";
  fleet.gpus.push_back(r);
  const int64_t from = kPlanFrom + 123, to = from + 7 * 86'400'000LL;
  int64_t points = 0;
  FakePromQuery fake([&](const PromRequest& q) {
    std::vector<PromSeries> out;
    const std::vector<std::pair<std::string, std::string>> labels = {{"Hostname", "a"},
                                                                     {"UUID", "GPU-0"}};
    if (q.step_s == 0) {
      out.push_back(Series(labels, {{q.time_s, 81'559 * 1048576.0}}));
    } else if (q.expr.find("memory_used") != std::string::npos) {
      std::vector<std::pair<double, double>> p;
      for (int64_t k = 0; q.start_s + static_cast<double>(k) * q.step_s <= q.end_s; ++k) {
        p.emplace_back(q.start_s + static_cast<double>(k) * q.step_s, 1073741824.0);
      }
      points = static_cast<int64_t>(p.size());
      out.push_back(Series(labels, p));
    }
    return Result<std::vector<PromSeries>>(out);
  });
  Result<PlanInput> in = LoadFleetPlan(fake, fleet, from, to, {});
  ASSERT_TRUE(in.ok()) << in.status().message();
  EXPECT_EQ(points, 9'914);
  EXPECT_EQ(in->profile.gpus.at(1).mem_mib.ms(), 9'914 * 61'000) << "every point in its step";
}

}  // namespace
}  // namespace cgov
