// KubePodWatch against tests/fake_kube/api_server.py: a paginated list, a watch that drops and
// is resumed from its resourceVersion, a 410 that forces a relist, the bearer token, RBAC's 403.
#include "identity/kube_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/fake_clock.h"
#include "fakes/fake_env.h"
#include "fakes/fake_http_client.h"

namespace cgov {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json PodJson(const std::string& uid, const std::string& ns, const std::string& name,
             const std::string& project) {
  return {
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", uid},
        {"resourceVersion", "5"},
        {"labels", {{"project-id", project}}}}},
      {"spec", {{"nodeName", "gpu-node-1"}, {"containers", {{{"name", "main"}}}}}},
      {"status",
       {{"phase", "Running"},
        {"containerStatuses", {{{"name", "main"}, {"containerID", "containerd://c-" + uid}}}}}}};
}

// The fake API server, on its own port, for the life of the test.
class FakeApiServer {
 public:
  explicit FakeApiServer(const json& scenario) {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov_kube_" + std::to_string(::getpid()) + "_" + std::to_string(++count_));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "scenario.json") << scenario.dump();
    const std::string script = std::string(CGOV_FIXTURES_DIR) + "/../fake_kube/api_server.py";
    pid_ = fork();
    if (pid_ == 0) {
      execl("/usr/bin/python3", "python3", script.c_str(), (dir_ / "scenario.json").c_str(),
            (dir_ / "port").c_str(), (dir_ / "log").c_str(), nullptr);
      _exit(127);
    }
    for (int i = 0; i < 100 && !std::filesystem::exists(dir_ / "port"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::ifstream(dir_ / "port") >> port_;
  }
  ~FakeApiServer() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    std::filesystem::remove_all(dir_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<json> requests() const {
    std::vector<json> out;
    std::ifstream in(dir_ / "log");
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }
  std::string TokenFile(const std::string& token) const {
    std::ofstream(dir_ / "token") << token << "\n";
    return (dir_ / "token").string();
  }

 private:
  static inline int count_ = 0;
  std::filesystem::path dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

KubeApiOptions Options(const FakeApiServer& server, const std::string& token_file) {
  KubeApiOptions o;
  o.api_url = server.url();
  o.token_file = token_file;
  o.node_name = "gpu-node-1";
  o.page_size = 2;
  o.retry_min = std::chrono::milliseconds(50);
  o.retry_max = std::chrono::milliseconds(200);
  o.watch_timeout_s = 2;
  return o;
}

template <typename P>
bool WaitUntil(P p, double seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (p()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return p();
}

TEST(KubePodWatch, ListsPagesResumesADroppedWatchAndRelistsWhenGone) {
  json scenario = {
      {"node", "gpu-node-1"},
      {"token", "t0ken"},
      {"resource_version", 1000},
      {"pods",
       {PodJson("u1", "ml", "train-0", "llm"), PodJson("u2", "ml", "train-1", "llm"),
        PodJson("u3", "nb", "nb-bob", "notebooks")}},
      {"watches",
       {{{"events", {{{"type", "ADDED"}, {"object", PodJson("u4", "nb", "nb-carol", "nb")}}}},
         {"then", "drop"}},
        {{"gone", true}},
        {{"events",
          {{{"type", "DELETED"}, {"object", PodJson("u1", "ml", "train-0", "llm")}},
           {{"type", "BOOKMARK"},
            {"object",
             {{"kind", "Pod"},
              {"apiVersion", "v1"},
              {"metadata", {{"resourceVersion", "1200"}}}}}}}},
         {"then", "hold"}}}}};
  FakeApiServer server(scenario);
  KubePodDirectory pods(DefaultKubeLabelMap());
  auto watch = KubePodWatch::Start(Options(server, server.TokenFile("t0ken")), &pods);
  ASSERT_TRUE(watch.ok()) << watch.status().message();
  ASSERT_TRUE((*watch)->WaitSynced(std::chrono::seconds(10))) << (*watch)->LastError();
  ASSERT_TRUE(WaitUntil([&] { return pods.resource_version() == "1200"; }, 10))
      << (*watch)->LastError();
  EXPECT_EQ(pods.Find("u3")->name, "nb-bob");
  EXPECT_EQ(pods.Find("u4")->project, "nb") << "the event before the drop was kept";
  EXPECT_NE(pods.Find("u1")->deleted_ms, 0) << "deleted, kept for its lingering processes";
  EXPECT_EQ((*watch)->lists(), 2u) << "the first list and the relist after 410 Gone";
  watch->reset();

  std::vector<json> requests = server.requests();
  int lists = 0, pages = 0, watches = 0, resumed = 0;
  for (const json& r : requests) {
    EXPECT_TRUE(r["authorized"].get<bool>()) << r.dump();
    const json& q = r["query"];
    EXPECT_EQ(q["fieldSelector"], "spec.nodeName=gpu-node-1");
    if (q.contains("watch")) {
      ++watches;
      EXPECT_EQ(q["allowWatchBookmarks"], "true");
      if (q["resourceVersion"] == "1000") ++resumed;
    } else {
      ++pages;
      if (!q.contains("continue")) ++lists;
      EXPECT_EQ(q["limit"], "2");
    }
  }
  EXPECT_EQ(lists, 2);
  EXPECT_EQ(pages, 4) << "3 pods, 2 a page, listed twice";
  EXPECT_GE(watches, 3);
  EXPECT_GE(resumed, 2) << "the dropped watch resumed from the list's resourceVersion";
}

TEST(KubePodWatch, RbacDeniedAndABadTokenAreSaid) {
  FakeApiServer denied(json{{"node", "gpu-node-1"}, {"token", nullptr}, {"deny", true}});
  KubePodDirectory pods(DefaultKubeLabelMap());
  auto watch = KubePodWatch::Start(Options(denied, ""), &pods);
  ASSERT_TRUE(watch.ok());
  EXPECT_FALSE((*watch)->WaitSynced(std::chrono::milliseconds(1500)));
  EXPECT_THAT((*watch)->LastError(), HasSubstr("HTTP 403: pods is forbidden"));
  EXPECT_THAT((*watch)->LastError(), HasSubstr("needs get, list and watch on pods"));
  watch->reset();

  FakeApiServer server(json{{"node", "gpu-node-1"}, {"token", "right"}});
  // A token file that would split the header line is refused, never sent.
  auto split = KubePodWatch::Start(Options(server, server.TokenFile("right\r\nX-Evil: 1")), &pods);
  ASSERT_TRUE(split.ok());
  EXPECT_FALSE((*split)->WaitSynced(std::chrono::milliseconds(1500)));
  EXPECT_THAT((*split)->LastError(), HasSubstr("not one bearer token"));
  EXPECT_THAT((*split)->LastError(), Not(HasSubstr("Evil")));
  split->reset();
  EXPECT_TRUE(server.requests().empty()) << "nothing was sent";
  auto wrong = KubePodWatch::Start(Options(server, server.TokenFile("wrong")), &pods);
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE((*wrong)->WaitSynced(std::chrono::milliseconds(1500)));
  EXPECT_THAT((*wrong)->LastError(), HasSubstr("HTTP 401"));
  EXPECT_THAT((*wrong)->LastError(), Not(HasSubstr("wrong"))) << "the token is never quoted";
}

// A server that answers 410 to the list's own resourceVersion, or ends every watch at once, is
// retried with the backoff (50 ms doubling to 200 ms here), not in a tight loop.
// A monotonic clock that has moved an hour each time it is read. Thread-safe.
class HourEachReadClock : public FakeClock {
 public:
  int64_t MonotonicNs() override { return ns_.fetch_add(3'600'000'000'000) + 3'600'000'000'000; }

 private:
  std::atomic<int64_t> ns_{0};
};

// On a FakeEnv, without a server: the API's answers come from the test, and whether a watch
// ended "at once" is decided by the Env's clock. A watch the server ends at once by that clock
// waits the back-off (ten minutes here: no second watch); the same answer on a clock that moves
// an hour a read lasted an hour by it, and the watch is resumed at once, from the list's
// resourceVersion.
TEST(KubePodWatch, OnAFakeEnvTheBackoffFollowsTheEnvsClock) {
  const json list = {{"kind", "PodList"},
                     {"apiVersion", "v1"},
                     {"metadata", {{"resourceVersion", "7"}}},
                     {"items", {PodJson("u1", "ml", "p", "x")}}};
  FakeHttpClient api([&](const HttpRequest& r) -> Result<HttpResponse> {
    if (r.url.find("watch=1") != std::string::npos) {
      return FakeHttpClient::Reply(r, 200, {}, "");  // the server ends the watch at once
    }
    return FakeHttpClient::Reply(r, 200, {}, list.dump());
  });
  auto watches_on = [&](Clock* clock, uint64_t enough, int bound_ms) {
    FakeEnv env;
    env.set_clock(clock);
    env.set_http(&api);
    KubeApiOptions o;
    o.api_url = "https://api.example:443";
    o.node_name = "gpu-node-1";
    o.retry_min = std::chrono::minutes(10);
    o.retry_max = std::chrono::minutes(20);
    o.env = &env;
    KubePodDirectory pods(DefaultKubeLabelMap());
    auto w = KubePodWatch::Start(o, &pods);
    EXPECT_TRUE(w.ok());
    if (!w.ok()) return uint64_t{0};
    EXPECT_TRUE((*w)->WaitSynced(std::chrono::seconds(10))) << (*w)->LastError();
    EXPECT_EQ(pods.Find("u1")->name, "p");
    // Bounded: until `enough` watches, or `bound_ms` (a loop without its back-off: hundreds).
    for (int i = 0; i < bound_ms && (*w)->watches() < enough; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const uint64_t watches = (*w)->watches();
    w->reset();
    return watches;
  };
  FakeClock still;  // only read: safe from the watch's thread
  EXPECT_EQ(watches_on(&still, 2, 300), 1u) << "ended at once: the back-off (10 minutes) is waited";
  HourEachReadClock leaping;
  EXPECT_GE(watches_on(&leaping, 5, 10'000), 5u)
      << "lasted an hour by the Env's clock: resumed at once";
  const std::vector<HttpRequest> sent = api.sent();
  ASSERT_GE(sent.size(), 2u);
  EXPECT_THAT(sent[0].url, HasSubstr("/api/v1/pods?fieldSelector=spec.nodeName%3Dgpu-node-1"));
  EXPECT_THAT(sent[1].url, HasSubstr("watch=1"));
  EXPECT_THAT(sent[1].url, HasSubstr("resourceVersion=7"));
}

TEST(KubePodWatch, AServerThatFailsAtOnceIsNotHammered) {
  for (const json& watch :
       {json{{"gone", true}}, json{{"events", json::array()}, {"then", "end"}}}) {
    FakeApiServer server(json{{"node", "gpu-node-1"},
                              {"token", nullptr},
                              {"pods", {PodJson("u1", "ml", "p", "x")}},
                              {"watches", {watch}}});
    KubePodDirectory pods(DefaultKubeLabelMap());
    auto w = KubePodWatch::Start(Options(server, ""), &pods);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->WaitSynced(std::chrono::seconds(10)));
    const auto synced = std::chrono::steady_clock::now();
    // Polled (bounded: 10 s) until it watched again, then 0.3 s more.
    for (int i = 0; i < 1000 && (*w)->watches() < 2; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const uint64_t watches = (*w)->watches();
    const auto waited = std::chrono::steady_clock::now() - synced;
    w->reset();
    EXPECT_GE(watches, 2u) << watch.dump();
    // Each attempt waits the back-off, 50 ms at least (a loop without it: hundreds a second).
    EXPECT_LE(watches, static_cast<uint64_t>(waited / std::chrono::milliseconds(50)) + 2)
        << watch.dump() << ": at most one a backoff period";
    EXPECT_EQ(pods.Find("u1")->name, "p");
  }
}

// Issue 46 item 4: a server whose every page named a next one was paged forever (1,214 requests
// in 25 s, no back-off). The list ends in an error past max_pods_listed / page_size + 1 pages,
// and is tried again after the back-off.
TEST(KubePodWatch, AListThatNeverEndsIsCutShortAndRetriedAfterTheBackoff) {
  FakeApiServer server(json{{"node", "gpu-node-1"},
                            {"token", nullptr},
                            {"endless_continue", true},
                            {"pods", {PodJson("u1", "ml", "p", "x")}}});
  KubePodDirectory pods(DefaultKubeLabelMap());
  KubeApiOptions o = Options(server, "");
  o.max_pods_listed = 20;  // page_size 2: 11 pages at most
  auto w = KubePodWatch::Start(o, &pods);
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE((*w)->WaitSynced(std::chrono::milliseconds(1500)));  // ends at the first error
  EXPECT_THAT((*w)->LastError(), HasSubstr("took more than 11 pages of 2"));
  const auto failed = std::chrono::steady_clock::now();
  // Polled (bounded: 10 s) until a second attempt's 11 pages were asked for, then 0.3 s more.
  for (int i = 0; i < 1000 && server.requests().size() < 22; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto waited = std::chrono::steady_clock::now() - failed;
  w->reset();
  // Each attempt is 11 pages, and attempts wait 50, 100, 200, 200 … ms, 50 at least.
  const size_t lists = server.requests().size();
  EXPECT_GE(lists, 22u) << "tried again";
  EXPECT_LE(lists, 11u * (static_cast<size_t>(waited / std::chrono::milliseconds(50)) + 2))
      << "at most one attempt a back-off period";
}

TEST(KubePodWatch, FiveThousandPodsInPages) {
  FakeApiServer server(json{{"node", "gpu-node-1"}, {"token", nullptr}, {"generate", 5000}});
  KubePodDirectory pods(DefaultKubeLabelMap());
  KubeApiOptions o = Options(server, "");
  o.page_size = 500;
  auto watch = KubePodWatch::Start(o, &pods);
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE((*watch)->WaitSynced(std::chrono::seconds(30))) << (*watch)->LastError();
  EXPECT_EQ(pods.size(), 5000u);
  EXPECT_EQ(pods.Find("00000000-0000-4000-8000-000000004999")->project, "p199");
}

}  // namespace
}  // namespace cgov
