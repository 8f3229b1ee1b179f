// End-to-end (issue 60, item 2): the container image scripts/make-image builds offline (an OCI
// image layout written by umoci from this machine's Debian packages), checked as a runtime would
// take it and run. No container runtime works on these machines (no engine for docker; podman
// not tried: see docs/kubernetes.md), so the image is unpacked by umoci into an OCI runtime
// bundle and its root filesystem run under chroot as the image's own non-root user:
// `--version`, `doctor` on the fake driver (put where the NVIDIA container toolkit puts the
// node's libnvidia-ml.so.1) and the daemon serving /metrics.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

bool OptimizedTree() {
  return ReadFile(BuildDir() + "/CMakeCache.txt").find("CMAKE_BUILD_TYPE:STRING=Debug") ==
         std::string::npos;
}

// A blob of the layout by its digest ("sha256:...").
json Blob(const std::string& layout, const std::string& digest) {
  return json::parse(ReadFile(layout + "/blobs/sha256/" + digest.substr(digest.find(':') + 1)));
}

TEST(ImageE2E, TheImageRunsAsItsNonRootUserWithTheLibrariesItLoads) {
  if (!OptimizedTree())
    GTEST_SKIP() << "a Debug (sanitizer) tree: the image is the optimized one's";
  if (geteuid() != 0) GTEST_SKIP() << "the image is built and run under chroot as root";
  ASSERT_EQ(access("/usr/bin/umoci", X_OK), 0) << "umoci is missing: run scripts/install-deps";
  TempDir dir;
  RunResult made = RunProgram(
      {std::string(CGOV_SOURCE_DIR) + "/scripts/make-image", BuildDir(), dir.path()}, {}, 240);
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  const std::string layout = dir / "cgov-image";

  // The layout as the OCI image spec has it: one manifest tagged with the version, a config
  // with the non-root user, the entry point and the labels.
  const json index = json::parse(ReadFile(layout + "/index.json"));
  ASSERT_EQ(index["manifests"].size(), 1u) << index.dump(1);
  EXPECT_EQ(index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"], "0.1.0");
  const json manifest = Blob(layout, index["manifests"][0]["digest"]);
  ASSERT_EQ(manifest["layers"].size(), 1u) << "one layer, no base image";
  const json config = Blob(layout, manifest["config"]["digest"]);
  EXPECT_EQ(config["config"]["User"], "65532:65532");
  EXPECT_EQ(config["config"]["Entrypoint"], json::array({"/usr/bin/cgov"}));
  EXPECT_EQ(config["config"]["Cmd"], json::array({"daemon", "--listen=0.0.0.0:9474"}));
  const json& labels = config["config"]["Labels"];
  EXPECT_EQ(labels["org.opencontainers.image.title"], "cgov");
  EXPECT_EQ(labels["org.opencontainers.image.version"], "0.1.0");
  EXPECT_EQ(labels["org.opencontainers.image.licenses"], "Apache-2.0");
  EXPECT_TRUE(config["config"]["ExposedPorts"].contains("9474/tcp"));
  const int64_t layer_bytes = manifest["layers"][0]["size"].get<int64_t>();
  EXPECT_LT(layer_bytes, 20 << 20) << "the binary and its libraries, nothing more";

  // Unpacked by umoci into a runtime bundle: its config.json runs the entry point as 65532.
  const std::string bundle = dir / "bundle";
  RunResult unpacked =
      RunProgram({"/usr/bin/umoci", "unpack", "--image", layout + ":0.1.0", bundle}, {}, 120);
  ASSERT_EQ(unpacked.exit_code, 0) << unpacked.err;
  const json runtime = json::parse(ReadFile(bundle + "/config.json"));
  EXPECT_EQ(runtime["process"]["user"]["uid"], 65532);
  EXPECT_EQ(runtime["process"]["args"][0], "/usr/bin/cgov");
  const std::string rootfs = bundle + "/rootfs";
  for (const char* lib : {"libsqlite3.so.0", "libz.so.1", "libcurl.so.4", "libmicrohttpd.so.12",
                          "libgnutls.so.30", "libyaml-0.so.2", "libcrypt.so.1"}) {
    EXPECT_TRUE(std::filesystem::exists(rootfs + "/usr/lib/x86_64-linux-gnu/" + lib) ||
                std::filesystem::exists(rootfs + "/lib/x86_64-linux-gnu/" + lib))
        << lib << ": loaded on demand, so in the image";
  }
  EXPECT_TRUE(std::filesystem::exists(rootfs + "/etc/ssl/certs/ca-certificates.crt"));

  auto in_image = [&](std::vector<std::string> argv) {
    argv.insert(argv.begin(), {"/usr/sbin/chroot", "--userspec=65532:65532", rootfs});
    return argv;
  };
  RunResult version = RunProgram(in_image({"/usr/bin/cgov", "--version"}), {});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_TRUE(version.out.starts_with("cgov 0.1.0")) << version.out;
  // Every library the binary loads on demand resolves inside the image.
  RunResult deps = RunProgram(in_image({"/usr/bin/cgov", "doctor", "--json"}), {});
  EXPECT_EQ(deps.exit_code, 0) << deps.err;

  // The driver as the NVIDIA container toolkit gives it (here the fake one), the shared box's
  // /proc as the node's (--host-root), and the daemon as the image's user, serving /metrics.
  std::filesystem::create_directories(rootfs + "/usr/lib/x86_64-linux-gnu");
  std::filesystem::copy_file(FakeNvml("full"),
                             rootfs + "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  std::filesystem::copy_file(Scenario("shared_box"), rootfs + "/tmp/scenario.json");
  std::filesystem::copy(Fixture("proc/shared-box"), rootfs + "/host",
                        std::filesystem::copy_options::recursive);
  const Env driver = {{"CGOV_FAKE_NVML_SCENARIO", "/tmp/scenario.json"}};
  RunResult doctor = RunProgram(in_image({"/usr/bin/cgov", "doctor"}), driver);
  EXPECT_EQ(doctor.exit_code, 0) << doctor.err;
  EXPECT_NE(doctor.out.find("GPUs:     4"), std::string::npos) << doctor.out;
  const int port = FreePort();
  Started daemon =
      StartProgram(in_image({"/usr/bin/cgov", "daemon", "--interval", "200ms", "--host-root",
                             "/host", "--listen", "127.0.0.1:" + std::to_string(port)}),
                   driver);
  ASSERT_TRUE(WaitFor(TicksTaken(port, 3), 30)) << "the daemon in the image serves /metrics";
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  EXPECT_NE(metrics.find("cgov_gpu_utilization_ratio{"), std::string::npos);
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  // Its history where the image's volume is, owned by the image's user.
  EXPECT_TRUE(std::filesystem::exists(rootfs + "/var/lib/cgov/history.db")) << stopped.err;
}

}  // namespace
}  // namespace cgov::e2e
