#include "telemetry/proc_rates.h"

#include <gtest/gtest.h>

#include "fakes/fixture_testing.h"

namespace cgov {
namespace {

using testing::ReadFixture;
TEST(CpuBusyPct, FromTwoRealCaptures) {
  auto t0 = ParseProcStat(testing::VmFile("/proc/stat.t0"));
  auto t1 = ParseProcStat(testing::VmFile("/proc/stat"));
  ASSERT_TRUE(t0.ok() && t1.ok());
  // total: 12571+2779+69365+1104+23+62 = 85904 -> 12804+2807+69623+1110+25+62 = 86431 (+527)
  // idle+iowait: 70469 -> 70733 (+264), so busy = 1 - 264/527.
  auto pct = CpuBusyPct(t0->total, t1->total);
  ASSERT_TRUE(pct.has_value());
  EXPECT_NEAR(*pct, 100.0 * (1.0 - 264.0 / 527.0), 1e-9);
  auto cores = CoreBusyPct(*t0, *t1);
  ASSERT_EQ(cores.size(), 2u);
  // cpu0: total 42933 -> 43198 (+265), idle 35888 -> 35898 (+10)
  ASSERT_TRUE(cores[0].has_value());
  EXPECT_NEAR(*cores[0], 100.0 * (1.0 - 10.0 / 265.0), 1e-9);
}

TEST(CpuIowaitPct, FromTwoRealCaptures) {
  auto t0 = ParseProcStat(testing::VmFile("/proc/stat.t0"));
  auto t1 = ParseProcStat(testing::VmFile("/proc/stat"));
  ASSERT_TRUE(t0.ok() && t1.ok());
  // iowait 1104 -> 1110 over a total of +527 ticks (the capture wrote 64 MiB with O_DIRECT)
  EXPECT_NEAR(*CpuIowaitPct(t0->total, t1->total), 100.0 * 6 / 527, 1e-9);
}

TEST(CpuBusyPct, CounterGoingBackwardsIsAResetNotAWrap) {
  CpuTimes before{100, 0, 50, 1000, 0, 0, 0, 0};
  CpuTimes after{10, 0, 5, 100, 0, 0, 0, 0};  // after a reboot of the VM
  EXPECT_FALSE(CpuBusyPct(before, after).has_value());
  EXPECT_FALSE(CpuBusyPct(before, before).has_value()) << "no time elapsed";
}

TEST(CoreBusyPct, CoreCountChangeMakesCoresUnknown) {
  ProcStat two{{}, {CpuTimes{1, 0, 0, 1}, CpuTimes{1, 0, 0, 1}}};
  ProcStat three{{}, {CpuTimes{2, 0, 0, 2}, CpuTimes{2, 0, 0, 2}, CpuTimes{2, 0, 0, 2}}};
  auto cores = CoreBusyPct(two, three);
  ASSERT_EQ(cores.size(), 3u);
  for (const auto& c : cores) EXPECT_FALSE(c.has_value());
}

TEST(CounterRate, ResetAndZeroInterval) {
  EXPECT_DOUBLE_EQ(*CounterRate(100, 300, 2.0), 100.0);
  EXPECT_FALSE(CounterRate(300, 100, 2.0).has_value());
  EXPECT_FALSE(CounterRate(100, 300, 0.0).has_value());
}

TEST(DiskRates, FromTwoRealCaptures) {
  auto t0 = ParseDiskstats(testing::VmFile("/proc/diskstats.t0"));
  auto t1 = ParseDiskstats(testing::VmFile("/proc/diskstats"));
  ASSERT_TRUE(t0.ok() && t1.ok());
  IoRates r = DiskRates(*t0, *t1, 2.0);
  // vda sectors read 1098666 -> 1099266, written 892088 -> 1152648
  EXPECT_DOUBLE_EQ(*r.read_bytes_per_s, (1099266.0 - 1098666.0) * 512 / 2.0);
  EXPECT_DOUBLE_EQ(*r.write_bytes_per_s, (1152648.0 - 892088.0) * 512 / 2.0);
}

TEST(DiskRates, OneDeviceResetMakesTheSumUnknown) {
  std::vector<DiskCounters> t0 = {{"sda", 1000, 1000}, {"sdb", 5000, 5000}};
  std::vector<DiskCounters> t1 = {{"sda", 2000, 2000}, {"sdb", 10, 10}};
  IoRates r = DiskRates(t0, t1, 1.0);
  EXPECT_FALSE(r.read_bytes_per_s.has_value());
  EXPECT_FALSE(r.write_bytes_per_s.has_value());
}

TEST(DiskRates, DevicesThatComeAndGoAreLeftOut) {
  std::vector<DiskCounters> t0 = {{"sda", 1000, 0}, {"sdb", 5000, 0}};
  std::vector<DiskCounters> t1 = {{"sda", 3000, 0}, {"sdc", 999999, 0}};
  IoRates r = DiskRates(t0, t1, 1.0);
  EXPECT_DOUBLE_EQ(*r.read_bytes_per_s, 2000.0);
}

TEST(NetRates, FromTwoRealCaptures) {
  auto t0 = ParseNetDev(testing::VmFile("/proc/net/dev.t0"));
  auto t1 = ParseNetDev(testing::VmFile("/proc/net/dev"));
  ASSERT_TRUE(t0.ok() && t1.ok());
  IoRates r = NetRates(*t0, *t1, 1.0);
  ASSERT_TRUE(r.read_bytes_per_s && r.write_bytes_per_s);
  uint64_t rx0 = 0, rx1 = 0;
  for (const auto& n : *t0) rx0 += n.rx_bytes;
  for (const auto& n : *t1) rx1 += n.rx_bytes;
  EXPECT_DOUBLE_EQ(*r.read_bytes_per_s, static_cast<double>(rx1 - rx0));
}

}  // namespace
}  // namespace cgov
