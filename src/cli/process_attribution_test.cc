#include "cli/process_attribution.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <gtest/gtest.h>

#include "cli/history_writer.h"
#include "os/fake_file_reader.h"

namespace cgov::cli {
namespace {

// The job's environment is its user's to write: CGOV_PROJECT and CGOV_TEAM come out valid UTF-8
// without control characters (they reach /metrics labels and terminals; issue 21, item 8).
TEST(IdentityOf, HostileEnvironmentValuesAreEscaped) {
  ProcessIdentity process;
  process.user = "alice";
  const std::string environ = std::string("CGOV_PROJECT=\xff\x1b]0;pwned\x07") + '\0' +
                              "CGOV_TEAM=ok" + '\0' + "CGOV_TAGS=a=b" + '\0';
  IdentityRecord r = IdentityOf(process, "alice", environ);
  EXPECT_EQ(r.project, "\\xff\\x1b]0;pwned\\x07");
  EXPECT_EQ(r.team, "ok");
  EXPECT_EQ(r.tags, "a=b");
}

// Without Slurm's cgroup plugin the job is named by SLURM_JOB_ID in the process's environment:
// taken when it is a number and the cgroup said nothing; the cgroup's job wins.
TEST(IdentityOf, SlurmJobFromTheEnvironmentWhenTheCgroupSaysNothing) {
  ProcessIdentity process;
  process.user = "alice";
  auto env = [](const std::string& job) { return "PATH=/bin" + std::string(1, '\0') +
                                                 "SLURM_JOB_ID=" + job + '\0'; };
  EXPECT_EQ(IdentityOf(process, "alice", env("4242117")).slurm_job, "4242117");
  for (const char* bad : {"", "12a", "1 2", "../x", "123456789012345678901"}) {
    EXPECT_EQ(IdentityOf(process, "alice", env(bad)).slurm_job, "") << bad;
  }
  process.cgroup.slurm_job_id = "77";
  EXPECT_EQ(IdentityOf(process, "alice", env("4242117")).slurm_job, "77");
}

size_t ReadsOf(const FakeFileReader& files, const std::string& path) {
  return static_cast<size_t>(std::count(files.reads().begin(), files.reads().end(), path));
}

TEST(ProcessAttributor, ForgetsThePidsNotLookedUpSinceTheLastTickAndReadsThemAgain) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("cgov_attribution_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    auto writer = HistoryWriter::Open((dir / "h.db").string());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    FakeFileReader files;  // no /proc: every process has vanished, and is read once all the same
    ProcessAttributor attributor(&files, &(*writer)->store());

    ASSERT_TRUE(attributor.Lookup(101).ok());
    ASSERT_TRUE(attributor.Lookup(102).ok());
    attributor.ForgetUnseen();  // a tick that saw both
    EXPECT_EQ(attributor.cached(), 2u);

    const size_t reads_of_102 = ReadsOf(files, "/proc/102/stat");
    ASSERT_TRUE(attributor.Lookup(102).ok());  // cached: not read again
    EXPECT_EQ(ReadsOf(files, "/proc/102/stat"), reads_of_102);
    attributor.ForgetUnseen();  // a tick that saw 102 alone
    EXPECT_EQ(attributor.cached(), 1u);

    const size_t reads_of_101 = ReadsOf(files, "/proc/101/stat");
    ASSERT_TRUE(attributor.Lookup(101).ok());  // back after being forgotten: read again
    EXPECT_GT(ReadsOf(files, "/proc/101/stat"), reads_of_101);
    attributor.ForgetUnseen();
    EXPECT_EQ(attributor.cached(), 1u);
    attributor.ForgetUnseen();  // a tick with no GPU process
    EXPECT_EQ(attributor.cached(), 0u);
  }
  std::filesystem::remove_all(dir);
}

TEST(ApplyKubePod, NamesAndLabelsThePolicyNotTheEnvironment) {
  KubePod pod;
  pod.namespace_name = "ml";
  pod.name = "train-0";
  pod.containers["abc"] = "trainer";
  pod.team = "research";
  pod.user = "alice";
  IdentityRecord r;
  r.user = "root";  // the uid the container runs as
  r.container = "abc";
  r.project = "from-env";
  ApplyKubePod(pod, &r);
  EXPECT_EQ(r.kube_namespace, "ml");
  EXPECT_EQ(r.kube_pod_name, "train-0");
  EXPECT_EQ(r.kube_container_name, "trainer");
  EXPECT_EQ(r.project, "") << "no project-id label: unlabelled, whatever the process says";
  EXPECT_EQ(r.team, "research");
  EXPECT_EQ(r.user, "alice");
}

// A process seen before its pod's description arrived is named once it does: the cached
// process is re-resolved when the directory changes, without reading /proc again.
TEST(ProcessAttributor, APodDescribedLaterNamesItsCachedProcesses) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("cgov_attribution_kube_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    auto writer = HistoryWriter::Open((dir / "h.db").string());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    FakeFileReader files;
    files.Set("/proc/201/stat", "201 (python) S 1 201 201 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 "
                                "100 0 0");
    files.Set("/proc/201/cgroup", "0::/kubepods.slice/kubepods-pod11111111_2222_4333_8444_"
                                  "555555555555.slice/cri-containerd-" + std::string(64, 'a') +
                                  ".scope\n");
    KubePodDirectory pods(DefaultKubeLabelMap());
    ProcessAttributor attributor(&files, &(*writer)->store());
    attributor.SetPods(&pods);
    auto first = attributor.Lookup(201);
    ASSERT_TRUE(first.ok()) << first.status().message();
    ASSERT_TRUE(pods.ApplyEvent(R"({"type":"ADDED","object":{"metadata":{"uid":)"
                                R"("11111111-2222-4333-8444-555555555555","namespace":"ml",)"
                                R"("name":"train-0","labels":{"project-id":"llm"}},"status":)"
                                R"({"containerStatuses":[{"name":"trainer","containerID":)"
                                R"("containerd://)" + std::string(64, 'a') + R"("}]}}})", 0).ok());
    const size_t reads = ReadsOf(files, "/proc/201/stat");
    auto second = attributor.Lookup(201);
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(ReadsOf(files, "/proc/201/stat"), reads) << "not read again";
    EXPECT_NE(second->identity_id, first->identity_id);
    auto identities = (*writer)->store().Identities();
    ASSERT_TRUE(identities.ok());
    const IdentityRecord& named = identities->at(second->identity_id);
    EXPECT_EQ(named.project, "llm");
    EXPECT_EQ(named.kube_namespace, "ml");
    EXPECT_EQ(named.kube_pod_name, "train-0");
    EXPECT_EQ(named.kube_container_name, "trainer");
    EXPECT_EQ(attributor.Lookup(201)->identity_id, second->identity_id) << "stable after";
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cgov::cli
