#include "telemetry/job_tree.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "fakes/fake_file_reader.h"

namespace cgov {
namespace {

constexpr int64_t kSecond = 1'000'000'000;

std::string Stat(int pid, int ppid, uint64_t utime, uint64_t start, uint64_t rss) {
  return std::to_string(pid) + " (p" + std::to_string(pid) + ") S " + std::to_string(ppid) +
         " 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) + " 0 0 0 20 0 1 0 " +
         std::to_string(start) + " 1000 " + std::to_string(rss) + " 0\n";
}

class JobTreeTest : public ::testing::Test {
 protected:
  void Process(int pid, int ppid, uint64_t utime = 0, uint64_t start = 100, uint64_t rss = 10) {
    files_.Set("/proc/" + std::to_string(pid) + "/stat", Stat(pid, ppid, utime, start, rss));
  }
  // Reads and listings since the last call.
  std::vector<std::string> Activity() {
    std::vector<std::string> out(files_.reads().begin() + seen_, files_.reads().end());
    seen_ = files_.reads().size();
    return out;
  }
  JobTreeReader Reader(std::vector<int> preexisting, int full_rescan_every = 300) {
    JobTreeOptions o;
    o.ticks_per_second = 100;
    o.page_size = 4096;
    o.full_rescan_every = full_rescan_every;
    return JobTreeReader(&files_, 50, o, preexisting);
  }
  FakeFileReader files_;
  size_t seen_ = 0;
};

TEST_F(JobTreeTest, PreexistingProcessesAreNeverRead) {
  Process(1, 0);
  Process(50, 1);  // cgov, the root
  Process(70, 1);  // someone else's, there before the job
  JobTreeReader reader = Reader(ListPids(files_));
  Activity();
  Process(60, 50, 100);  // the job
  Process(61, 60, 200);  // its worker
  JobTreeSample first = reader.Read(kSecond, std::nullopt);
  EXPECT_EQ(first.pids, (std::vector<int>{60, 61}));
  EXPECT_EQ(first.rss_bytes, 20u * 4096);
  EXPECT_FALSE(first.cpu_pct.has_value()) << "no rate on the first tick";
  EXPECT_EQ(Activity(), (std::vector<std::string>{"list:/proc", "/proc/60/stat", "/proc/61/stat"}))
      << "1, 50 and 70 were there before the job";
}

TEST_F(JobTreeTest, MembersAreReadHotEveryTickAndNewPidsLookedForOncePerSecond) {
  Process(50, 1);
  JobTreeReader reader = Reader({1, 50});
  Process(60, 50, 100);
  reader.Read(1 * kSecond, std::nullopt);
  Activity();
  Process(60, 50, 150);
  Process(61, 60, 0);  // starts between discoveries
  JobTreeSample mid = reader.Read(1 * kSecond + kSecond / 10, std::nullopt);
  EXPECT_EQ(Activity(), (std::vector<std::string>{"hot:/proc/60/stat"}));
  EXPECT_EQ(mid.pids, (std::vector<int>{60}));
  ASSERT_TRUE(mid.cpu_pct.has_value());
  EXPECT_DOUBLE_EQ(*mid.cpu_pct, 100.0 * 50 / 100 / 0.1) << "half a second of CPU in 0.1 s";
  JobTreeSample later = reader.Read(2 * kSecond, std::nullopt);
  EXPECT_EQ(later.pids, (std::vector<int>{60, 61}));
  EXPECT_EQ(Activity(),
            (std::vector<std::string>{"hot:/proc/60/stat", "list:/proc", "/proc/61/stat"}));
}

TEST_F(JobTreeTest, NoListingWhileNoProcessWasCreated) {
  Process(50, 1);
  JobTreeReader reader = Reader({1, 50});
  Process(60, 50);
  EXPECT_EQ(reader.Read(1 * kSecond, 4000).pids, (std::vector<int>{60}));
  Activity();
  EXPECT_EQ(reader.Read(2 * kSecond, 4000).pids, (std::vector<int>{60}));
  EXPECT_EQ(Activity(), (std::vector<std::string>{"hot:/proc/60/stat"}))
      << "last pid still 4000: nothing new anywhere, no listing";
  Process(61, 60);
  EXPECT_EQ(reader.Read(3 * kSecond, 4001).pids, (std::vector<int>{60, 61}));
  EXPECT_EQ(Activity(),
            (std::vector<std::string>{"hot:/proc/60/stat", "list:/proc", "/proc/61/stat"}));
}

TEST_F(JobTreeTest, ExitedMembersLeaveAndTheirFilesAreClosed) {
  Process(50, 1);
  JobTreeReader reader = Reader({50});
  Process(60, 50);
  Process(61, 60);
  reader.Read(kSecond, std::nullopt);
  files_.Remove("/proc/60/stat");
  Process(61, 50);  // the orphan, reparented to cgov (the subreaper)
  Activity();
  EXPECT_EQ(reader.Read(kSecond + 1, std::nullopt).pids, (std::vector<int>{61}));
  std::vector<std::string> activity = Activity();
  EXPECT_NE(std::find(activity.begin(), activity.end(), "close:/proc/60/stat"), activity.end());
}

TEST_F(JobTreeTest, RecycledPidIsFoundAtTheFullRescan) {
  Process(50, 1);
  Process(70, 1);  // pre-existing, outside
  JobTreeReader with_rescan = Reader({50, 70}, /*full_rescan_every=*/2);
  JobTreeReader without = Reader({50, 70}, /*full_rescan_every=*/0);
  EXPECT_TRUE(with_rescan.Read(1 * kSecond, std::nullopt).pids.empty());
  EXPECT_TRUE(without.Read(1 * kSecond, std::nullopt).pids.empty());
  Process(70, 50, 0, 999);  // pid 70 exited and came back, within a second, as the job's child
  EXPECT_EQ(with_rescan.Read(2 * kSecond, std::nullopt).pids, (std::vector<int>{70}))
      << "the 2nd discovery classifies known outsiders again";
  EXPECT_TRUE(without.Read(2 * kSecond, std::nullopt).pids.empty())
      << "the bound the rescan is for";
}

TEST(TreeCpuPct, RecycledPidAddsNothing) {
  PidStat before;
  before.pid = 7;
  before.utime_ticks = 1000;
  before.start_ticks = 10;
  PidStat after = before;
  after.utime_ticks = 5;  // a new process with the same pid
  after.start_ticks = 99;
  EXPECT_DOUBLE_EQ(*TreeCpuPct({{7, before}}, {{7, after}}, 1.0, 100), 0.0);
  EXPECT_FALSE(TreeCpuPct({}, {}, 0.0, 100).has_value());
}

}  // namespace
}  // namespace cgov
