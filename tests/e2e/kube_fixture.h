// The Kubernetes node the end-to-end tests share: the shared 4-GPU box with alice's trainer and
// bob's notebook moved into pods (carol's process is in a pod already), and the fake API server
// (tests/fake_kube/api_server.py) that describes them.
#ifndef CGOV_TESTS_E2E_KUBE_FIXTURE_H_
#define CGOV_TESTS_E2E_KUBE_FIXTURE_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process_runner.h"

namespace cgov::e2e {

inline constexpr char kPodA[] = "11111111-2222-4333-8444-555555555555";  // alice's trainer (41000)
inline constexpr char kPodB[] = "22222222-3333-4444-8555-666666666666";  // bob's notebook (42000)
inline constexpr char kPodC[] = "0f6c1e2a-93b4-4c1d-9f3e-5a7b2c8d4e61";  // carol's pod (43000)
inline constexpr char kContainerC[] =
    "4f1a9c2b7d3e8f60a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2";

inline std::string Underscored(std::string uid) {
  std::replace(uid.begin(), uid.end(), '-', '_');
  return uid;
}

inline nlohmann::json Pod(const std::string& uid, const std::string& ns, const std::string& name,
                          const std::string& container, const std::string& container_id,
                          nlohmann::json labels, const std::string& node = "gpu-node-1") {
  return nlohmann::json{{"kind", "Pod"},
                        {"apiVersion", "v1"},
                        {"metadata",
                         {{"name", name},
                          {"namespace", ns},
                          {"uid", uid},
                          {"resourceVersion", "900"},
                          {"labels", labels}}},
                        {"spec", {{"nodeName", node}, {"containers", {{{"name", container}}}}}},
                        {"status",
                         {{"phase", "Running"},
                          {"containerStatuses",
                           {{{"name", container},
                             {"ready", true},
                             {"containerID", "containerd://" + container_id}}}}}}};
}

// The shared box's /proc with alice's trainer and bob's notebook moved into pods (carol's
// process is in a pod already), CGOV_PROJECT left in alice's environment: the labels win.
inline std::string KubeBox(const TempDir& dir) {
  const std::string root = dir / "root";
  std::filesystem::copy(Fixture("proc/shared-box"), root, std::filesystem::copy_options::recursive);
  const std::map<std::string, std::pair<std::string, std::string>> pods = {
      {"41000", {kPodA, std::string(64, 'a')}}, {"42000", {kPodB, std::string(64, 'b')}}};
  for (const auto& [pid, pod] : pods) {
    const std::string cgroup = root + "/proc/" + pid + "/cgroup";
    std::filesystem::remove(cgroup);
    std::ofstream(cgroup) << "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"
                          << Underscored(pod.first) << ".slice/cri-containerd-" << pod.second
                          << ".scope\n";
  }
  return root;
}

struct FakeApi {
  Started process;
  std::string url, log;
};

inline FakeApi StartFakeApi(const TempDir& dir, const nlohmann::json& scenario) {
  WriteFile(dir / "scenario.json", scenario.dump());
  FakeApi api;
  api.log = dir / "api.log";
  api.process = StartProgram({"/usr/bin/python3", DocsFile("../tests/fake_kube/api_server.py"),
                              dir / "scenario.json", dir / "api.port", api.log},
                             {});
  EXPECT_TRUE(WaitFor([&] { return std::filesystem::exists(dir / "api.port"); }, 10));
  api.url = "http://127.0.0.1:" + ReadFile(dir / "api.port");
  return api;
}

}  // namespace cgov::e2e

#endif  // CGOV_TESTS_E2E_KUBE_FIXTURE_H_
