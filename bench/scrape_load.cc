// Load on `cgov daemon --listen`: starts a daemon on 8 simulated H100s (fake NVML), then
//   1. 200 clients scrape /metrics at once, 300 times each (several seconds of it) (a new connection each time);
//   2. 64 "drip" clients hold connections open sending a byte a second while a normal client
//      scrapes 20 times;
//   3. a request with a 1 MiB header and one with a chunked body, which must be refused;
// and checks from the daemon's database that no sampling tick was missed meanwhile.
// Usage: cgov_scrape_load CGOV FAKE_NVML_LIB SCENARIO   (prints a report; exit 1 on a miss)
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

int Connect(int port, int timeout_s) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request`, reads until the server closes; the answer (empty on failure).
std::string Exchange(int port, const std::string& request, int timeout_s = 10) {
  const int fd = Connect(port, timeout_s);
  if (fd < 0) return "";
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  std::string out;
  char buffer[65536];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) out.append(buffer, n);
  close(fd);
  return out;
}

const std::string kScrape = "GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n";

double ScrapeMs(int port, bool* ok) {
  const auto start = Clock::now();
  const std::string r = Exchange(port, kScrape);
  *ok = r.starts_with("HTTP/1.1 200") && r.find("cgov_gpu_utilization_ratio") != std::string::npos;
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// The largest gap between consecutive ticks in [from_ms, to_ms] of the daemon's database.
int64_t LargestTickGapMs(const std::string& db, int64_t from_ms, int64_t to_ms, int64_t* ticks) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(h, "SELECT ts_ms FROM tick WHERE ts_ms BETWEEN ? AND ? ORDER BY ts_ms", -1,
                     &s, nullptr);
  sqlite3_bind_int64(s, 1, from_ms);
  sqlite3_bind_int64(s, 2, to_ms);
  int64_t last = from_ms, gap = 0;
  *ticks = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const int64_t ts = sqlite3_column_int64(s, 0);
    gap = std::max(gap, ts - last);
    last = ts;
    ++*ticks;
  }
  gap = std::max(gap, to_ms - last);
  sqlite3_finalize(s);
  sqlite3_close(h);
  return gap;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s CGOV FAKE_NVML_LIB SCENARIO\n", argv[0]);
    return 2;
  }
  char dir_template[] = "/tmp/cgov-scrape-load-XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string db = dir + "/h.db";
  const int port = 20000 + static_cast<int>(getpid() % 20000);
  const pid_t daemon = fork();
  if (daemon == 0) {
    setenv("CGOV_FAKE_NVML_SCENARIO", argv[3], 1);
    const std::string listen = "127.0.0.1:" + std::to_string(port);
    execl(argv[1], argv[1], "daemon", "--db", db.c_str(), "--interval", "1s", "--nvml-lib",
          argv[2], "--listen", listen.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  bool up = false;
  for (int i = 0; i < 500 && !up; ++i) {
    usleep(10'000);
    ScrapeMs(port, &up);
  }
  if (!up) {
    std::fprintf(stderr, "the daemon did not answer on port %d\n", port);
    kill(daemon, SIGKILL);
    return 1;
  }
  sleep(2);
  const std::string sample = Exchange(port, kScrape);
  std::printf("scrape size: %zu bytes (8 GPUs)\n", sample.size());
  int failures = 0;

  // 1. 200 concurrent scrapers (one epoll loop drives them all, as a real scraper fleet would
  // not spend a thread each), long enough for several ticks to fall inside.
  constexpr int kClients = 200, kScrapesEach = 300;
  const int64_t burst_from = NowMs();
  std::vector<double> all;
  int errors = 0;
  {
    struct Conn {
      int fd = -1;
      Clock::time_point start;
      size_t sent = 0;
      std::string got;
      int left = kScrapesEach;
    };
    std::vector<Conn> conns(kClients);
    const int ep = epoll_create1(0);
    auto open_one = [&](int i) {
      Conn& c = conns[i];
      c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(static_cast<uint16_t>(port));
      inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
      c.start = Clock::now();
      c.sent = 0;
      c.got.clear();
      connect(c.fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
      epoll_event ev{};
      ev.events = EPOLLOUT | EPOLLIN;
      ev.data.u32 = static_cast<uint32_t>(i);
      epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
    };
    for (int i = 0; i < kClients; ++i) open_one(i);
    int running = kClients;
    std::vector<epoll_event> events(256);
    char buffer[65536];
    while (running > 0) {
      const int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 10'000);
      if (n <= 0) break;
      for (int e = 0; e < n; ++e) {
        const int i = static_cast<int>(events[e].data.u32);
        Conn& c = conns[i];
        if ((events[e].events & EPOLLOUT) && c.sent < kScrape.size()) {
          const ssize_t w = send(c.fd, kScrape.data() + c.sent, kScrape.size() - c.sent,
                                 MSG_NOSIGNAL);
          if (w > 0) c.sent += static_cast<size_t>(w);
          if (c.sent == kScrape.size()) {
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.u32 = static_cast<uint32_t>(i);
            epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
          }
        }
        if (!(events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
        ssize_t r = 0;
        while ((r = recv(c.fd, buffer, sizeof(buffer), 0)) > 0) c.got.append(buffer, r);
        if (r == 0 || (r < 0 && errno != EAGAIN)) {
          all.push_back(std::chrono::duration<double, std::milli>(Clock::now() - c.start).count());
          if (!c.got.starts_with("HTTP/1.1 200") ||
              c.got.find("cgov_gpu_utilization_ratio") == std::string::npos) {
            ++errors;
          }
          epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
          close(c.fd);
          if (--c.left > 0) {
            open_one(i);
          } else {
            --running;
          }
        }
      }
    }
    close(ep);
  }
  const int64_t burst_to = NowMs();
  const double p50 = Percentile(all, 0.50), p99 = Percentile(all, 0.99);
  std::printf("%d concurrent scrapers x %d: %zu scrapes in %.2f s, %d failed; latency p50 %.2f ms, "
              "p99 %.2f ms, max %.2f ms (target p99 < 50 ms)\n",
              kClients, kScrapesEach, all.size(), (burst_to - burst_from) / 1e3, errors, p50, p99,
              Percentile(all, 1.0));
  if (p99 >= 50 || errors > 0) ++failures;

  // 2. 64 drip clients, then normal scrapes while they hold their connections.
  const int64_t drip_from = NowMs();
  std::vector<int> drips;
  for (int i = 0; i < 64; ++i) {
    const int fd = Connect(port, 2);
    if (fd >= 0) {
      send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL);
      drips.push_back(fd);
    }
  }
  std::atomic<bool> dripping{true};
  std::thread dripper([&] {
    while (dripping) {
      for (int fd : drips) send(fd, "X", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      sleep(1);
    }
  });
  std::vector<double> during;
  int drip_errors = 0;
  for (int i = 0; i < 20; ++i) {
    bool ok = false;
    during.push_back(ScrapeMs(port, &ok));
    if (!ok) ++drip_errors;
    usleep(250'000);
  }
  dripping = false;
  dripper.join();
  for (int fd : drips) close(fd);
  const int64_t drip_to = NowMs();
  const double drip_max = Percentile(during, 1.0);
  std::printf("64 drip clients open (%zu connected): 20 normal scrapes, %d failed; max %.2f ms, "
              "median %.2f ms (target < 500 ms)\n", drips.size(), drip_errors, drip_max,
              Percentile(during, 0.5));
  if (drip_max >= 500 || drip_errors > 0) ++failures;

  // 3. Oversized head and a chunked body.
  const std::string big = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: b\r\nX-Big: " +
                                             std::string(1 << 20, 'a') + "\r\n\r\n");
  const bool big_refused = !big.starts_with("HTTP/1.1 200");
  const std::string chunked = Exchange(port, "GET /metrics HTTP/1.1\r\nHost: b\r\nTransfer-"
                                             "Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  const bool chunked_refused = chunked.starts_with("HTTP/1.1 413");
  std::printf("1 MiB header: %s (%s); chunked body: %s (%s)\n",
              big_refused ? "refused" : "SERVED", big.empty() ? "connection closed"
                                                              : big.substr(0, 12).c_str(),
              chunked_refused ? "refused" : "NOT REFUSED", chunked.substr(0, 12).c_str());
  if (!big_refused || !chunked_refused) ++failures;

  // No tick missed: the daemon's 1 s ticks kept coming throughout.
  sleep(2);
  kill(daemon, SIGTERM);
  int status = 0;
  waitpid(daemon, &status, 0);
  int64_t burst_ticks = 0, drip_ticks = 0;
  const int64_t burst_gap = LargestTickGapMs(db, burst_from, burst_to, &burst_ticks);
  const int64_t drip_gap = LargestTickGapMs(db, drip_from, drip_to, &drip_ticks);
  std::printf("ticks during the burst: %lld in %.1f s, largest gap %lld ms; during the drip: %lld "
              "in %.1f s, largest gap %lld ms (a miss would be a gap >= 2000 ms)\n",
              static_cast<long long>(burst_ticks), (burst_to - burst_from) / 1e3,
              static_cast<long long>(burst_gap), static_cast<long long>(drip_ticks),
              (drip_to - drip_from) / 1e3, static_cast<long long>(drip_gap));
  // Missed: a gap of two intervals, or fewer ticks than whole seconds elapsed (less one edge).
  if (burst_gap >= 2000 || drip_gap >= 2000) ++failures;
  if (burst_ticks < (burst_to - burst_from) / 1000 - 1 || drip_ticks < (drip_to - drip_from) / 1000 - 1) {
    ++failures;
  }
  std::system(("rm -rf " + dir).c_str());
  std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
