#include "app/run/run_history.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "fakes/fake_file_reader.h"

namespace cgov {
namespace {

TEST(RunIdentity, NamedByTheRunsTags) {
  IdentityRecord r =
      RunIdentity({{"project", "vision"}, {"team", "perception"}, {"branch", "main"}}, "ci");
  EXPECT_EQ(r.user, "ci");
  EXPECT_EQ(r.owner, "ci");
  EXPECT_EQ(r.project, "vision");
  EXPECT_EQ(r.team, "perception");
  EXPECT_EQ(r.tags, "branch=main,project=vision,team=perception");
  EXPECT_EQ(RunIdentity({{"user", "alice"}}, "ci").user, "alice") << "a user tag wins";
}

TickSample Tick(int64_t wall_ms, uint32_t util) {
  TickSample t;
  t.wall_ns = wall_ms * 1'000'000;
  t.mono_ns = t.wall_ns;
  GpuFastSample fast;
  fast.util_gpu_pct = util;
  fast.mem_used_bytes = 10ull << 30;
  fast.mem_total_bytes = 80ull << 30;
  t.gpu_fast.push_back(fast);
  GpuSlowSample slow;
  slow.processes_known = true;
  GpuProcess job, other;
  job.pid = 100;
  job.compute = true;
  job.used_memory_bytes = 8ull << 30;
  other.pid = 200;
  other.compute = true;
  other.used_memory_bytes = 2ull << 30;
  slow.processes = {job, other};
  t.gpu_slow.push_back(slow);
  return t;
}

TEST(RunHistory, RecordsTheJobsProcessesUnderTheRunsIdentity) {
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("cgov_run_history_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/h.db";
  FakeFileReader files;  // /proc unreadable: every process but the job's is unknown
  {
    auto history = RunHistory::Open(db, RunIdentity({{"project", "vision"}}, "ci"));
    ASSERT_TRUE(history.ok()) << history.status().message();
    GpuInfo gpu;
    gpu.index = 0;
    gpu.uuid = "GPU-1";
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.memory_total_bytes = 80ull << 30;
    auto price = [](const GpuInfo&) -> Result<ResolvedPrice> {
      ResolvedPrice p;
      p.per_gpu_hour = 2'500'000;
      p.source = "--price-per-gpu-hour $2.50";
      return p;
    };
    ASSERT_TRUE((*history)->Begin({gpu}, "box", 1000, 1000, price, &files).ok());
    const std::vector<int> job_pids = {1, 100};
    for (int i = 0; i < 3; ++i) {
      Status s = (*history)->Record(Tick(1000 + 1000 * i, 90), job_pids);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    ASSERT_TRUE((*history)->Finish().ok());
  }
  auto store = HistoryStore::Open(db, HistoryStore::Mode::kRead);
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto runs = (*store)->Runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->begin()->second.source, "cgov run");
  EXPECT_EQ(runs->begin()->second.hostname, "box");
  auto identities = (*store)->Identities();
  ASSERT_TRUE(identities.ok());
  int job = 0, unknown = 0;
  for (const auto& [id, r] : *identities) {
    if (r.project == "vision" && r.user == "ci" && r.tags == "project=vision") ++job;
    if (r.user.empty() && r.project.empty()) ++unknown;
  }
  EXPECT_EQ(job, 1) << "the job's process";
  EXPECT_EQ(unknown, 1) << "the other process, from /proc (unreadable here)";
  auto prices = (*store)->PricesAt(10'000);
  ASSERT_TRUE(prices.ok());
  ASSERT_EQ(prices->size(), 1u);
  EXPECT_EQ(prices->begin()->second.micro_usd, 2'500'000);
  std::filesystem::remove_all(dir);
}

TEST(RunHistory, ABadPathIsRefusedBeforeTheJobStarts) {
  auto history = RunHistory::Open("/nonexistent-dir/h.db", {});
  ASSERT_FALSE(history.ok());
  EXPECT_NE(history.status().message().find("/nonexistent-dir/h.db"), std::string::npos)
      << history.status().message();
}

}  // namespace
}  // namespace cgov
