#include "telemetry/host_reader.h"

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"

namespace cgov {
namespace {

using testing::ReadFixture;
class HostReaderTest : public ::testing::Test {
 protected:
  void LoadT0() {
    files_.Set("/proc/stat", testing::VmFile("/proc/stat.t0"));
    files_.Set("/proc/meminfo", testing::VmFile("/proc/meminfo"));
    files_.Set("/proc/diskstats", testing::VmFile("/proc/diskstats.t0"));
    files_.Set("/proc/net/dev", testing::VmFile("/proc/net/dev.t0"));
    files_.Set("/proc/loadavg", testing::VmFile("/proc/loadavg"));
  }
  void LoadT1() {
    files_.Set("/proc/stat", testing::VmFile("/proc/stat"));
    files_.Set("/proc/diskstats", testing::VmFile("/proc/diskstats"));
    files_.Set("/proc/net/dev", testing::VmFile("/proc/net/dev"));
  }
  FakeFileReader files_;
  FakeClock clock_;
};

TEST_F(HostReaderTest, FirstTickHasLevelsButNoRates) {
  LoadT0();
  HostReader reader(&files_, &clock_);
  HostSample s;
  reader.Read(&s);
  EXPECT_TRUE(reader.errors().empty());
  EXPECT_FALSE(s.cpu_pct.has_value());
  EXPECT_FALSE(s.disk_write_bytes_per_s.has_value());
  EXPECT_TRUE(s.mem_total_bytes.has_value());
  EXPECT_TRUE(s.load.has_value());
}

TEST_F(HostReaderTest, SecondTickHasRatesOverTheClockInterval) {
  LoadT0();
  HostReader reader(&files_, &clock_);
  HostSample s;
  reader.Read(&s);
  LoadT1();
  clock_.AdvanceNs(2'000'000'000);
  reader.Read(&s);
  ASSERT_TRUE(s.cpu_pct.has_value());
  EXPECT_NEAR(*s.cpu_pct, 100.0 * (1.0 - 264.0 / 527.0), 1e-9);
  ASSERT_EQ(s.core_pct.size(), 2u);
  ASSERT_TRUE(s.disk_write_bytes_per_s.has_value());
  EXPECT_DOUBLE_EQ(*s.disk_write_bytes_per_s, (1152648.0 - 892088.0) * 512 / 2.0);
  EXPECT_TRUE(s.net_rx_bytes_per_s.has_value());
}

TEST_F(HostReaderTest, PerCoreBusyOnlyWhenAskedFor) {
  // The daemon keeps the host's busy and iowait alone: without kHostCpuCores the same totals,
  // and no per-core figure.
  LoadT0();
  HostReader totals(&files_, &clock_, kHostCpu);
  HostReader cores(&files_, &clock_, kHostCpu | kHostCpuCores);
  HostSample a, b;
  totals.Read(&a);
  cores.Read(&b);
  LoadT1();
  clock_.AdvanceNs(1'000'000'000);
  totals.Read(&a);
  cores.Read(&b);
  ASSERT_TRUE(a.cpu_pct.has_value());
  EXPECT_EQ(a.cpu_pct, b.cpu_pct);
  EXPECT_EQ(a.iowait_pct, b.iowait_pct);
  EXPECT_TRUE(a.core_pct.empty());
  EXPECT_EQ(b.core_pct.size(), 2u);
}

TEST_F(HostReaderTest, ReadsEveryFileHotAndNothingElse) {
  LoadT0();
  HostReader reader(&files_, &clock_);
  HostSample s;
  reader.Read(&s);
  EXPECT_EQ(files_.reads(),
            (std::vector<std::string>{"hot:/proc/stat", "hot:/proc/meminfo", "hot:/proc/diskstats",
                                      "hot:/proc/net/dev", "hot:/proc/loadavg"}));
}

TEST_F(HostReaderTest, AMissingFileDegradesItsFieldsOnly) {
  LoadT0();
  files_.Remove("/proc/diskstats");
  HostReader reader(&files_, &clock_);
  HostSample s;
  reader.Read(&s);
  LoadT1();
  files_.Remove("/proc/diskstats");
  clock_.AdvanceNs(1'000'000'000);
  reader.Read(&s);
  ASSERT_EQ(reader.errors().size(), 1u);
  EXPECT_EQ(reader.errors()[0].code(), StatusCode::kNotFound);
  EXPECT_FALSE(s.disk_read_bytes_per_s.has_value());
  EXPECT_TRUE(s.cpu_pct.has_value());
  EXPECT_TRUE(s.net_tx_bytes_per_s.has_value());
}

TEST(ReadCpuLimit, CgroupV2OwnCgroupFirstThenRootThenV1) {
  FakeFileReader files;
  files.Set("/proc/self/cgroup", "0::/kubepods.slice/pod.slice\n");
  files.Set("/sys/fs/cgroup/kubepods.slice/pod.slice/cpu.max", "400000 100000\n");
  files.Set("/sys/fs/cgroup/cpu.max", "max 100000\n");
  CpuLimit own = ReadCpuLimit(files);
  EXPECT_TRUE(own.known);
  EXPECT_DOUBLE_EQ(*own.cores, 4.0);

  files.Remove("/sys/fs/cgroup/kubepods.slice/pod.slice/cpu.max");
  CpuLimit root = ReadCpuLimit(files);
  EXPECT_TRUE(root.known);
  EXPECT_FALSE(root.cores.has_value());
  EXPECT_EQ(root.source, "/sys/fs/cgroup/cpu.max");
}

TEST(ReadCpuLimit, V1QuotaAndUnknown) {
  FakeFileReader files;
  files.Set("/proc/self/cgroup", ReadFixture(std::string(testing::kVm) + "/proc/self/cgroup"));
  EXPECT_FALSE(ReadCpuLimit(files).known);
  files.Set("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "150000\n");
  files.Set("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  CpuLimit v1 = ReadCpuLimit(files);
  EXPECT_TRUE(v1.known);
  EXPECT_DOUBLE_EQ(*v1.cores, 1.5);
  files.Set("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  EXPECT_FALSE(ReadCpuLimit(files).cores.has_value());
}

}  // namespace
}  // namespace cgov
