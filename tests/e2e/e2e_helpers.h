// Small helpers the end-to-end tests share: reading a history database the real binary wrote,
// finding a finding in a report's JSON, the last sample of a run, and a daemon on a fake driver
// scraped once.
#ifndef CGOV_TESTS_E2E_E2E_HELPERS_H_
#define CGOV_TESTS_E2E_E2E_HELPERS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process_runner.h"
#include "store/sqlite_db.h"

namespace cgov::e2e {

// Whether these tests (and the cgov they run) are the sanitizer tree's (make sanitize), where
// a process start costs ~50 ms and code runs ~20x slower: a loop over every value of a range
// whose values all take one code path samples the range there; the plain tree runs them all.
// (CMakeLists.txt defines CGOV_E2E_SANITIZED in the sanitizer tree, whose test driver itself is
// not instrumented: the cgov it starts is.)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(CGOV_E2E_SANITIZED)
#define CGOV_E2E_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(CGOV_E2E_SANITIZED)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// What `make(part)` writes at `part` (a file or a directory), made once for every test process
// that asks with the same `key` and the same cgov binary, and only read after that (ctest runs
// each test in its own process, so a suite's SetUpTestSuite would make it again for each test).
// It lives under the build directory, in e2e-cache/PREFIX<hash of key and binary>SUFFIX; a flock
// serialises the processes that ask at once, and a finished output is renamed into place, so a
// half-made one is never used. "" when `make` failed (it said why).
inline std::string CachedOutput(const std::string& prefix, const std::string& key,
                                const std::string& suffix,
                                const std::function<bool(const std::string& part)>& make) {
  namespace fs = std::filesystem;
  struct stat binary {};
  if (::stat(CgovBinary().c_str(), &binary) != 0) {
    ADD_FAILURE() << CgovBinary() << ": not there";
    return "";
  }
  const std::string full_key = std::to_string(binary.st_size) + "-" +
                               std::to_string(binary.st_mtim.tv_sec) + "." +
                               std::to_string(binary.st_mtim.tv_nsec) + "|" + key;
  const fs::path dir = fs::path(CgovBinary()).parent_path() / "e2e-cache";
  fs::create_directories(dir);
  const fs::path out = dir / (prefix + std::to_string(std::hash<std::string>{}(full_key)) + suffix);
  const std::string lock_path = out.string() + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
    ADD_FAILURE() << lock_path << ": cannot lock";
    if (lock >= 0) ::close(lock);
    return "";
  }
  if (!fs::exists(out)) {
    // What an older binary made is no use any more (its key differs): removed, not hoarded,
    // with what readers left beside it (a database's -shm and -wal) and its lock.
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      struct stat old {};
      if (name.starts_with(prefix) && ::stat(e.path().c_str(), &old) == 0 &&
          old.st_mtim.tv_sec < binary.st_mtim.tv_sec) {
        fs::remove_all(e.path(), ec);
      }
    }
    const fs::path part = out.string() + ".part";
    fs::remove_all(part);
    if (make(part.string())) fs::rename(part, out);
  }
  ::close(lock);
  return fs::exists(out) ? out.string() : "";
}

// A history database that `cgov demo ARGS` writes, made once (CachedOutput) and only read after
// that: only reports may open it. CGOV_DEMO_WRITER names another build's cgov to write it: the
// sanitizer suite (make sanitize) has the optimized tree's write these databases — 45 times
// faster than an instrumented -O0 binary, the same bytes — while its own binary writes every
// other demo and reads these.
inline std::string SharedDemoDb(const std::vector<std::string>& args) {
  std::string key;
  for (const std::string& a : args) key += "|" + a;
  const char* env = std::getenv("CGOV_DEMO_WRITER");
  const std::string writer = env != nullptr && *env != '\0' ? env : CgovBinary();
  if (struct stat w{}; writer != CgovBinary() && ::stat(writer.c_str(), &w) == 0) {
    key += "|writer " + writer + " " + std::to_string(w.st_size) + " " +
           std::to_string(w.st_mtim.tv_sec) + "." + std::to_string(w.st_mtim.tv_nsec);
  }
  return CachedOutput("demo-", key, ".db", [&](const std::string& part) {
    std::vector<std::string> argv = {writer, "demo", "--db", part};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult demo = RunProgram(argv, {}, 300);
    EXPECT_EQ(demo.exit_code, 0) << demo.err;
    // The demo's writer leaves no -wal behind when it closes; a database is one file to rename.
    return demo.exit_code == 0;
  });
}

// Debian's Prometheus server and its promtool (package prometheus).
inline constexpr char kPrometheus[] = "/usr/bin/prometheus";
inline constexpr char kPromtool[] = "/usr/bin/promtool";

// A dollar figure of a report's JSON in whole cents.
inline int64_t Cents(const nlohmann::json& usd) { return std::llround(usd.get<double>() * 100); }

// The first line of a report's table that starts with `start` ("| GPU Mem %"), each run of
// spaces made one: a declared table's columns are as wide as their widest cell, which another
// row may set. "" when there is none.
inline std::string TableRow(const std::string& text, const std::string& start) {
  size_t at = text.find(start);
  while (at != std::string::npos && at != 0 && text[at - 1] != '\n') at = text.find(start, at + 1);
  if (at == std::string::npos) return "";
  std::string row;
  for (size_t i = at; i < text.size() && text[i] != '\n'; ++i) {
    if (text[i] != ' ' || row.empty() || row.back() != ' ') row += text[i];
  }
  return row;
}

// A port free right now on 127.0.0.1, for a server the test starts next. Chosen below the
// kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range): a port the kernel picked
// is handed out again to the next outgoing connection — a Prometheus scraping every second
// makes many — and a server started a moment later then finds it taken. Below that range only
// another test's pick can collide: random, and checked free by a bind.
inline int FreePort() {
  int low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> low;
  const int first = 10'000, last = std::max(first + 1000, low) - 1;
  static thread_local uint64_t state =
      static_cast<uint64_t>(getpid()) * 0x9E3779B97F4A7C15ull ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 200; ++attempt) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const int port = first + static_cast<int>((state >> 33) % static_cast<uint64_t>(last - first));
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    if (free) return port;
  }
  ADD_FAILURE() << "no free port below " << low;
  return 0;
}

// One integer from `sql` on the database at `db`, read-only and patient with a writer; -1 when
// the database or the query fails (a test's WaitFor keeps polling).
inline int64_t QueryDb(const std::string& db, const std::string& sql) {
  auto opened = SqliteDb::Open(db, SqliteDb::OpenMode::kReadOnly);
  if (!opened.ok()) return -1;
  (void)(*opened)->Exec("PRAGMA busy_timeout = 5000");
  auto v = (*opened)->QueryInt(sql);
  return v.ok() ? *v : -1;
}

// What is wrong with `doc` under docs/`schema` (a JSON Schema, draft 2020-12), validated by
// Debian's python3-jsonschema; "" when it is valid. For samples.jsonl, call it per line.
// With CGOV_SCHEMA_DUMP=DIR in the environment it also keeps each document there (how the
// schemas' first drafts were collected from every test's output).
inline std::string SchemaErrors(const std::string& schema, const nlohmann::json& doc) {
  TempDir dir;
  const std::string path = dir / "doc.json";
  WriteFile(path, doc.dump());
  if (const char* dump = std::getenv("CGOV_SCHEMA_DUMP")) {
    static int n = 0;
    WriteFile(std::string(dump) + "/" + schema + "." + std::to_string(getpid()) + "." +
                  std::to_string(n++) + ".json",
              doc.dump());
  }
  RunResult r = RunProgram(
      {"/usr/bin/python3", "-c",
       "import json,sys,jsonschema\n"
       "schema=json.load(open(sys.argv[1]))\n"
       "jsonschema.Draft202012Validator.check_schema(schema)\n"
       "errors=sorted(jsonschema.Draft202012Validator(schema).iter_errors("
       "json.load(open(sys.argv[2]))), key=lambda e: list(e.absolute_path))\n"
       "for e in errors[:5]: print('/'.join(map(str, e.absolute_path)) + ': ' + e.message[:300])\n"
       "sys.exit(1 if errors else 0)\n",
       DocsFile(schema), path},
      {});
  return r.exit_code == 0 ? "" : r.out + r.err;
}

// `cgov report --format json ARGS...`, checked against docs/report.schema.json; an empty object
// (and a failed expectation) when it exits non-zero.
inline nlohmann::json ReportJson(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {CgovBinary(), "report", "--format", "json"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = RunProgram(argv, {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return nlohmann::json::object();
  nlohmann::json report = nlohmann::json::parse(r.out);
  EXPECT_EQ(SchemaErrors("report.schema.json", report), "");
  return report;
}

// A report's "who" rows as key -> held GPU-seconds.
inline std::map<std::string, double> HeldByKey(const nlohmann::json& report) {
  std::map<std::string, double> out;
  for (const nlohmann::json& w : report["who"]) out[w["key"]] = w["held_seconds"].get<double>();
  return out;
}

// The finding with `id` in a summary's or report's "findings" array, or nullptr.
inline const nlohmann::json* FindingById(const nlohmann::json& findings, const std::string& id) {
  for (const nlohmann::json& f : findings) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

// The last record of a samples.jsonl.
inline nlohmann::json LastSample(const std::string& samples_jsonl) {
  std::ifstream lines(samples_jsonl);
  nlohmann::json last;
  for (std::string line; std::getline(lines, line);) last = nlohmann::json::parse(line);
  EXPECT_EQ(SchemaErrors("samples.schema.json", last), "") << samples_jsonl;
  return last;
}

struct ScrapedDaemon {
  bool ready = false;   // `ready` came true in time
  std::string metrics;  // one /metrics scrape, taken once ready
  RunResult stopped;    // the daemon after SIGTERM
};

// `cgov daemon --db DB` on the fake driver playing `scenario`, 1 s ticks, serving on
// 127.0.0.1:`port`, with `extra` flags: waits (15 s at most) until `ready()`, scrapes /metrics
// once, then stops the daemon with SIGTERM and collects its exit.
inline ScrapedDaemon ScrapeDaemon(const std::string& db, const std::string& scenario, int port,
                                  const std::vector<std::string>& extra,
                                  const std::function<bool()>& ready) {
  std::vector<std::string> argv = {CgovBinary(), "daemon",
                                   "--db",       db,
                                   "--interval", "1s",
                                   "--nvml-lib", FakeNvml("full"),
                                   "--listen",   "127.0.0.1:" + std::to_string(port)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  Started daemon = StartProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario(scenario)}});
  ScrapedDaemon out;
  out.ready = WaitFor(ready, 15);
  if (out.ready) {
    out.metrics =
        RunProgram({"/usr/bin/curl", "-s", "http://127.0.0.1:" + std::to_string(port) + "/metrics"},
                   {})
            .out;
  }
  kill(daemon.pid, SIGTERM);
  out.stopped = WaitProgram(daemon, 15);
  return out;
}

// `url`'s body, then a line "HTTP <status>" (curl; 5 s at most).
inline std::string Curl(const std::string& url) {
  return RunProgram({"/usr/bin/curl", "-s", "--max-time", "5", "-w", "\nHTTP %{http_code}", url},
                    {}, 10)
      .out;
}

// The value of the first sample of `name` in a /metrics text, or -1.
inline double Sample(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name);
  if (at == std::string::npos) return -1;
  const size_t end = metrics.find('\n', at + 1);
  const std::string line = metrics.substr(at + 1, end - at - 1);
  return std::stod(line.substr(line.rfind(' ') + 1));
}

// A daemon on the fake driver (its scenario from CGOV_FAKE_NVML_SCENARIO) every 200 ms into
// dir/h.db, serving /metrics on 127.0.0.1:`port`; flags may follow.
inline std::vector<std::string> FakeDaemonArgv(const TempDir& dir, int port) {
  return {CgovBinary(), "daemon",
          "--db",       dir / "h.db",
          "--interval", "200ms",
          "--nvml-lib", FakeNvml("full"),
          "--listen",   "127.0.0.1:" + std::to_string(port)};
}

// ScrapeDaemon's usual wait: the daemon serving on 127.0.0.1:`port` took `ticks` ticks
// (cgov_ticks_total). Its database has them once it commits (--commit-every) or stops.
inline std::function<bool()> TicksTaken(int port, int64_t ticks) {
  return [port, ticks] {
    return Sample(Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics"),
                  "cgov_ticks_total") >= static_cast<double>(ticks);
  };
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The wall clock in seconds (as Prometheus' timestamps).
inline double NowS() {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count()) /
         1e3;
}

}  // namespace cgov::e2e

#endif  // CGOV_TESTS_E2E_E2E_HELPERS_H_
