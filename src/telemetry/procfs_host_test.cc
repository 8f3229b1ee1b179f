#include "telemetry/procfs_host.h"

#include <gtest/gtest.h>

#include "fakes/fixture_testing.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

using testing::ReadFixture;
TEST(ParseProcStat, RealCaptureHasTotalAndEveryCore) {
  auto stat = ParseProcStat(testing::VmFile("/proc/stat"));
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  // "cpu  12804 0 2807 69623 1110 0 25 62 0 0"
  EXPECT_EQ(stat->total.user, 12804u);
  EXPECT_EQ(stat->total.system, 2807u);
  EXPECT_EQ(stat->total.idle, 69623u);
  EXPECT_EQ(stat->total.iowait, 1110u);
  EXPECT_EQ(stat->total.softirq, 25u);
  EXPECT_EQ(stat->total.steal, 62u);
  ASSERT_EQ(stat->cores.size(), 2u);
  EXPECT_EQ(stat->cores[1].user, 6871u);
}

TEST(ParseProcStat, OldKernelsWithFourColumns) {
  auto stat = ParseProcStat("cpu  10 20 30 40\ncpu0 10 20 30 40\nintr 1 2\n");
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->total.Total(), 100u);
  EXPECT_EQ(stat->total.iowait, 0u);
}

TEST(ParseProcStat, StopsAtTheFirstLineAfterTheCpuLines) {
  // Everything after the cpu lines is left unread: a "cpu"-prefixed line there is not a core.
  auto stat = ParseProcStat("cpu  10 20 30 40 5\ncpu0 10 20 30 40 5\nintr 9 9 9\ncpu_x y\n");
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->cores.size(), 1u);
  EXPECT_EQ(stat->total.iowait, 5u);
  // Lines before the first cpu line are skipped, not a stop.
  auto late = ParseProcStat("something 1\ncpu  1 2 3 4\n");
  ASSERT_TRUE(late.ok()) << late.status().message();
  EXPECT_EQ(late->total.Total(), 10u);
}

TEST(ParseProcStat, TotalAloneStopsAtTheAggregateLine) {
  auto stat = ParseProcStatTotal("cpu  1 2 3 4 5\ncpu0 x\n");  // cpu0 is never parsed
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->total.iowait, 5u);
  EXPECT_TRUE(stat->cores.empty());
  EXPECT_FALSE(ParseProcStatTotal("cpu0 1 2 3 4\n").ok());
}

TEST(TextScan, NextLineAndSplitFieldsIntoAllocateNothingAndCountPastMax) {
  std::string_view rest = "a b\n\n  c\t d  e", line;
  std::vector<std::string_view> lines;
  while (NextLine(&rest, &line)) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<std::string_view>{"a b", "", "  c\t d  e"}));
  std::string_view f[2];
  EXPECT_EQ(SplitFieldsInto(lines[2], f, 2), 3u);
  EXPECT_EQ(f[0], "c");
  EXPECT_EQ(f[1], "d");
  EXPECT_EQ(SplitFieldsInto("", f, 2), 0u);
}

TEST(ParseProcStat, ErrorsNameFileLineAndField) {
  auto stat = ParseProcStat("cpu  1 2 3 4\ncpu0 1 x 3 4\n");
  ASSERT_FALSE(stat.ok());
  EXPECT_EQ(stat.status().message(), "/proc/stat:2: cpu0: expected at least 4 counters");
  EXPECT_FALSE(ParseProcStat("intr 1 2\n").ok());
  EXPECT_FALSE(ParseProcStat("").ok());
}

TEST(ParseMeminfo, RealCaptureInBytes) {
  auto mem = ParseMeminfo(testing::VmFile("/proc/meminfo"));
  ASSERT_TRUE(mem.ok()) << mem.status().message();
  ASSERT_TRUE(mem->total_bytes && mem->available_bytes && mem->free_bytes);
  EXPECT_EQ(*mem->total_bytes % 1024, 0u);
  EXPECT_GT(*mem->total_bytes, 20ull << 30);  // the VM has 24 GiB
  EXPECT_LE(*mem->available_bytes, *mem->total_bytes);
}

TEST(ParseMeminfo, MissingMemAvailableStaysUnknown) {
  auto mem = ParseMeminfo("MemTotal:  1000 kB\nMemFree:  500 kB\n");
  ASSERT_TRUE(mem.ok());
  EXPECT_EQ(*mem->total_bytes, 1024000u);
  EXPECT_FALSE(mem->available_bytes.has_value()) << "unknown is not zero";
}

TEST(ParseMeminfo, BadNumberNamesTheLine) {
  auto mem = ParseMeminfo("MemTotal: 1000 kB\nMemFree: lots kB\n");
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().message(), "/proc/meminfo:2: MemFree:: not a number");
}

TEST(ParseLoadavg, RealCapture) {
  auto load = ParseLoadavg(testing::VmFile("/proc/loadavg"));
  ASSERT_TRUE(load.ok()) << load.status().message();
  EXPECT_GE(load->load1, 0);
  EXPECT_FALSE(ParseLoadavg("0.1 0.2\n").ok());
  auto exact = ParseLoadavg("0.37 0.15 0.05 2/81 1909\n");
  ASSERT_TRUE(exact.ok());
  EXPECT_DOUBLE_EQ(exact->load5, 0.15);
  EXPECT_EQ(exact->last_pid, 1909);
  EXPECT_FALSE(ParseLoadavg("0.37 0.15 0.05\n")->last_pid.has_value());
}

TEST(ParseCpuMax, LimitsAndNoLimit) {
  auto two = ParseCpuMax("200000 100000\n");
  ASSERT_TRUE(two.ok());
  EXPECT_DOUBLE_EQ(**two, 2.0);
  auto half = ParseCpuMax("50000 100000");
  ASSERT_TRUE(half.ok());
  EXPECT_DOUBLE_EQ(**half, 0.5);
  auto none = ParseCpuMax("max 100000\n");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(ParseCpuMax("max").ok());
  EXPECT_FALSE(ParseCpuMax("100 0").ok());
  EXPECT_FALSE(ParseCpuMax("lots 100000").ok());
}

TEST(IsWholeDisk, DisksYesPartitionsAndVirtualNo) {
  for (const char* yes : {"sda", "sdab", "vda", "xvdb", "hda", "nvme0n1", "nvme12n3", "mmcblk0"}) {
    EXPECT_TRUE(IsWholeDisk(yes)) << yes;
  }
  for (const char* no : {"sda1", "vda2", "nvme0n1p1", "nvme0c0n1", "mmcblk0p1", "loop0", "ram0",
                         "zram0", "dm-0", "md0", "sr0", "nvme", "sd", "nvme0n"}) {
    EXPECT_FALSE(IsWholeDisk(no)) << no;
  }
}

TEST(ParseDiskstats, RealCaptureKeepsOnlyTheWholeDisk) {
  auto disks = ParseDiskstats(testing::VmFile("/proc/diskstats"));
  ASSERT_TRUE(disks.ok()) << disks.status().message();
  ASSERT_EQ(disks->size(), 1u) << "loop0-7 and zram0 are not whole disks";
  EXPECT_EQ((*disks)[0].name, "vda");
  // "254 0 vda 9151 5210 1099266 25760 2303 4316 1152648 ..."
  EXPECT_EQ((*disks)[0].read_bytes, 1099266ull * 512);
  EXPECT_EQ((*disks)[0].written_bytes, 1152648ull * 512);
}

TEST(ParseDiskstats, ShortLineNamesTheLine) {
  auto disks = ParseDiskstats("   8 0 sda 1 2 3\n");
  ASSERT_FALSE(disks.ok());
  EXPECT_EQ(disks.status().message(), "/proc/diskstats:1: columns: expected at least 10");
}

TEST(ParseNetDev, RealCaptureSkipsLoopback) {
  auto nets = ParseNetDev(testing::VmFile("/proc/net/dev"));
  ASSERT_TRUE(nets.ok()) << nets.status().message();
  std::vector<std::string> names;
  for (const auto& n : *nets) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ifb0", "ifb1", "eth0"}));
  EXPECT_GT(nets->back().rx_bytes, 0u);
  EXPECT_GT(nets->back().tx_bytes, 0u);
}

TEST(ParseNetDev, InterfaceNamesWithoutSpaceAfterColon) {
  // Counters wider than the column run into the colon on real machines: "eth0:1234567890 ...".
  auto nets = ParseNetDev(
      "Inter-|   Receive\n face |bytes\n"
      "  eth0:12345678901    10    0    0    0     0          0         0 98765    5    0    0    "
      "0     0       0          0\n");
  ASSERT_TRUE(nets.ok()) << nets.status().message();
  ASSERT_EQ(nets->size(), 1u);
  EXPECT_EQ((*nets)[0].rx_bytes, 12345678901ull);
  EXPECT_EQ((*nets)[0].tx_bytes, 98765u);
}

}  // namespace
}  // namespace cgov
