#include "identity/local_containers.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"
#include "telemetry/procfs_pid.h"

namespace cgov {
namespace {

using testing::FixturePath;
using testing::ReadFixture;

constexpr char kDockerId[] = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
constexpr char kPodmanId[] = "b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c";

// Issue 47: a Docker container's name and labels from its config.v2.json (the engine's layout:
// tests/fixtures/README.md), the labels read through the pods' label keys.
TEST(LocalContainers, DockersConfigNamesTheContainerAndItsLabelsTheOwners) {
  Result<LocalContainer> c =
      ParseDockerConfig(ReadFixture(std::string("containers/var/lib/docker/containers/") +
                                    kDockerId + "/config.v2.json"),
                        DefaultKubeLabelMap());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->runtime, "docker");
  EXPECT_EQ(c->name, "trainer") << "without Docker's leading '/'";
  EXPECT_EQ(c->project, "llm-docker");
  EXPECT_EQ(c->team, "research");
  EXPECT_EQ(c->user, "");
  EXPECT_FALSE(ParseDockerConfig("{\"Config\":{}}", DefaultKubeLabelMap()).ok()) << "no Name";
  EXPECT_FALSE(ParseDockerConfig("[1,", DefaultKubeLabelMap()).ok());
  Result<LocalContainer> hostile =
      ParseDockerConfig("{\"Name\":\"/x\\u001b]0;pwned\\u0007\"}", DefaultKubeLabelMap());
  ASSERT_TRUE(hostile.ok());
  EXPECT_EQ(hostile->name, "x\\x1b]0;pwned\\x07") << "a name reaches terminals and labels escaped";
}

size_t PeakRssKib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("VmHWM:")) return std::stoul(line.substr(6));
  }
  return 0;
}

// Issue 58, 10: a 16 MiB deeply nested config.v2.json took the daemon from 21 MB to 645 MB RSS;
// a 1 MiB Podman name was stored whole (a 14 MB text report). Memory follows what is kept;
// names are cut where they are stored.
TEST(LocalContainers, StateFilesCostWhatIsKeptNotWhatIsSent) {
  const size_t levels = 8 << 20;
  std::string deep =
      "{\"Name\":\"/big\",\"Config\":{\"Labels\":{\"cgov.io/project\":\"p\"}},\"Junk\":";
  deep.reserve(deep.size() + 2 * levels + 2);
  deep.append(levels, '[');
  deep.append(levels, ']');
  deep += "}";
  const size_t before = PeakRssKib();
  Result<LocalContainer> c = ParseDockerConfig(deep, DefaultKubeLabelMap());
  const size_t grown_mib = (PeakRssKib() - before) / 1024;
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->name, "big");
  // The DOM it replaced grew it by ~600 MiB; the sanitizer tree's quarantine adds some.
  EXPECT_LT(grown_mib, 128u) << "reading a 16 MiB file grew the peak RSS by " << grown_mib
                             << " MiB";
  const std::string huge(1 << 20, 'n');
  Result<LocalContainer> named =
      ParseDockerConfig("{\"Name\":\"/" + huge + "\"}", DefaultKubeLabelMap());
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->name.size(), kMaxContainerName);
  Result<std::map<std::string, std::string>> podman = ParsePodmanContainers(
      std::string("[{\"id\":\"") + kPodmanId + "\",\"names\":[\"" + huge + "\",\"b\"]}]");
  ASSERT_TRUE(podman.ok()) << podman.status().message();
  EXPECT_EQ(podman->at(kPodmanId).size(), kMaxContainerName);
}

TEST(LocalContainers, PodmansContainersJsonNamesItsContainers) {
  Result<std::map<std::string, std::string>> names = ParsePodmanContainers(
      ReadFixture("containers/var/lib/containers/storage/overlay-containers/containers.json"));
  ASSERT_TRUE(names.ok()) << names.status().message();
  ASSERT_EQ(names->size(), 1u) << "an entry whose id is not a container id is skipped";
  EXPECT_EQ(names->at(kPodmanId), "nb-bob");
  EXPECT_FALSE(ParsePodmanContainers("{}").ok());
}

// Found under the host root by the id the cgroup path names; remembered, found or not; an id that
// is not 64 hex digits never becomes a path.
TEST(LocalContainers, FoundByTheIdTheCgroupPathNames) {
  FakeFileReader files;
  ASSERT_TRUE(files.LoadTree(FixturePath("containers"), "").ok());
  LocalContainers local(&files);
  const CgroupIdentity docker = ParseCgroup(ReadFixture("cgroup/docker-v2.cgroup"));
  const CgroupIdentity podman = ParseCgroup(ReadFixture("cgroup/podman-v2.cgroup"));
  ASSERT_EQ(podman.container_id, kPodmanId) << "libpod-<id>.scope/container";
  std::optional<LocalContainer> a = local.Find(docker.container_id);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "trainer");
  std::optional<LocalContainer> b = local.Find(podman.container_id);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->runtime, "podman");
  EXPECT_EQ(b->name, "nb-bob");
  EXPECT_FALSE(local.Find(std::string(64, 'c')).has_value()) << "no runtime knows it";
  const size_t reads = files.reads().size();
  EXPECT_TRUE(local.Find(docker.container_id).has_value());
  EXPECT_FALSE(local.Find(std::string(64, 'c')).has_value());
  EXPECT_EQ(files.reads().size(), reads) << "remembered, found or not";
  EXPECT_FALSE(local.Find("../../etc").has_value());
  EXPECT_EQ(files.reads().size(), reads) << "not a container id: nothing read";
  local.Clear();
  EXPECT_TRUE(local.Find(docker.container_id).has_value());
  EXPECT_GT(files.reads().size(), reads) << "read again after Clear (SIGHUP)";
}

// Hostile state under the host root: a FIFO where config.v2.json goes (read as is, it would stall
// the daemon's tick), /dev/zero as containers.json (it never ends), a directory. Each is refused
// at once: the container is known by its id only.
TEST(LocalContainers, AFifoADeviceOrADirectoryIsNoStateFile) {
  char dir_template[] = "/tmp/cgov_local_XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string root = dir_template;
  const std::string docker = root + "/var/lib/docker/containers/" + kDockerId;
  const std::string podman = root + "/var/lib/containers/storage/overlay-containers";
  std::filesystem::create_directories(docker);
  std::filesystem::create_directories(podman);
  ASSERT_EQ(mkfifo((docker + "/config.v2.json").c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/zero", podman + "/containers.json");
  RootedFileReader files(root);
  LocalContainers local(&files);
  EXPECT_FALSE(local.Find(kDockerId).has_value());
  std::filesystem::remove(docker + "/config.v2.json");
  std::filesystem::create_directory(docker + "/config.v2.json");
  local.Clear();
  EXPECT_FALSE(local.Find(kDockerId).has_value());
  std::string out;
  EXPECT_EQ(files
                .ReadRegular("/var/lib/containers/storage/overlay-containers/containers.json",
                             1 << 20, &out)
                .code(),
            StatusCode::kInvalidArgument);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace cgov
