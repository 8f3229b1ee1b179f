#include "telemetry/self_stats.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "fakes/fake_file_reader.h"

namespace cgov {
namespace {

TEST(SelfStats, LimitsAndBootTimeAreParsedAsTheKernelWritesThem) {
  const std::string limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max cpu time              unlimited            unlimited            seconds   \n"
      "Max open files            1024                 524288               files     \n";
  EXPECT_EQ(ParseMaxOpenFiles(limits), 1024);
  EXPECT_EQ(ParseMaxOpenFiles("Max open files            unlimited            unlimited  files\n"),
            std::nullopt);
  EXPECT_EQ(ParseMaxOpenFiles(""), std::nullopt);
  EXPECT_EQ(ParseBootTime("cpu  1 2 3 4\nintr 5\nctxt 6\nbtime 1795700000\nprocesses 7\n"),
            1795700000);
  EXPECT_EQ(ParseBootTime("cpu  1 2 3 4\n"), std::nullopt);
}

// From a fake /proc: CPU in ticks, RSS in pages, the start from boot time + start ticks.
TEST(SelfStats, ReadFromProc) {
  FakeFileReader files;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  // utime 150, stime 50 ticks; starttime 1000 ticks; vsize 123456789; rss 2560 pages.
  files.Set("/proc/self/stat",
            "4242 (cgov) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 9 0 1000 123456789 "
            "2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
  files.Set("/proc/self/fd/0", "");
  files.Set("/proc/self/fd/1", "");
  files.Set("/proc/self/fd/7", "");
  files.Set("/proc/self/limits", "Max open files            4096                 4096    files\n");
  files.Set("/proc/stat", "cpu  1 2 3 4\nbtime 1795700000\n");
  Result<SelfStats> s = ReadSelfStats(files);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 200 / hz);
  EXPECT_EQ(s->resident_bytes, 2560 * page);
  EXPECT_EQ(s->virtual_bytes, 123456789u);
  EXPECT_EQ(s->open_fds, 3);
  EXPECT_EQ(s->max_fds, 4096);
  ASSERT_TRUE(s->start_time_seconds.has_value());
  EXPECT_DOUBLE_EQ(*s->start_time_seconds, 1795700000 + 1000 / hz);
  files.Remove("/proc/self/limits");
  files.Remove("/proc/stat");
  s = ReadSelfStats(files);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->max_fds.has_value()) << "unknown, not 0";
  EXPECT_FALSE(s->start_time_seconds.has_value());
}

}  // namespace
}  // namespace cgov
