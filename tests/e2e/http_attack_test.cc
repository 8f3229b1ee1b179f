// Issue 46 items 1 and 2, as an attacker on the network would run them against the real daemon:
// 130 connections dripping their request heads (slowloris) and a flood of wrong passwords
// against a bcrypt hash. Throughout, /health must answer, and SIGTERM must stop the daemon while
// the flood goes on. Before the fix /health did not answer at all and SIGTERM needed SIGKILL;
// the bounds here (3 s, 10 s) tell those apart on a loaded CI machine, where a daemon sharing two
// cores with four test processes and the flood's threads was once seen to take 6.8 s to stop.
// The targets (/health < 1 s, SIGTERM < 1 s, no tick missed) are measured on a quiet machine by
// bench/scrape_load.cc (docs/benchmarks.md: 2 ms and 4 ms).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/base64.h"
#include "e2e_helpers.h"
#include "loopback_client.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using cgov::test_support::ConnectFrom;

// The hash of "test" in Prometheus' basic-auth guide, cost 12 (the most cgov accepts).
constexpr char kHashOfTest[] = "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";

using SteadyClock = std::chrono::steady_clock;

double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// The whole answer to `request` (the connection is closed by the server after it).
std::string Exchange(int port, const std::string& request, const char* source = "127.0.0.1") {
  const int fd = ConnectFrom(port, source, static_cast<int>(3 * TimeScale()));
  if (fd < 0) return "";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string out;
  char buffer[8192];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) out.append(buffer, n);
  close(fd);
  return out;
}

const std::string kHealth = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

// The slowest of `probes` /health requests a quarter second apart, or 99 s if one failed.
// The bound the test holds it to: 3 s, times the suite's TimeScale() (the sanitizer tree's
// daemon checks each bcrypt at -O0 under ASan, eight tests sharing two cores).
double HealthBound() { return 3.0 * TimeScale(); }
double WorstHealthSeconds(int port, int probes) {
  double worst = 0;
  for (int i = 0; i < probes; ++i) {
    const auto start = SteadyClock::now();
    const bool ok = Exchange(port, kHealth).starts_with("HTTP/1.1 200");
    worst = std::max(worst, ok ? SecondsSince(start) : 99.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return worst;
}

TEST(HttpAttackE2E, HealthAnswersUnderSlowHeadsAndABcryptFloodAndSigtermStopsTheDaemon) {
  TempDir dir;
  WriteFile(dir / "web.yml", std::string("basic_auth_users:\n  prometheus: ") + kHashOfTest + "\n");
  const int port = FreePort();
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "1s", "--nvml-lib",
                    FakeNvml("full"), "--listen", fmt::format("127.0.0.1:{}", port), "--web-config",
                    dir / "web.yml"},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}});
  ASSERT_TRUE(WaitFor([&] { return Exchange(port, kHealth).starts_with("HTTP/1.1 200"); }, 15))
      << WaitProgram(daemon, 1).err;
  const std::string scrape = "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Basic " +
                             Base64Encode("prometheus:test") + "\r\nConnection: close\r\n\r\n";
  ASSERT_TRUE(WaitFor([&] { return Exchange(port, scrape).starts_with("HTTP/1.1 200"); }, 5));

  // 1. Slowloris: 130 connections from one address, each dripping a header line.
  std::vector<int> slow;
  for (int i = 0; i < 130; ++i) {
    const int fd = ConnectFrom(port, "127.0.0.2");
    if (fd >= 0) {
      send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL | MSG_DONTWAIT);
      slow.push_back(fd);
    }
  }
  std::atomic<bool> dripping = true;
  std::thread dripper([&] {
    while (dripping) {
      for (int fd : slow) send(fd, "X-Drip: a\r\n", 11, MSG_NOSIGNAL | MSG_DONTWAIT);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  const double worst_under_slowloris = WorstHealthSeconds(port, 8);
  const bool scraped_under_slowloris = Exchange(port, scrape).starts_with("HTTP/1.1 200");
  dripping = false;
  dripper.join();
  for (int fd : slow) close(fd);
  EXPECT_LT(worst_under_slowloris, HealthBound()) << "/health under 130 dripping connections";
  EXPECT_TRUE(scraped_under_slowloris) << "Prometheus' scrape under 130 dripping connections";

  // 2. A flood of wrong passwords (each new, so none is remembered) from 8 clients.
  std::atomic<bool> flooding = true;
  std::atomic<int> too_many = 0, unauthorized = 0;
  std::vector<std::thread> flood;
  for (int t = 0; t < 8; ++t) {
    flood.emplace_back([&, t] {
      for (int i = 0; flooding; ++i) {
        const std::string r =
            Exchange(port,
                     "GET /metrics HTTP/1.1\r\nAuthorization: Basic " +
                         Base64Encode(fmt::format("prometheus:guess-{}-{}", t, i)) +
                         "\r\nConnection: close\r\n\r\n",
                     "127.0.0.3");
        if (r.starts_with("HTTP/1.1 429")) too_many.fetch_add(1);
        if (r.starts_with("HTTP/1.1 401")) unauthorized.fetch_add(1);
      }
    });
  }
  const double worst_under_flood = WorstHealthSeconds(port, 8);
  const bool scraped_under_flood = Exchange(port, scrape).starts_with("HTTP/1.1 200");
  EXPECT_LT(worst_under_flood, HealthBound()) << "/health under the bcrypt flood";
  EXPECT_TRUE(scraped_under_flood) << "a remembered password needs no bcrypt";
  // The flood has met both answers before the daemon is stopped: on a loaded machine the first
  // bcrypt check (a fifth of a CPU-second) can outlast the probes above.
  WaitFor([&] { return unauthorized.load() > 0 && too_many.load() > 0; }, 20);

  // 3. SIGTERM while the flood goes on.
  const auto stop = SteadyClock::now();
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 30);
  const double stop_s = SecondsSince(stop);
  flooding = false;
  for (std::thread& t : flood) t.join();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_LT(stop_s, 10.0) << "SIGTERM to exit under the bcrypt flood";
  EXPECT_GT(too_many.load(), 0);
  EXPECT_GT(unauthorized.load(), 0);
  RecordProperty("health_worst_ms_slowloris", static_cast<int>(worst_under_slowloris * 1000));
  RecordProperty("health_worst_ms_bcrypt_flood", static_cast<int>(worst_under_flood * 1000));
  RecordProperty("sigterm_to_exit_ms", static_cast<int>(stop_s * 1000));
}

}  // namespace
}  // namespace cgov::e2e
