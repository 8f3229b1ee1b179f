// The plan's reader on a real history database: both passes over the window's raw ticks, and a
// window reaching before ticks --retain pruned says so (a window after the prune does not).
#include "app/history/plan_load.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

namespace cgov {
namespace {

TEST(PlanLoad, AWindowBeforePrunedTicksIsToldSo) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("cgov_plan_load_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "h.db").string();
  {
    auto store = HistoryStore::Open(path, HistoryStore::Mode::kWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    GpuRecord gpu;
    gpu.uuid = "GPU-0";
    gpu.index = 0;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.mem_total_mib = 81'559;
    auto gpu_id = (*store)->GpuId(gpu);
    ASSERT_TRUE(gpu_id.ok());
    auto run = (*store)->BeginRun("daemon", 0, 1000, "box");
    ASSERT_TRUE(run.ok());
    ASSERT_TRUE((*store)->Begin().ok());
    for (int64_t s = 0; s < 10; ++s) {
      StoredTick tick;
      StoredGpu g;
      g.gpu_id = *gpu_id;
      g.processes_known = false;
      g.set(StoredGpuField::kUtilPct, 10);
      g.set(StoredGpuField::kMemUsedMib, 1024);
      tick.gpus = {g};
      ASSERT_TRUE((*store)->AppendTick(s * 1000, run->id, tick).ok());
    }
    ASSERT_TRUE((*store)->SetWatermark(kHourMs).ok());
    ASSERT_TRUE((*store)->Commit().ok());
    auto pruned = (*store)->PruneTicks(5000);
    ASSERT_TRUE(pruned.ok()) << pruned.status().message();
    EXPECT_EQ(*pruned, 5);
  }
  auto store = HistoryStore::Open(path, HistoryStore::Mode::kRead);
  ASSERT_TRUE(store.ok()) << store.status().message();
  Result<PlanInput> whole = LoadPlan(**store, 0, 10'000, {});
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(whole->profile.ticks, 5);
  EXPECT_EQ(whole->profile.covered_ms, 5000);
  ASSERT_TRUE(whole->raw_pruned_before_ms) << "the window reaches before the prune";
  EXPECT_EQ(*whole->raw_pruned_before_ms, 5000);
  Result<PlanInput> after = LoadPlan(**store, 6000, 10'000, {});
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(after->raw_pruned_before_ms) << "nothing of this window was pruned";
  EXPECT_EQ(after->profile.ticks, 4);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cgov
