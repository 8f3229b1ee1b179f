// The pod-resources client: the decoder on protoc's own encoding of a kubelet-shaped answer
// (tests/fixtures/pod-resources), malformed messages, and List over a unix socket against a real
// gRPC server (tests/fake_kube/pod_resources_server.py, Debian's python3-grpcio).
#include "identity/pod_resources.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/fake_env.h"
#include "fakes/fake_http_client.h"

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

// A socket file nobody listens on, for the poller's check before it sends (the fake HTTP client
// answers in place of the kubelet).
class SocketFile {
 public:
  SocketFile() {
    dir_ =
        std::filesystem::temp_directory_path() / ("cgov_podres_env_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path().c_str());
    bound_ = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
  }
  ~SocketFile() { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "kubelet.sock").string(); }
  bool bound() const { return bound_; }

 private:
  std::filesystem::path dir_;
  bool bound_ = false;
};

// The poller on a FakeEnv (tests/fakes/fake_env.h): the kubelet's answers come from the test,
// and each call moves the Env's clock 20 s on, so the default staleness (a minute) is reached in
// milliseconds. It keeps the last answer, moves its generation only when the devices change, and
// drops what it knew once the kubelet has failed for stale_after by the Env's clock.
TEST(PodResources, PollerFollowsChangesAndForgetsAStaleAnswerByTheEnvsClock) {
  SocketFile socket;
  ASSERT_TRUE(socket.bound());
  const std::string list = ReadAll(Fixture("list.bin"));
  ASSERT_FALSE(list.empty());
  auto frame = [](const std::string& message) {  // gRPC's 5-byte prefix: uncompressed, length
    const uint32_t n = static_cast<uint32_t>(message.size());
    std::string out(1, '\0');
    for (int shift : {24, 16, 8, 0}) out += static_cast<char>((n >> shift) & 0xff);
    return out + message;
  };
  const std::string one =
      Len(1, Len(1, "p") + Len(2, "n") +
                 Len(3, Len(1, "c") + Len(2, Len(1, "nvidia.com/gpu") + Len(2, "GPU-x"))));
  FakeClock clock;
  std::atomic<PodResourcesPoller*> poller_seen{nullptr};
  std::mutex mu;
  std::vector<size_t> devices_before;       // what the poller held when each call was made
  std::vector<uint64_t> generation_before;  // and its generation
  std::atomic<int> answered{0};
  FakeHttpClient kubelet([&](const HttpRequest& r) -> Result<HttpResponse> {
    // The first call is Start's own; the poller's thread waits for the test to have read what
    // Start left (a loaded machine once let it run three calls ahead before the test looked).
    if (answered.fetch_add(1) > 0) {
      for (int i = 0; i < 10'000 && poller_seen.load() == nullptr; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    std::lock_guard lock(mu);
    const size_t n = devices_before.size();
    PodResourcesPoller* p = poller_seen.load();
    devices_before.push_back(p != nullptr ? p->Current()->devices.size() : 0);
    generation_before.push_back(p != nullptr ? p->Current()->generation : 0);
    clock.AdvanceNs(20'000'000'000);  // the poller's thread alone reads and moves it
    const std::vector<std::string> ok = {"content-type: application/grpc", "grpc-status: 0"};
    if (n < 2) return FakeHttpClient::Reply(r, 200, ok, frame(list));  // twice the same
    if (n < 3) return FakeHttpClient::Reply(r, 200, ok, frame(one));   // a change
    return FakeHttpClient::Reply(r, 200, {"grpc-status: 14", "grpc-message: kubelet%20restarting"},
                                 "");
  });
  FakeEnv env;
  env.set_clock(&clock);
  env.set_http(&kubelet);
  PodResourcesOptions o;
  o.socket_path = socket.path();
  o.interval = std::chrono::milliseconds(1);
  o.env = &env;
  Result<std::unique_ptr<PodResourcesPoller>> started = PodResourcesPoller::Start(o);
  ASSERT_TRUE(started.ok()) << started.status().message();
  PodResourcesPoller& poller = **started;
  const uint64_t first = poller.Current()->generation;
  EXPECT_EQ(poller.Current()->devices.size(), 4u) << "known before Start returns";
  poller_seen = &poller;
  auto calls = [&] {
    std::lock_guard lock(mu);
    return devices_before.size();
  };
  for (int i = 0; i < 2000 && calls() < 9; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GE(calls(), 9u);
  started->reset();  // stopped and joined: what it recorded is final
  std::lock_guard lock(mu);
  // Call 1 answered the same (no new generation: checked below); call 2 the change; calls 3-5
  // failed, 20, 40 and 60 s after the last answer: kept, kept, then dropped.
  EXPECT_EQ(devices_before[2], 4u);
  EXPECT_EQ(generation_before[2], first) << "the same answer is not a change";
  EXPECT_EQ(devices_before[3], 1u) << "the change";
  EXPECT_EQ(generation_before[3], first + 1);
  EXPECT_EQ(devices_before[4], 1u) << "kept 20 s after the last answer";
  EXPECT_EQ(devices_before[5], 1u) << "kept 40 s after the last answer";
  EXPECT_EQ(devices_before[6], 0u) << "dropped 60 s after the last answer (stale_after)";
}

TEST(PodResources, APollerOnAFakeEnvSaysTheKubeletsErrorAndStaysUnhealthy) {
  SocketFile socket;
  ASSERT_TRUE(socket.bound());
  FakeHttpClient kubelet([](const HttpRequest& r) -> Result<HttpResponse> {
    return FakeHttpClient::Reply(r, 200, {"grpc-status: 14", "grpc-message: kubelet%20restarting"},
                                 "");
  });
  FakeEnv env;
  env.set_http(&kubelet);
  PodResourcesOptions o;
  o.socket_path = socket.path();
  o.interval = std::chrono::hours(1);
  o.env = &env;
  Result<std::unique_ptr<PodResourcesPoller>> started = PodResourcesPoller::Start(o);
  ASSERT_TRUE(started.ok()) << started.status().message();
  EXPECT_FALSE((*started)->healthy());
  EXPECT_THAT((*started)->LastError(), HasSubstr("UNAVAILABLE: kubelet restarting"));
  EXPECT_TRUE((*started)->Current()->devices.empty());
  const std::vector<HttpRequest> all = kubelet.sent();
  ASSERT_EQ(all.size(), 1u);
  const HttpRequest& sent = all[0];
  EXPECT_EQ(sent.unix_socket, socket.path());
  EXPECT_TRUE(sent.http2_prior_knowledge);
  EXPECT_EQ(sent.post_body, std::string(5, '\0')) << "an empty request message";
}

}  // namespace
}  // namespace cgov
