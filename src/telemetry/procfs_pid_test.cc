#include "telemetry/procfs_pid.h"

#include <gtest/gtest.h>

#include "fakes/fixture_testing.h"

namespace cgov {
namespace {

using testing::ReadFixture;
// Any user can name a process anything (prctl PR_SET_NAME): invalid UTF-8 and terminal escapes
// come out escaped, never raw (issue 21, item 8).
TEST(ParsePidStat, AHostileNameComesOutEscaped) {
  auto stat = ParsePidStat(
      "42 (\x1b[2J\xff) S 1 42 42 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 100 1000 10 "
      "18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n");
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->comm, "\\x1b[2J\\xff");
}

TEST(ParsePidStat, NameWithParenthesesAndSpacesFromARealProcess) {
  // Captured from `/tmp/a) (b 300`: the line reads "3048 (a) (b) S 3030 ...".
  auto stat = ParsePidStat(testing::VmFile("/proc/3048/stat"));
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->pid, 3048);
  EXPECT_EQ(stat->comm, "a) (b");
  EXPECT_EQ(stat->state, 'S');
  EXPECT_EQ(stat->ppid, 3030);
  EXPECT_EQ(stat->utime_ticks, 0u);
  EXPECT_EQ(stat->num_threads, 1);
  EXPECT_EQ(stat->start_ticks, 43382u);
  EXPECT_EQ(stat->rss_pages, 396u);
}

TEST(ParsePidStat, KernelThread) {
  auto stat = ParsePidStat(testing::VmFile("/proc/2/stat"));
  ASSERT_TRUE(stat.ok()) << stat.status().message();
  EXPECT_EQ(stat->comm, "kthreadd");
  EXPECT_EQ(stat->ppid, 0);
  EXPECT_EQ(stat->rss_pages, 0u);
}

TEST(ParsePidStat, NamesThatWouldFoolAFirstParenthesisParser) {
  struct Case {
    std::string comm;
  } cases[] = {{") S 99 ("}, {"(("}, {"))"}, {"a b c"}, {""}, {"x) R 1 2 3 4 5 6 7 8 9 10 11 12"}};
  for (const Case& c : cases) {
    std::string line = "77 (" + c.comm +
                       ") R 5 77 77 0 -1 4194560 100 0 0 0 12 34 0 0 20 0 3 0 555 1000 42 "
                       "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
    auto stat = ParsePidStat(line);
    ASSERT_TRUE(stat.ok()) << c.comm << ": " << stat.status().message();
    EXPECT_EQ(stat->comm, c.comm);
    EXPECT_EQ(stat->ppid, 5) << c.comm;
    EXPECT_EQ(stat->utime_ticks, 12u) << c.comm;
    EXPECT_EQ(stat->stime_ticks, 34u) << c.comm;
    EXPECT_EQ(stat->num_threads, 3) << c.comm;
    EXPECT_EQ(stat->start_ticks, 555u) << c.comm;
    EXPECT_EQ(stat->rss_pages, 42u) << c.comm;
  }
}

TEST(ParsePidStat, TruncatedOrGarbledIsAnError) {
  EXPECT_FALSE(ParsePidStat("").ok());
  EXPECT_FALSE(ParsePidStat("12 (x) S 1 2 3").ok());
  EXPECT_FALSE(ParsePidStat("12 x S 1").ok());
  auto bad = ParsePidStat("x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "/proc/PID/stat: pid: not a number");
}

TEST(ParseStatusUid, RealCaptures) {
  auto uid = ParseStatusUid(testing::VmFile("/proc/3048/status"));
  ASSERT_TRUE(uid.ok()) << uid.status().message();
  EXPECT_EQ(*uid, 0u);  // captured as root
  auto other = ParseStatusUid("Name:\tpython\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\n");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*other, 1000u);
  EXPECT_FALSE(ParseStatusUid("Name:\tx\n").ok());
  // The gid whose rights a progress file is opened with (os/rooted_open.h).
  auto gid = ParseStatusGid("Uid:\t1000\t1000\t1000\t1000\nGid:\t1007\t0\t0\t0\n");
  ASSERT_TRUE(gid.ok()) << gid.status().message();
  EXPECT_EQ(*gid, 1007u);
  EXPECT_FALSE(ParseStatusGid("Gid:\t99999999999\n").ok()) << "not a uint32";
  EXPECT_FALSE(ParseStatusGid("Uid:\t1\n").ok());
}

TEST(ParseStatusKb, PeakAndCurrentRss) {
  std::string status = testing::VmFile("/proc/3048/status");
  auto hwm = ParseStatusKb(status, "VmHWM");
  auto rss = ParseStatusKb(status, "VmRSS");
  ASSERT_TRUE(hwm && rss);
  EXPECT_GE(*hwm, *rss);
  EXPECT_EQ(*hwm, 1756u * 1024);
  EXPECT_FALSE(ParseStatusKb(status, "VmNope").has_value());
  EXPECT_FALSE(ParseStatusKb("VmHWM:\tlots kB\n", "VmHWM").has_value());
  EXPECT_FALSE(ParseStatusKb("VmHWMX:\t12 kB\n", "VmHWM").has_value());
}

TEST(ParseLoginuid, UnsetIsUnknownNotRoot) {
  auto unset = ParseLoginuid(testing::VmFile("/proc/3048/loginuid"));  // 4294967295 on this VM
  ASSERT_TRUE(unset.ok()) << unset.status().message();
  EXPECT_FALSE(unset->has_value());
  auto alice = ParseLoginuid("1000");
  ASSERT_TRUE(alice.ok());
  EXPECT_EQ(**alice, 1000u);
  EXPECT_FALSE(ParseLoginuid("").ok());
  EXPECT_FALSE(ParseLoginuid("99999999999").ok());
}

TEST(ParseCgroup, RealV1CaptureOutsideContainers) {
  CgroupIdentity id = ParseCgroup(testing::VmFile("/proc/3048/cgroup"));
  EXPECT_TRUE(id.pod_uid.empty());
  EXPECT_TRUE(id.container_id.empty());
  EXPECT_TRUE(id.slurm_job_id.empty());
}

TEST(ParseCgroup, KubernetesSystemdDriver) {
  CgroupIdentity id = ParseCgroup(ReadFixture("cgroup/k8s-systemd-v2.cgroup"));
  EXPECT_EQ(id.pod_uid, "0f6c1e2a-93b4-4c1d-9f3e-5a7b2c8d4e61");
  EXPECT_EQ(id.container_id, "4f1a9c2b7d3e8f60a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2");
}

TEST(ParseCgroup, KubernetesCgroupfsDriverOnV1) {
  CgroupIdentity id = ParseCgroup(ReadFixture("cgroup/k8s-cgroupfs-v1.cgroup"));
  EXPECT_EQ(id.pod_uid, "7d2e4b1c-3a5f-4e6d-8c9b-0a1f2e3d4c5b");
  EXPECT_EQ(id.container_id, "9b8a7f6e5d4c3b2a19081726354453627180f9e8d7c6b5a4f3e2d1c0b9a8f7e6");
}

TEST(ParseCgroup, SlurmDockerAndPlainSessions) {
  EXPECT_EQ(ParseCgroup(ReadFixture("cgroup/slurm-v2.cgroup")).slurm_job_id, "4242117");
  CgroupIdentity docker = ParseCgroup(ReadFixture("cgroup/docker-v2.cgroup"));
  EXPECT_EQ(docker.container_id,
            "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90");
  EXPECT_TRUE(docker.pod_uid.empty());
  CgroupIdentity session = ParseCgroup(ReadFixture("cgroup/user-session-v2.cgroup"));
  EXPECT_EQ(session.path, "/user.slice/user-1000.slice/session-3.scope");
  EXPECT_TRUE(session.pod_uid.empty() && session.container_id.empty());
}

TEST(ParseCgroup, LookalikesAreNotIdentities) {
  CgroupIdentity id = ParseCgroup("0::/podcast.slice/job_/docker-xyz.scope\n");
  EXPECT_TRUE(id.pod_uid.empty());
  EXPECT_TRUE(id.container_id.empty());
  EXPECT_EQ(id.slurm_job_id, "");
}

TEST(ParsePasswd, RealCaptureAndJunk) {
  auto users = ParsePasswd(testing::VmFile("/etc/passwd"));
  EXPECT_EQ(users.at(0), "root");
  EXPECT_EQ(users.at(65534), "nobody");
  auto odd =
      ParsePasswd("# comment\n\nbroken\nalice:x:1000:1000::/home/alice:/bin/bash\nbob:x:x:1\n");
  EXPECT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd.at(1000), "alice");
}

TEST(EnvironValue, NulSeparated) {
  static const char kEnv[] = "PATH=/bin\0CGOV_PROJECT=vision\0CGOV_TEAM=\0CGOV_PROJECTX=no\0";
  std::string environ(kEnv, sizeof(kEnv) - 1);
  EXPECT_EQ(EnvironValue(environ, "CGOV_PROJECT"), "vision");
  EXPECT_EQ(EnvironValue(environ, "CGOV_TEAM"), "");
  EXPECT_EQ(EnvironValue(environ, "CGOV_PROJECTX"), "no");
  EXPECT_FALSE(EnvironValue(environ, "CGOV_USER").has_value());
  EXPECT_FALSE(EnvironValue(environ, "PATH=/bin").has_value());
}

PidStat P(int pid, int ppid) {
  PidStat p;
  p.pid = pid;
  p.ppid = ppid;
  return p;
}

TEST(Descendants, WholeSubtreeNotSiblings) {
  std::vector<PidStat> table = {P(1, 0),     P(100, 1), P(101, 100), P(102, 100),
                                P(103, 101), P(200, 1), P(201, 200)};
  EXPECT_EQ(Descendants(table, 100), (std::vector<int>{101, 102, 103}));
  EXPECT_EQ(Descendants(table, 103), (std::vector<int>{}));
  EXPECT_EQ(Descendants(table, 999), (std::vector<int>{}));
}

TEST(Descendants, ACycleInATornSnapshotTerminates) {
  // pids are reused: a snapshot taken across an exit can show a loop.
  std::vector<PidStat> table = {P(10, 11), P(11, 10), P(12, 11)};
  std::vector<int> found = Descendants(table, 10);
  EXPECT_EQ(found, (std::vector<int>{11, 12}));
}

}  // namespace
}  // namespace cgov
