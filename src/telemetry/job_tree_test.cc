#include "telemetry/job_tree.h"

#include <gtest/gtest.h>

#include "os/fake_file_reader.h"

namespace cgov {
namespace {

std::string Stat(int pid, int ppid, uint64_t utime, uint64_t stime, uint64_t start, uint64_t rss) {
  return std::to_string(pid) + " (p" + std::to_string(pid) + ") S " + std::to_string(ppid) +
         " 1 1 0 -1 0 0 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) +
         " 0 0 20 0 1 0 " + std::to_string(start) + " 1000 " + std::to_string(rss) + " 0\n";
}

class JobTreeTest : public ::testing::Test {
 protected:
  void Process(int pid, int ppid, uint64_t utime, uint64_t stime = 0, uint64_t start = 100,
               uint64_t rss = 10) {
    files_.Set("/proc/" + std::to_string(pid) + "/stat", Stat(pid, ppid, utime, stime, start, rss));
  }
  size_t StatReads() const {
    size_t n = 0;
    for (const std::string& r : files_.reads()) n += r.ends_with("/stat") ? 1 : 0;
    return n;
  }
  FakeFileReader files_;
};

TEST_F(JobTreeTest, MembersCpuAndRssOfTheSubtree) {
  Process(1, 0, 0);
  Process(50, 1, 0);          // cgov (the root)
  Process(60, 50, 100, 0);    // the job
  Process(61, 60, 200, 0);    // its worker, listed after
  Process(70, 1, 999);        // someone else
  JobTreeReader reader(&files_, 50, 100, 4096);
  JobTreeSample first = reader.Read(1'000'000'000);
  EXPECT_EQ(first.pids, (std::vector<int>{60, 61}));
  EXPECT_FALSE(first.cpu_pct.has_value()) << "no rate on the first tick";
  EXPECT_EQ(first.rss_bytes, 20u * 4096);

  Process(60, 50, 150, 50);   // +100 ticks
  Process(61, 60, 300, 0);    // +100 ticks
  Process(70, 1, 5000);
  JobTreeSample second = reader.Read(3'000'000'000);  // 2 s later
  ASSERT_TRUE(second.cpu_pct.has_value());
  EXPECT_DOUBLE_EQ(*second.cpu_pct, 100.0 * 200 / 100 / 2.0);  // one core busy
}

TEST_F(JobTreeTest, OutsidersAreNotReReadUntilTheFullRescan) {
  Process(50, 1, 0);
  Process(60, 50, 0);
  for (int pid = 100; pid < 110; ++pid) Process(pid, 1, 0);
  JobTreeReader reader(&files_, 50, 100, 4096, /*full_rescan_every=*/3);
  reader.Read(1);
  size_t after_first = StatReads();
  EXPECT_EQ(after_first, 11u) << "the member and 10 others; never the root";
  reader.Read(2);
  EXPECT_EQ(StatReads() - after_first, 1u) << "only the member 60 (the root is not re-read)";
  reader.Read(3);
  size_t before_rescan = StatReads();
  reader.Read(4);
  EXPECT_EQ(StatReads() - before_rescan, 11u) << "every 3rd tick reads everything again";
}

TEST_F(JobTreeTest, NewChildrenJoinAndExitedOnesLeave) {
  Process(50, 1, 0);
  Process(60, 50, 0);
  JobTreeReader reader(&files_, 50, 100, 4096);
  reader.Read(1'000'000'000);
  Process(61, 60, 0);
  EXPECT_EQ(reader.Read(2'000'000'000).pids, (std::vector<int>{60, 61}));
  files_.Remove("/proc/60/stat");
  Process(61, 50, 0);  // orphan reparented to cgov, the subreaper
  EXPECT_EQ(reader.Read(3'000'000'000).pids, (std::vector<int>{61}));
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
