#include "identity/process_attribution.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/showback.h"
#include "app/history/history_writer.h"
#include "app/history/stored_tick.h"
#include "fakes/fake_file_reader.h"

namespace cgov {
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

// Regression (issue 43, 11): CGOV_TAGS="project=nlp,team=lang" was stored, but `--by project`
// showed "(unknown)".
TEST(IdentityOf, ProjectAndTeamFromCgovTags) {
  ProcessIdentity process;
  process.user = "alice";
  const std::string tags_only = std::string("CGOV_TAGS=project=nlp,team=lang") + '\0';
  IdentityRecord r = IdentityOf(process, "alice", tags_only);
  EXPECT_EQ(r.project, "nlp");
  EXPECT_EQ(r.team, "lang");
  EXPECT_EQ(HistoryKey(HistoryBy::kProject, r, "box"), "nlp");
  const std::string both = std::string("CGOV_PROJECT=vision") + '\0' + tags_only;
  EXPECT_EQ(IdentityOf(process, "alice", both).project, "vision") << "CGOV_PROJECT wins";
  // A database written before: the project only in the stored tags.
  IdentityRecord old;
  old.tags = "project=nlp,team=lang";
  EXPECT_EQ(HistoryKey(HistoryBy::kProject, old, "box"), "nlp");
  EXPECT_EQ(HistoryKey(HistoryBy::kTeam, old, "box"), "lang");
  old.kube_pod_name = "train-0";  // a described pod: its labels are the policy, not the tags
  EXPECT_EQ(HistoryKey(HistoryBy::kProject, old, "box"), "(unlabelled)");
}

// Without Slurm's cgroup plugin the job is named by SLURM_JOB_ID in the process's environment:
// taken when it is a number and the cgroup said nothing; the cgroup's job wins.
TEST(IdentityOf, SlurmJobFromTheEnvironmentWhenTheCgroupSaysNothing) {
  ProcessIdentity process;
  process.user = "alice";
  auto env = [](const std::string& job) {
    return "PATH=/bin" + std::string(1, '\0') + "SLURM_JOB_ID=" + job + '\0';
  };
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

// A watch the test drives: `exited` are the processes that exit before the next tick.
class FakeExitWatch : public ProcessExitWatch {
 public:
  FakeExitWatch(std::set<uint32_t>* watched, std::vector<uint32_t>* exited)
      : watched_(watched), exited_(exited) {}
  bool Watch(uint32_t pid) override { return watched_->insert(pid), true; }
  void Forget(uint32_t pid) override { watched_->erase(pid); }
  std::vector<uint32_t> TakeExited() override {
    std::vector<uint32_t> out;
    for (uint32_t pid : *exited_) {
      if (watched_->erase(pid) > 0) out.push_back(pid);
    }
    exited_->clear();
    return out;
  }

 private:
  std::set<uint32_t>* watched_;
  std::vector<uint32_t>* exited_;
};

// Regression (issue 43, 13): alice's process exited and carol's took its pid within one sample:
// carol's GPU time was attributed to alice (the cache knew the pid, not the process).
TEST(ProcessAttributor, APidReusedWithinOneSampleNamesItsNewProcess) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("cgov_pid_reuse_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    auto writer = HistoryWriter::Open((dir / "h.db").string());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    FakeFileReader files;
    files.Set("/etc/passwd",
              "alice:x:1001:1001::/home/alice:/bin/sh\n"
              "carol:x:1003:1003::/home/carol:/bin/sh\n");
    auto process = [&](const std::string& comm, int uid, int start_ticks) {
      files.Set("/proc/101/stat", "101 (" + comm +
                                      ") S 1 101 101 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 " +
                                      std::to_string(start_ticks) + " 0 0");
      const std::string id = std::to_string(uid);
      files.Set("/proc/101/status",
                "Name:\t" + comm + "\nUid:\t" + id + "\t" + id + "\t" + id + "\t" + id + "\n");
    };
    std::set<uint32_t> watched;
    std::vector<uint32_t> exited;
    ProcessAttributor attributor(&files, &(*writer)->store());
    attributor.SetExitWatch(std::make_unique<FakeExitWatch>(&watched, &exited));
    process("python", 1001, 100);
    auto alice = attributor.Lookup(101);
    ASSERT_TRUE(alice.ok());
    attributor.ForgetUnseen();
    EXPECT_EQ(watched.count(101), 1u) << "watched from its first read";
    // Still alice's: cached, not read again (one read a process, not one a tick).
    const size_t reads = ReadsOf(files, "/proc/101/stat");
    EXPECT_EQ(attributor.Lookup(101)->identity_id, alice->identity_id);
    EXPECT_EQ(ReadsOf(files, "/proc/101/stat"), reads);
    attributor.ForgetUnseen();
    // alice's process exits and carol's takes pid 101 before the next tick.
    process("train", 1003, 900);
    exited.push_back(101);
    auto carol = attributor.Lookup(101);
    ASSERT_TRUE(carol.ok());
    EXPECT_EQ(attributor.exited(), std::vector<uint32_t>{101}) << "the policy's cache drops it too";
    EXPECT_NE(carol->identity_id, alice->identity_id);
    auto identities = (*writer)->store().Identities();
    ASSERT_TRUE(identities.ok());
    EXPECT_EQ((*identities)[carol->identity_id].user, "carol");
    EXPECT_EQ((*identities)[alice->identity_id].user, "alice");
    EXPECT_NE(carol->command_id, alice->command_id);
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

// Process 201, in pod 11111111-... (container "aaa..."), as /proc shows it.
void SetPodProcess(FakeFileReader* files) {
  files->Set("/proc/201/stat",
             "201 (python) S 1 201 201 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0");
  files->Set("/proc/201/cgroup",
             "0::/kubepods.slice/kubepods-pod11111111_2222_4333_8444_"
             "555555555555.slice/cri-containerd-" +
                 std::string(64, 'a') + ".scope\n");
}

// The watch event that describes process 201's pod, ml/train-0, with these labels.
std::string TrainPodAdded(const std::string& labels) {
  return R"({"type":"ADDED","object":{"metadata":{"uid":"11111111-2222-4333-8444-555555555555",)"
         R"("namespace":"ml","name":"train-0","labels":{)" +
         labels +
         R"(}},"status":)"
         R"({"containerStatuses":[{"name":"trainer","containerID":"containerd://)" +
         std::string(64, 'a') + R"("}]}}})";
}

// A history database, process 201 in pod ml/train-0 on /proc, and an empty pod directory.
class KubeAttribution : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov_kube_attribution_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto writer = HistoryWriter::Open((dir_ / "h.db").string());
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    writer_ = std::move(writer).value();
    SetPodProcess(&files_);
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(dir_);
  }
  HistoryStore& store() { return writer_->store(); }

  std::filesystem::path dir_;
  std::unique_ptr<HistoryWriter> writer_;
  FakeFileReader files_;
  KubePodDirectory pods_{DefaultKubeLabelMap()};
};

// A process seen before its pod's description arrived is named once it does: the cached
// process is re-resolved when the directory changes, without reading /proc again.
TEST_F(KubeAttribution, APodDescribedLaterNamesItsCachedProcesses) {
  ProcessAttributor attributor(&files_, &store());
  attributor.SetPods(&pods_);
  auto first = attributor.Lookup(201);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(pods_.ApplyEvent(TrainPodAdded(R"("project-id":"llm")"), 0).ok());
  const size_t reads = ReadsOf(files_, "/proc/201/stat");
  auto second = attributor.Lookup(201);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(ReadsOf(files_, "/proc/201/stat"), reads) << "not read again";
  EXPECT_NE(second->identity_id, first->identity_id);
  auto identities = store().Identities();
  ASSERT_TRUE(identities.ok());
  const IdentityRecord& named = identities->at(second->identity_id);
  EXPECT_EQ(named.project, "llm");
  EXPECT_EQ(named.kube_namespace, "ml");
  EXPECT_EQ(named.kube_pod_name, "train-0");
  EXPECT_EQ(named.kube_container_name, "trainer");
  EXPECT_EQ(attributor.Lookup(201)->identity_id, second->identity_id) << "stable after";
}

// The device plugin's IDs name GPUs by UUID, by MIG instance, by a time-slicing replica of a
// UUID, or (its index strategy) by index; another vendor's devices name none.
TEST(AllocatedGpus, DeviceIdsNameGpusAsTheDevicePluginDoes) {
  std::vector<GpuInfo> gpus(4);
  for (unsigned i = 0; i < 3; ++i) {
    gpus[i].index = i;
    gpus[i].uuid = "GPU-" + std::to_string(i);
  }
  gpus[3].index = 3;
  gpus[3].uuid = "MIG-a";
  gpus[3].mig = MigInstance{};
  gpus[3].mig->parent_uuid = "GPU-3";
  auto device = [](std::string pod, std::string resource, std::string id) {
    return PodDevice{"ns", std::move(pod), "c", std::move(resource), std::move(id)};
  };
  const std::vector<GpuAllocation> got = AllocatedGpus(
      {device("a", "nvidia.com/gpu", "GPU-1"), device("a", "nvidia.com/gpu", "GPU-1"),
       device("b", "nvidia.com/gpu.shared", "GPU-0::2"), device("c", "nvidia.com/gpu", "2"),
       device("d", "nvidia.com/mig-1g.10gb", "MIG-a"), device("e", "nvidia.com/gpu", "GPU-3"),
       device("f", "example.com/fpga", "1"), device("g", "nvidia.com/gpu", "GPU-9"),
       device("h", "nvidia.com/gpu", "3")},
      gpus);
  const std::vector<GpuAllocation> want = {{0, "ns", "b", "c"},
                                           {1, "ns", "a", "c"},
                                           {2, "ns", "c", "c"},
                                           {3, "ns", "d", "c"},
                                           {3, "ns", "e", "c"}};
  EXPECT_EQ(got, want) << "index 3 is a MIG GPU: its index names no whole GPU cgov samples";
}

// An allocated container is stored as holding its GPU unless a process of its pod computes on
// it; a pod the directory does not know yet is left out (no UID, no labels to charge it by).
TEST_F(KubeAttribution, AnAllocatedContainerHoldsItsGpuUnlessItsProcessIsSeenOnIt) {
  ASSERT_TRUE(pods_.ApplyEvent(TrainPodAdded(R"("project-id":"llm","team-id":"r")"), 0).ok());
  ProcessAttributor attributor(&files_, &store());
  attributor.SetPods(&pods_);
  ASSERT_TRUE(attributor.Lookup(201).ok());
  StoredTick tick;
  tick.gpus.resize(3);
  StoredProcess p;
  p.gpu_pos = 1;
  p.pid = 201;
  p.compute = true;
  tick.processes = {p};
  const std::vector<GpuAllocation> allocated = {{0, "ml", "train-0", "trainer"},
                                                {1, "ml", "train-0", "trainer"},
                                                {2, "ml", "not-yet-listed", "x"},
                                                {7, "ml", "train-0", "trainer"}};
  ASSERT_TRUE(AddAllocations(allocated, &attributor, &tick).ok());
  ASSERT_EQ(tick.allocations.size(), 1u) << "GPU 1 has the pod's process; GPU 2's pod is unknown";
  EXPECT_EQ(tick.allocations[0].gpu_pos, 0u);
  auto identities = store().Identities();
  ASSERT_TRUE(identities.ok());
  const IdentityRecord& held = identities->at(tick.allocations[0].identity_id);
  EXPECT_EQ(held.pod, "11111111-2222-4333-8444-555555555555");
  EXPECT_EQ(held.container, std::string(64, 'a'));
  EXPECT_EQ(held.project, "llm");
  EXPECT_EQ(held.team, "r");
  EXPECT_EQ(held.kube_namespace, "ml");
  EXPECT_EQ(held.kube_pod_name, "train-0");
  EXPECT_EQ(held.kube_container_name, "trainer");
  EXPECT_EQ(held.user, "") << "no process: no user";
}

}  // namespace
}  // namespace cgov
