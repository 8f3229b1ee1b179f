// The daemon as the shipped unit runs it: a non-root user. Without CAP_SYS_PTRACE it cannot read
// other users' /proc/PID/environ (their CGOV_PROJECT, CGOV_TEAM, CGOV_TAGS), and it says so at
// start, in /health and in every report over its window (issue 43, item 12).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

constexpr const char* kSetpriv = "/usr/bin/setpriv";

TEST(NonRootDaemonE2E, SaysItCannotReadOtherUsersProjectsAtStartInHealthAndInEachReport) {
  if (geteuid() != 0) GTEST_SKIP() << "starting the daemon as another user needs root";
  if (access(kSetpriv, X_OK) != 0) GTEST_SKIP() << "no setpriv (util-linux)";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  // The binary, the fake driver and its scenario where nobody can reach them (a checkout under
  // a private home directory is not).
  const std::string cgov = dir / "cgov", nvml = dir / "libnvidia-ml.so.1",
                    scenario = dir / "shared_box.json";
  std::filesystem::copy_file(CgovBinary(), cgov);
  std::filesystem::copy_file(FakeNvml("full"), nvml);
  std::filesystem::copy_file(Scenario("shared_box"), scenario);
  for (const std::string& f : {cgov, nvml, scenario}) {
    ASSERT_EQ(chmod(f.c_str(), 0755), 0) << f;
  }
  const int port = FreePort();
  // nobody, no supplementary groups, no capabilities: what DynamicUser= gives without the unit's
  // AmbientCapabilities=CAP_SYS_PTRACE.
  Started daemon =
      StartProgram({kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                    "--bounding-set=-all", cgov, "daemon", "--db", dir / "h.db", "--interval",
                    "200ms", "--nvml-lib", nvml, "--listen", "127.0.0.1:" + std::to_string(port)},
                   {{"CGOV_FAKE_NVML_SCENARIO", scenario}});
  if (!WaitFor(TicksTaken(port, 3), 20)) {
    kill(daemon.pid, SIGTERM);
    FAIL() << "the daemon did not start as nobody: " << WaitProgram(daemon, 20).err;
  }
  const std::string health = Curl("http://127.0.0.1:" + std::to_string(port) + "/health");
  EXPECT_EQ(health.rfind("ok\nwarning: running as uid 65534 without CAP_SYS_PTRACE: other users' "
                         "/proc/PID/environ cannot be read",
                         0),
            0u)
      << health;
  EXPECT_NE(health.find("HTTP 200"), std::string::npos) << "healthy: it records, with less";
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 20);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("cgov daemon: warning: running as uid 65534 without CAP_SYS_PTRACE"),
            std::string::npos)
      << stopped.err;
  RunResult report =
      RunProgram({CgovBinary(), "report", "--db", dir / "h.db", "--by", "project"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("Note: the recorder of this window from "), std::string::npos)
      << report.out;
  EXPECT_NE(report.out.find(" was running as uid 65534 without CAP_SYS_PTRACE"), std::string::npos)
      << report.out;
  // The same daemon as root reads everyone's environment: no warning, no note.
  TempDir root_dir;
  const int root_port = FreePort();
  Started as_root = StartProgram(
      {CgovBinary(), "daemon", "--db", root_dir / "h.db", "--interval", "200ms", "--nvml-lib",
       FakeNvml("full"), "--listen", "127.0.0.1:" + std::to_string(root_port)},
      {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor(TicksTaken(root_port, 2), 20));
  EXPECT_EQ(Curl("http://127.0.0.1:" + std::to_string(root_port) + "/health"), "ok\n\nHTTP 200");
  kill(as_root.pid, SIGTERM);
  RunResult root_stopped = WaitProgram(as_root, 20);
  EXPECT_EQ(root_stopped.err.find("CAP_SYS_PTRACE"), std::string::npos) << root_stopped.err;
}

}  // namespace
}  // namespace cgov::e2e
