// End-to-end: containers outside Kubernetes (issue 47). On the shared 4-GPU box, alice's
// trainer runs in a Docker container (systemd cgroup driver: docker-<id>.scope) and bob's
// notebook in a Podman one (libpod-<id>.scope/container), their runtimes' state under the host
// root (tests/fixtures/containers: Docker's config.v2.json, containers/storage's
// containers.json). The daemon names each container; `cgov report --by container` splits the
// GPU time by those names, Docker's labels give the project, and /metrics carries the names.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

constexpr char kDockerId[] = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
constexpr char kPodmanId[] = "b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c";

TEST(ContainersE2E, DockerAndPodmanContainersAreNamedInTheReportAndMetrics) {
  namespace fs = std::filesystem;
  TempDir dir;
  const std::string root = dir / "root";
  fs::copy(Fixture("proc/shared-box"), root, fs::copy_options::recursive);
  fs::copy(Fixture("containers"), root, fs::copy_options::recursive);
  for (const auto& [pid, cgroup] : std::map<std::string, std::string>{
           {"41000", ReadFile(Fixture("cgroup/docker-v2.cgroup"))},
           {"42000", ReadFile(Fixture("cgroup/podman-v2.cgroup"))}}) {
    fs::remove(root + "/proc/" + pid + "/cgroup");
    std::ofstream(root + "/proc/" + pid + "/cgroup") << cgroup;
  }
  ASSERT_NE(ReadFile(root + "/proc/41000/cgroup").find(kDockerId), std::string::npos);
  ASSERT_NE(ReadFile(root + "/proc/42000/cgroup").find(kPodmanId), std::string::npos);
  const std::string db = dir / "h.db";
  const int port = FreePort();
  Started daemon = StartProgram(
      {CgovBinary(), "daemon", "--db", db, "--interval", "1s", "--commit-every", "1s", "--nvml-lib",
       FakeNvml("full"), "--host-root", root, "--listen", "127.0.0.1:" + std::to_string(port)},
      {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor(TicksTaken(port, 3), 30));
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  auto report = [&](const std::string& by) {
    return ReportJson({"--db", db, "--since", "1h", "--by", by});
  };
  const json by_container = report("container"), by_project = report("project"),
             by_user = report("user");
  std::map<std::string, double> container = HeldByKey(by_container),
                                project = HeldByKey(by_project), user = HeldByKey(by_user);
  EXPECT_GT(container["trainer"], 0) << by_container["who"].dump(1);
  EXPECT_GT(container["nb-bob"], 0) << by_container["who"].dump(1);
  EXPECT_DOUBLE_EQ(container["trainer"], user["alice"]);
  EXPECT_DOUBLE_EQ(container["nb-bob"], user["bob"]);
  // Docker's project-id label wins over the CGOV_PROJECT=llm of the process's environment.
  EXPECT_DOUBLE_EQ(project["llm-docker"], container["trainer"]) << by_project["who"].dump(1);
  EXPECT_EQ(project.count("llm"), 0u);
  EXPECT_EQ(by_container["held_gpu_seconds"], by_user["held_gpu_seconds"]);
  // The history keeps the names beside the identities.
  EXPECT_EQ(QueryDb(db,
                    "SELECT count(*) FROM kube_container WHERE pod_uid = '' AND name IN "
                    "('trainer', 'nb-bob')"),
            2);
  // /metrics: the container label names them; no pod.
  EXPECT_NE(metrics.find("user=\"alice\",project=\"llm-docker\",team=\"research\",namespace=\"\","
                         "pod=\"\",container=\"trainer\","),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("namespace=\"\",pod=\"\",container=\"nb-bob\","), std::string::npos);
  // The daemon's own figures, as every exporter serves them (issue 48).
  for (const char* family :
       {"process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_open_fds ",
        "process_max_fds ", "process_start_time_seconds "}) {
    EXPECT_NE(metrics.find(std::string("\n") + family), std::string::npos) << family;
  }
}

}  // namespace
}  // namespace cgov::e2e
