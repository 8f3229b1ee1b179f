// The pod-resources client: the decoder on protoc's own encoding of a kubelet-shaped answer
// (tests/fixtures/pod-resources), malformed messages, and List over a unix socket against a real
// gRPC server (tests/fake_kube/pod_resources_server.py, Debian's python3-grpcio).
#include "identity/pod_resources.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cgov {
namespace {

using ::testing::HasSubstr;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Fixture(const std::string& name) {
  return std::string(CGOV_FIXTURES_DIR) + "/pod-resources/" + name;
}

// list.bin is what protoc makes of list.textproto with the kubelet's message shapes: the bytes
// the decoder is tested on are protobuf's own.
TEST(PodResources, TheFixtureIsProtocsEncodingOfItsText) {
  const std::string dir = std::string(CGOV_FIXTURES_DIR) + "/../fake_kube";
  const std::string command = "protoc --encode=v1.ListPodResourcesResponse -I " + dir + " " + dir +
                              "/podresources_v1.proto < " + Fixture("list.textproto");
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << "protoc (Debian protobuf-compiler, scripts/install-deps)";
  EXPECT_EQ(out, ReadAll(Fixture("list.bin")));
}

TEST(PodResources, DecodesEveryDeviceOfEveryContainerAndSkipsWhatItDoesNotRead) {
  const std::string bin = ReadAll(Fixture("list.bin"));
  ASSERT_FALSE(bin.empty());
  Result<std::vector<PodDevice>> devices = DecodeListPodResourcesResponse(bin);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  const std::vector<PodDevice> want = {
      {"ml", "train-0", "trainer", "nvidia.com/gpu", "GPU-0a1b2c3d-0000-4000-8000-000000000000"},
      {"ml", "train-0", "trainer", "nvidia.com/gpu", "GPU-0a1b2c3d-0000-4000-8000-000000000001"},
      {"notebooks", "nb-bob", "notebook", "nvidia.com/mig-1g.10gb",
       "MIG-5c9e1f42-7a3d-5b8e-9c0f-1d2e3f4a5b6c"},
      {"notebooks", "nb-bob", "notebook", "nvidia.com/gpu.shared",
       "GPU-0a1b2c3d-0000-4000-8000-000000000002::3"},
  };
  EXPECT_EQ(*devices, want);
  EXPECT_TRUE(DecodeListPodResourcesResponse("")->empty()) << "no pods";
}

// A length-delimited field (short: one-byte key and length).
std::string Len(int field, const std::string& bytes) {
  return std::string(1, static_cast<char>(field << 3 | 2)) +
         std::string(1, static_cast<char>(bytes.size())) + bytes;
}

TEST(PodResources, FieldsInAnyOrderAndUnknownFieldsOfEveryWireType) {
  // PodResources with namespace (2) before name (1), a varint field 9, a fixed64 field 10 and a
  // fixed32 field 11 that a newer kubelet might send; one container with one device.
  const std::string device = Len(1, "r") + Len(2, "id");
  const std::string container = Len(2, device) + Len(1, "c");
  const std::string pod = Len(2, "ns") + Len(1, "p") + "\x48\x96\x01" + "\x51" +
                          std::string(8, '\0') + "\x5d" + std::string(4, '\0') + Len(3, container);
  const std::string message = Len(1, pod);
  Result<std::vector<PodDevice>> devices = DecodeListPodResourcesResponse(message);
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0], (PodDevice{"ns", "p", "c", "r", "id"}));
}

TEST(PodResources, MalformedMessagesAreErrorsThatSayWhere) {
  const std::string bin = ReadAll(Fixture("list.bin"));
  for (size_t cut : {1ul, 2ul, 40ul, bin.size() - 1}) {
    Result<std::vector<PodDevice>> r = DecodeListPodResourcesResponse(bin.substr(0, cut));
    EXPECT_FALSE(r.ok()) << "cut at " << cut;
    EXPECT_THAT(r.status().message(), HasSubstr("malformed ListPodResourcesResponse")) << cut;
  }
  EXPECT_THAT(DecodeListPodResourcesResponse(std::string("\x08\x01", 2)).status().message(),
              HasSubstr("not length-delimited"))
      << "pod_resources as a varint";
  EXPECT_THAT(DecodeListPodResourcesResponse(std::string("\x0b", 1)).status().message(),
              HasSubstr("wire type 3"));
  EXPECT_THAT(DecodeListPodResourcesResponse(std::string("\x00\x01", 2)).status().message(),
              HasSubstr("at byte 0: field number out of range"));

  EXPECT_EQ(*GrpcUnaryMessage(std::string("\0\0\0\0\2hi", 7)), "hi");
  EXPECT_THAT(GrpcUnaryMessage(std::string("\1\0\0\0\2hi", 7)).status().message(),
              HasSubstr("compressed"));
  EXPECT_THAT(GrpcUnaryMessage(std::string("\0\0\0\0\3hi", 7)).status().message(),
              HasSubstr("a 3-byte message in 2 bytes"));
  EXPECT_FALSE(GrpcUnaryMessage("abc").ok());
}

// The fake kubelet endpoint on a socket in a temporary directory, for the life of the test.
class FakeKubelet {
 public:
  explicit FakeKubelet(const std::string& answer_file) {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov_podres_" + std::to_string(::getpid()) + "_" + std::to_string(++count_));
    std::filesystem::create_directories(dir_);
    std::filesystem::copy_file(answer_file, dir_ / "answer.textproto");
    const std::string script =
        std::string(CGOV_FIXTURES_DIR) + "/../fake_kube/pod_resources_server.py";
    pid_ = fork();
    if (pid_ == 0) {
      execl("/usr/bin/python3", "python3", script.c_str(), socket().c_str(),
            (dir_ / "answer.textproto").c_str(), (dir_ / "log").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200 && !std::filesystem::exists(socket()); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~FakeKubelet() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    std::filesystem::remove_all(dir_);
  }
  std::string socket() const { return (dir_ / "kubelet.sock").string(); }
  void Answer(const std::string& text) const { std::ofstream(dir_ / "answer.textproto") << text; }
  std::string log() const { return ReadAll((dir_ / "log").string()); }

 private:
  static inline int count_ = 0;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

TEST(PodResources, ListsOverTheUnixSocketFromARealGrpcServer) {
  FakeKubelet kubelet(Fixture("list.textproto"));
  ASSERT_TRUE(std::filesystem::exists(kubelet.socket()))
      << "python3-grpcio and protoc come from scripts/install-deps";
  Result<std::vector<PodDevice>> devices =
      ListPodResources(kubelet.socket(), std::chrono::seconds(10));
  ASSERT_TRUE(devices.ok()) << devices.status().message();
  EXPECT_EQ(*devices, *DecodeListPodResourcesResponse(ReadAll(Fixture("list.bin"))));
  EXPECT_THAT(kubelet.log(), HasSubstr("\"request_bytes\": 0")) << "an empty request message";
  EXPECT_THAT(kubelet.log(), HasSubstr("cgov/"));

  kubelet.Answer("# status: PERMISSION_DENIED not for you\n");
  Result<std::vector<PodDevice>> denied =
      ListPodResources(kubelet.socket(), std::chrono::seconds(10));
  ASSERT_FALSE(denied.ok());
  EXPECT_THAT(denied.status().message(),
              HasSubstr("List answered gRPC status 7 PERMISSION_DENIED: not for you"));
  EXPECT_THAT(denied.status().message(), HasSubstr(kubelet.socket()));

  Result<std::vector<PodDevice>> missing =
      ListPodResources(kubelet.socket() + ".nope", std::chrono::seconds(1));
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file or directory"));
  EXPECT_THAT(missing.status().message(), HasSubstr("/var/lib/kubelet/pod-resources"));
  EXPECT_THAT(ListPodResources(CGOV_FIXTURES_DIR, std::chrono::seconds(1)).status().message(),
              HasSubstr("not a socket"));
  // A socket nobody listens on (a kubelet that stopped): said in words that do not change.
  const std::string dead = kubelet.socket() + ".dead";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", dead.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::close(fd);  // bound, never listening: connect() is refused
  EXPECT_THAT(ListPodResources(dead, std::chrono::seconds(1)).status().message(),
              HasSubstr("nothing answers on it (is the kubelet running?)"));
  std::filesystem::remove(dead);
}

// The poller keeps the last answer, moves its generation only when the devices change, and drops
// what it knew once the kubelet has failed for stale_after.
TEST(PodResources, PollerFollowsChangesAndForgetsAStaleAnswer) {
  FakeKubelet kubelet(Fixture("list.textproto"));
  PodResourcesOptions o;
  o.socket_path = kubelet.socket();
  o.interval = std::chrono::milliseconds(50);
  o.stale_after = std::chrono::milliseconds(300);
  Result<std::unique_ptr<PodResourcesPoller>> started = PodResourcesPoller::Start(o);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PodResourcesPoller& poller = **started;
  EXPECT_TRUE(poller.healthy()) << poller.LastError();
  EXPECT_EQ(poller.Current()->devices.size(), 4u) << "known before Start returns";
  const uint64_t first = poller.Current()->generation;
  const uint64_t calls = poller.calls();
  auto wait = [&](auto done) {
    for (int i = 0; i < 200 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    return done();
  };
  ASSERT_TRUE(wait([&] { return poller.calls() >= calls + 2; }));
  EXPECT_EQ(poller.Current()->generation, first) << "the same answer is not a change";

  kubelet.Answer(
      "pod_resources { name: \"p\" namespace: \"n\" containers { name: \"c\" devices { "
      "resource_name: \"nvidia.com/gpu\" device_ids: \"GPU-x\" } } }\n");
  ASSERT_TRUE(wait([&] { return poller.Current()->devices.size() == 1; }));
  EXPECT_GT(poller.Current()->generation, first);

  kubelet.Answer("# status: UNAVAILABLE kubelet restarting\n");
  ASSERT_TRUE(wait([&] { return !poller.healthy(); }));
  EXPECT_THAT(poller.LastError(), HasSubstr("UNAVAILABLE: kubelet restarting"));
  EXPECT_EQ(poller.Current()->devices.size(), 1u) << "kept for a while";
  ASSERT_TRUE(wait([&] { return poller.Current()->devices.empty(); })) << "stale: dropped";
}

}  // namespace
}  // namespace cgov
