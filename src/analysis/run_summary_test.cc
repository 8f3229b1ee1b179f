#include "analysis/run_summary.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

GpuInfo Gpu(unsigned index) {
  GpuInfo g;
  g.index = index;
  g.name = "NVIDIA L4";
  g.memory_total_bytes = 1000;
  return g;
}

TickSample Tick(std::vector<GpuFastSample> fast, std::optional<double> cpu = std::nullopt) {
  TickSample t;
  t.gpu_fast = std::move(fast);
  t.host.cpu_pct = cpu;
  t.host.mem_total_bytes = 100;
  t.host.mem_available_bytes = 75;
  return t;
}

GpuFastSample Fast(uint32_t util, uint64_t used, uint32_t mw, uint32_t temp) {
  GpuFastSample f;
  f.util_gpu_pct = util;
  f.mem_used_bytes = used;
  f.mem_total_bytes = 1000;
  f.power_mw = mw;
  f.temp_c = temp;
  return f;
}

TEST(RunAccumulator, PerGpuAndOverallDistributions) {
  RunAccumulator acc({Gpu(0), Gpu(1)}, 0, 1000);
  acc.AddTick(Tick({Fast(100, 500, 300'000, 70), Fast(0, 0, 50'000, 30)}, std::nullopt), {});
  acc.AddTick(Tick({Fast(80, 500, 250'500, 68), Fast(0, 0, 50'000, 30)}, 12.5), {});
  RunSummary s;
  acc.Finish(2'000'000'000, &s);
  EXPECT_EQ(s.samples, 2u);
  ASSERT_EQ(s.gpus.size(), 2u);
  const auto& util0 = s.gpus[0].metrics[static_cast<size_t>(RunMetric::kGpuUtilPct)];
  ASSERT_TRUE(util0.has_value());
  EXPECT_EQ(util0->min, 80);
  EXPECT_EQ(util0->max, 100);
  EXPECT_DOUBLE_EQ(util0->mean, 90);
  const auto& power0 = s.gpus[0].metrics[static_cast<size_t>(RunMetric::kGpuPowerW)];
  EXPECT_DOUBLE_EQ(power0->mean, 275.25);
  const auto& mem0 = s.gpus[0].metrics[static_cast<size_t>(RunMetric::kGpuMemPct)];
  EXPECT_DOUBLE_EQ(mem0->max, 50);
  const auto& all_util = s.metrics[static_cast<size_t>(RunMetric::kGpuUtilPct)];
  EXPECT_EQ(all_util->count, 4u) << "one value per GPU-sample";
  EXPECT_DOUBLE_EQ(all_util->mean, 45);
  const auto& cpu = s.metrics[static_cast<size_t>(RunMetric::kCpuPct)];
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->count, 1u) << "the first tick had no CPU rate: skipped, not 0";
  EXPECT_DOUBLE_EQ(s.metrics[static_cast<size_t>(RunMetric::kMemPct)]->mean, 25);
  EXPECT_FALSE(s.gpus[0].metrics[static_cast<size_t>(RunMetric::kCpuPct)].has_value());
}

TEST(RunAccumulator, LostGpusAndUnknownFieldsAddNothing) {
  RunAccumulator acc({Gpu(0), Gpu(1)}, 0, 1000);
  GpuFastSample lost;
  lost.lost = true;
  GpuFastSample unknown;  // every field unknown
  acc.AddTick(Tick({unknown, lost}), {});
  RunSummary s;
  acc.Finish(2'000'000'000, &s);
  EXPECT_FALSE(s.gpus[0].metrics[0].has_value());
  EXPECT_TRUE(s.gpus[1].lost);
  EXPECT_FALSE(s.gpus[0].lost);
  EXPECT_FALSE(s.metrics[0].has_value()) << "unknown is not zero";
}

TEST(RunAccumulator, GpusHoldingTheJobsProcessesAreMarkedUsed) {
  RunAccumulator acc({Gpu(0), Gpu(1)}, 0, 1000);
  TickSample t = Tick({Fast(50, 10, 1, 1), Fast(50, 10, 1, 1)});
  t.gpu_slow.resize(2);
  t.gpu_slow[0].processes_known = t.gpu_slow[1].processes_known = true;
  t.gpu_slow[0].processes = {GpuProcess{4242, true, false, 100, 50, 10}};
  t.gpu_slow[1].processes = {GpuProcess{9999, true, false, 100, 50, 10}};
  JobTreeSample job;
  job.pids = {4000, 4242};
  job.rss_bytes = 123;
  acc.AddTick(t, job);
  job.rss_bytes = 99;
  acc.AddTick(Tick({Fast(50, 10, 1, 1), Fast(50, 10, 1, 1)}), job);
  RunSummary s;
  acc.Finish(2'000'000'000, &s);
  EXPECT_TRUE(s.gpus[0].used_by_job);
  EXPECT_FALSE(s.gpus[1].used_by_job) << "pid 9999 is someone else's";
  EXPECT_EQ(s.job_rss_max_bytes, 123u);
}

}  // namespace
}  // namespace cgov
