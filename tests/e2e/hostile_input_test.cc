// Hostile input (issue 21): strings from outside that are not UTF-8 or carry control characters
// never abort cgov, never make /metrics unparseable, and never reach a terminal raw.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

constexpr const char* kExpiredCert = CGOV_FIXTURES_DIR "/tls/expired-2020-cert.pem";
constexpr const char* kExpiredKey = CGOV_FIXTURES_DIR "/tls/expired-2020-key.pem";

using nlohmann::json;

// Item 1: `cgov run -- sh -c 'exit 3' $'arg\xff'` aborted (exit 134, no summary.json).
TEST(HostileInputE2E, AJobArgumentThatIsNotUtf8KeepsTheJobsExitAndTheSummary) {
  TempDir dir;
  RunResult r =
      RunProgram({CgovBinary(), "run", "--out", dir / "run", "--interval", "200ms", "--", "/bin/sh",
                  "-c", "exit 3", "arg\xff\x1b[2J", "<script>x()</script>"},
                 {{"CGOV_TAGS", ""}, {"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "no raw escape reaches the terminal";
  json s = json::parse(ReadFile(dir / "run/summary.json"));
  EXPECT_EQ(s["run"]["command"][3], "arg\\xff\\x1b[2J");
  EXPECT_EQ(s["run"]["exit_code"], 3);
  const std::string samples = ReadFile(dir / "run/samples.jsonl");
  json header = json::parse(samples.substr(0, samples.find('\n')));
  EXPECT_EQ(header["command"][3], "arg\\xff\\x1b[2J");
  EXPECT_EQ(ReadFile(dir / "run/report.md").find('\x1b'), std::string::npos);
  const std::string page = ReadFile(dir / "run/report.html");
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_EQ(page.find("<script>x()"), std::string::npos) << "an argument is text, not markup";
  EXPECT_NE(page.find("arg\\xff\\x1b[2J &lt;script&gt;x()&lt;/script&gt;"), std::string::npos);
}

// The GPU-seconds /metrics credits to a project (all phases), or 0.
double ProjectSeconds(const std::string& metrics, const std::string& project) {
  double sum = 0;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("cgov_identity_gpu_seconds_total{") &&
        line.find("project=\"" + project + "\"") != std::string::npos) {
      sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return sum;
}

// Issue 57, 6: under --host-root (how the shipped DaemonSet runs, with the host's /proc and
// hostPID) the exited-process check was off, so a pid the driver still reported after its
// process ended (or that another process took) billed the old owner for ever. The host root's
// /proc here is this namespace's own (a link to /proc): the check runs, and stops the billing.
TEST(HostileInputE2E, UnderAHostRootAnExitedProcessStopsBillingItsOwner) {
  TempDir dir;
  const std::string root = dir / "host";
  std::filesystem::create_directories(root);
  std::filesystem::create_symlink("/proc", root + "/proc");
  std::filesystem::create_symlink("/etc", root + "/etc");
  Started job = StartProgram({TestJob(), "sleep", "60"}, {{"CGOV_PROJECT", "oldowner"}});
  WriteFile(dir / "scenario.json",
            "{\"gpus\": [{\"name\": \"NVIDIA H100 80GB HBM3\", \"memory_total_mib\": 81559, "
            "\"timeline\": [{\"t\": 0, \"util_gpu\": 0}], \"processes\": [{\"pid\": " +
                std::to_string(job.pid) + ", \"used_mib\": 20000}]}]}");
  const int port = FreePort();
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "200ms",
                    "--nvml-lib", FakeNvml("full"), "--host-root", root, "--listen",
                    "127.0.0.1:" + std::to_string(port), "--price-per-gpu-hour", "2"},
                   {{"CGOV_FAKE_NVML_SCENARIO", dir / "scenario.json"}});
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  ASSERT_TRUE(WaitFor([&] { return ProjectSeconds(Curl(url), "oldowner") > 0; }, 20))
      << Curl(url).substr(0, 2000);
  kill(job.pid, SIGKILL);
  WaitProgram(job, 10);
  // The exit is seen at a tick's lookup: from then on the old owner's seconds stand still
  // (bounded: a loaded machine may take a few ticks to get there).
  double after_exit = -1;
  const bool stopped = WaitFor(
      [&] {
        const double before = ProjectSeconds(Curl(url), "oldowner");
        usleep(800'000);
        after_exit = ProjectSeconds(Curl(url), "oldowner");
        return after_exit == before;
      },
      15);
  EXPECT_TRUE(stopped) << "the driver still reports the pid: its old owner is billed for it";
  usleep(1'000'000);
  EXPECT_EQ(ProjectSeconds(Curl(url), "oldowner"), after_exit);
  kill(daemon.pid, SIGTERM);
  EXPECT_EQ(WaitProgram(daemon, 15).exit_code, 0);
}

// Issue 57, 11: `--price-per-gpu-hour 999999999` (documented as valid) crashed `cgov run`'s text
// report with SIGSEGV, and the job's exit status was lost: the saturated yearly projection of
// eight GPUs overflowed the formatter.
TEST(HostileInputE2E, TheLargestPriceKeepsTheJobsExitAndTheReport) {
  TempDir dir;
  RunResult r =
      RunProgram({CgovBinary(), "run", "--out", dir / "run", "--interval", "200ms", "--nvml-lib",
                  FakeNvml("full"), "--price-per-gpu-hour", "999999999", "--", "/bin/sh", "-c",
                  "sleep 1; exit 3"},
                 {{"CGOV_TAGS", ""}, {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8_fast")}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("$9,223,372,036,854.78/year"), std::string::npos) << r.err;
  const std::string db = SharedDemoDb({"--gpus", "8", "--duration", "1d", "--interval", "10m"});
  for (const char* format : {"text", "md", "html", "json"}) {
    RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--since", "7d",
                                   "--price-per-gpu-hour", "999999999", "--format", format},
                                  {});
    EXPECT_EQ(report.exit_code, 0) << format << ": " << report.err;
  }
}

// Item 8: a host name (or any label) that is not UTF-8 made Prometheus reject the whole scrape
// and `report --format json` abort.
TEST(HostileInputE2E, AHostileHostnameKeepsMetricsAndReportsValid) {
  TempDir dir;
  const std::string db = dir / "h.db";
  const int port = FreePort();
  ScrapedDaemon daemon =
      ScrapeDaemon(db, "gpm_h100", port, {"--hostname", "box\xff\x1b[31m"}, TicksTaken(port, 2));
  ASSERT_TRUE(daemon.ready) << daemon.stopped.err;
  const std::string& metrics = daemon.metrics;
  ASSERT_EQ(daemon.stopped.exit_code, 0) << daemon.stopped.err;
  EXPECT_NE(metrics.find("Hostname=\"box\\\\xff\\\\x1b[31m\""), std::string::npos)
      << metrics.substr(0, 2000);
  RunResult lint = RunProgram({"/usr/bin/promtool", "check", "metrics"}, {}, 30, metrics);
  EXPECT_NE(lint.exit_code, 1) << "promtool could not parse /metrics: " << lint.err;
  EXPECT_EQ(lint.err.find("invalid"), std::string::npos) << lint.err;
  RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--format", "json"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(json::parse(report.out)["host"], "box\\xff\\x1b[31m");
  RunResult text = RunProgram({CgovBinary(), "report", "--db", db}, {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);
}

// Item 2: the job controls $CGOV_PROGRESS_FILE. A FIFO there hung cgov after the job ended, a
// symlink to /dev/zero likewise, a symlink to a secret copied a line of it into the summary, an
// endless line was copied whole. Now: the job's exit code, promptly, and a warning.
TEST(HostileInputE2E, AHostileProgressFileNeitherHangsNorLeaks) {
  TempDir dir;
  const std::string secret = dir / "shadow";
  WriteFile(secret, "root:TOPSECRETHASH:19000:0:99999:7:::\n");
  struct Case {
    const char* name;
    std::string script;
    const char* warning;
  };
  const std::vector<Case> cases = {
      {"fifo", "mkfifo \"$CGOV_PROGRESS_FILE\"; exit 4", "not a regular file"},
      {"zero", "ln -s /dev/zero \"$CGOV_PROGRESS_FILE\"; exit 4", "a symlink (not followed)"},
      {"secret", "ln -s " + secret + " \"$CGOV_PROGRESS_FILE\"; exit 4", "a symlink"},
      {"endless", "head -c 3000000 /dev/zero | tr '\\0' x > \"$CGOV_PROGRESS_FILE\"; exit 4",
       "(last 64 KiB):1: progress line 'xxxx"},
  };
  for (const Case& c : cases) {
    const std::string out = dir / c.name;
    RunResult r = RunProgram(
        {CgovBinary(), "run", "--out", out, "--interval", "200ms", "--", "/bin/sh", "-c", c.script},
        {{"CGOV_TAGS", ""}, {"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}}, 30);
    EXPECT_EQ(r.exit_code, 4) << c.name << ": " << r.err;
    const std::string summary = ReadFile(out + "/summary.json");
    EXPECT_NE(summary.find(c.warning), std::string::npos) << c.name << ": " << summary;
    EXPECT_EQ(summary.find("TOPSECRET"), std::string::npos) << c.name;
    EXPECT_LT(summary.size(), 200'000u) << c.name << ": the endless line is not copied";
    EXPECT_EQ(ReadFile(out + "/report.md").find("TOPSECRET"), std::string::npos) << c.name;
  }
}

// Items 5, 6, 7, 17: special files as inputs, and TLS that cannot work. Each is refused at once
// with a message naming the flag and the path; nothing is served in clear, nothing written
// beside a device.
TEST(HostileInputE2E, SpecialFilesAndBrokenTlsAreRefusedAtOnce) {
  TempDir dir;
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  WriteFile(dir / "empty.pem", "");
  WriteFile(dir / "auth", "u:p\n");
  chmod((dir / "auth").c_str(), 0600);
  WriteFile(dir / "shared-auth", "u:p\n");
  chmod((dir / "shared-auth").c_str(), 0644);
  const std::string db = dir / "h.db";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"daemon", "--db", db, "--listen", "127.0.0.1:0", "--basic-auth-file", dir.path()},
       "--basic-auth-file " + dir.path() + ": a directory"},
      {{"daemon", "--db", db, "--listen", "127.0.0.1:0", "--basic-auth-file", "/dev/zero"},
       "--basic-auth-file /dev/zero: a device"},
      {{"daemon", "--db", db, "--price-catalog", "/dev/zero"},
       "--price-catalog /dev/zero: a device"},
      // A password in plain text that others may read.
      {{"daemon", "--db", db, "--listen", "127.0.0.1:0", "--basic-auth-file", dir / "shared-auth"},
       "--basic-auth-file " + (dir / "shared-auth") +
           ": a password in plain text readable by its group or others (mode 0644); `chmod 600 " +
           (dir / "shared-auth") + "`"},
      {{"daemon", "--db", db, "--price-catalog", fifo}, "a FIFO"},
      {{"daemon", "--db", fifo}, "--db " + fifo + ": a FIFO"},
      {{"report", "--db", fifo}, "a FIFO"},
      {{"daemon", "--db", "/dev/null"}, "--db /dev/null: a device"},
      // --force replaced (deleted) whatever the path named: a FIFO, or /dev/null as root.
      {{"demo", "--db", fifo, "--force", "--gpus", "1", "--duration", "1h"},
       "--db " + fifo + ": a FIFO"},
      {{"daemon", "--db", db, "--listen", "127.0.0.1:0", "--basic-auth-file", dir / "auth",
        "--tls-cert", dir / "empty.pem", "--tls-key", dir / "empty.pem"},
       "--tls-cert " + (dir / "empty.pem") + ": empty; refusing to serve without TLS"},
      // A key where the certificate goes: PEM, but no certificate.
      {{"daemon", "--db", db, "--listen", "127.0.0.1:0", "--tls-cert", kExpiredKey, "--tls-key",
        kExpiredKey},
       "--tls-cert " + std::string(kExpiredKey) + ": not a PEM X.509 certificate"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {CgovBinary()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult r = RunProgram(argv, {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}}, 10);
    EXPECT_NE(r.exit_code, 0) << c.args[0] << " " << c.args[2];
    EXPECT_LT(r.wall_s, 8) << "hung: " << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists("/dev/null-journal"));
  EXPECT_TRUE(std::filesystem::is_fifo(fifo)) << "the FIFO was replaced";
}

// Item 7: an expired certificate is served (its owner may be renewing it) with a warning that
// says when it expired.
TEST(HostileInputE2E, AnExpiredCertificateIsServedWithAWarning) {
  TempDir dir;
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "1s", "--listen",
                    "127.0.0.1:0", "--tls-cert", kExpiredCert, "--tls-key", kExpiredKey},
                   {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
  ASSERT_TRUE(daemon.spawn_error.empty()) << daemon.spawn_error;
  // Up and serving once it has committed a tick (a fixed 1.5 s was not always enough under the
  // sanitizers on a loaded machine: SIGTERM came before its handler, exit 143).
  EXPECT_TRUE(WaitFor([&] { return QueryDb(dir / "h.db", "SELECT count(*) FROM tick") >= 1; }, 20));
  kill(daemon.pid, SIGTERM);
  RunResult r = WaitProgram(daemon, 10);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: --tls-cert " + std::string(kExpiredCert) +
                       " (CN=127.0.0.1) expired on 2020-01-02T00:00:00"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("serving /metrics on https://127.0.0.1:"), std::string::npos) << r.err;
}

// Item 13: a database with a corrupt page was reported on (exit 0) and appended to. Now every
// writer runs quick_check before its first write: the daemon and an import refuse it, and not a
// byte of the file changes. A report (issue 44: it no longer reads the whole file first) fails
// on the corrupt page it reads, with SQLite's own finding and the same advice.
TEST(HostileInputE2E, ACorruptDatabaseIsRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  const std::string db = dir / "h.db";
  RunResult demo = RunProgram(
      {CgovBinary(), "demo", "--db", db, "--gpus", "1", "--duration", "2h", "--interval", "10s"},
      {});
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  // The first 64 bytes of the hourly rollup table's root page (its b-tree page header) garbled.
  const int64_t page_size = QueryDb(db, "PRAGMA page_size");
  const int64_t root = QueryDb(db, "SELECT rootpage FROM sqlite_schema WHERE name = 'gpu_hour'");
  ASSERT_GT(root, 1);
  std::string bytes = ReadFile(db);
  ASSERT_GE(static_cast<int64_t>(bytes.size()), root * page_size);
  for (int i = 0; i < 64; ++i) bytes[(root - 1) * page_size + i] = static_cast<char>(i * 37 + 11);
  WriteFile(db, bytes);
  const std::string corrupt = "h.db: the database is corrupt (SQLite quick_check: ";
  RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--since", "7d"}, {});
  EXPECT_EQ(report.exit_code, 1) << report.out;
  EXPECT_NE(report.err.find("h.db: the database is corrupt (SQLite: database disk image is "
                            "malformed); nothing was written. Keep a copy, then salvage what is "
                            "readable with `sqlite3 "),
            std::string::npos)
      << report.err;
  EXPECT_EQ(report.out, "") << "no partial report";
  RunResult daemon = RunProgram({CgovBinary(), "daemon", "--db", db, "--interval", "1s"},
                                {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}}, 10);
  EXPECT_EQ(daemon.exit_code, 1);
  EXPECT_NE(daemon.err.find(corrupt), std::string::npos) << daemon.err;
  EXPECT_NE(daemon.err.find("nothing was written"), std::string::npos) << daemon.err;
  std::filesystem::copy_file(Fixture("gpu-usage-audit/demo-30ticks.db"), dir / "gua.db");
  RunResult imported =
      RunProgram({CgovBinary(), "import", "gpu-usage-audit", dir / "gua.db", "--db", db}, {});
  EXPECT_EQ(imported.exit_code, 1);
  EXPECT_NE(imported.err.find(corrupt), std::string::npos) << imported.err;
  EXPECT_EQ(ReadFile(db), bytes) << "the corrupt file was written to";
}

// A daemon on a host without GPUs (host samples only), ticking every second, serving on `listen`.
Started StartGpulessDaemon(const std::string& db, const std::string& listen,
                           bool allow_no_gpus = true) {
  std::vector<std::string> argv = {CgovBinary(), "daemon", "--db",     db,
                                   "--interval", "1s",     "--listen", listen};
  if (allow_no_gpus) argv.push_back("--allow-no-gpus");
  return StartProgram(argv, {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
}

// Issue 58, 9: `cgov daemon --nvml-lib /nonexistent` ran with 0 GPUs and /health answered 200.
// Now a daemon without a working driver is not ready (503, the reason, no path) unless the host
// has no GPU on purpose (--allow-no-gpus).
TEST(HostileInputE2E, AMissingDriverIsNotReadyUnlessNoGpuIsAllowed) {
  TempDir dir;
  for (bool allowed : {false, true}) {
    const int port = FreePort();
    Started daemon = StartGpulessDaemon(dir / (allowed ? "a.db" : "b.db"),
                                        "127.0.0.1:" + std::to_string(port), allowed);
    ASSERT_TRUE(WaitFor(TicksTaken(port, 1), 15));
    const std::string health = Curl("http://127.0.0.1:" + std::to_string(port) + "/health");
    if (allowed) {
      EXPECT_NE(health.find("HTTP 200"), std::string::npos) << health;
    } else {
      EXPECT_NE(health.find("HTTP 503"), std::string::npos) << health;
      EXPECT_NE(health.find("not ready: no GPU is recorded: the NVIDIA driver (NVML) did not load"),
                std::string::npos)
          << health;
      EXPECT_EQ(health.find("/nonexistent"), std::string::npos) << "/health names no path";
      const std::string live = Curl("http://127.0.0.1:" + std::to_string(port) + "/livez");
      EXPECT_NE(live.find("HTTP 200"), std::string::npos) << "alive: a restart brings no driver";
    }
    kill(daemon.pid, SIGTERM);
    RunResult stopped = WaitProgram(daemon, 15);
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_NE(stopped.err.find("no GPU data:"), std::string::npos) << stopped.err;
  }
}

// Item 12: `cgov demo --force` replaced a database a daemon was writing; the daemon wrote on
// into the deleted file, exited 0 and reported healthy. Now demo refuses, and a file replaced
// by other means is noticed: log, /health and the history_db collector say so.
TEST(HostileInputE2E, ADatabaseInUseIsNotReplacedAndAReplacementIsNoticed) {
  TempDir dir;
  const std::string db = dir / "live.db";
  const int port = FreePort();
  Started daemon = StartGpulessDaemon(db, "127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(WaitFor(TicksTaken(port, 2), 15));
  RunResult demo = RunProgram({CgovBinary(), "demo", "--db", db, "--force", "--gpus", "1",
                               "--duration", "1h", "--interval", "10s"},
                              {});
  EXPECT_EQ(demo.exit_code, 1) << demo.out;
  EXPECT_NE(
      demo.err.find("live.db: a cgov is writing to this database (pid " +
                    std::to_string(daemon.pid) + "); --force does not replace a database in use"),
      std::string::npos)
      << demo.err;
  EXPECT_GE(QueryDb(db, "SELECT count(*) FROM tick"), 1) << "the live database is still there";

  // Replaced behind its back (a rename over it, as a restore or a careless script does).
  const std::string other = dir / "other.db";
  ASSERT_EQ(RunProgram({CgovBinary(), "demo", "--db", other, "--gpus", "1", "--duration", "1h",
                        "--interval", "10s"},
                       {})
                .exit_code,
            0);
  ASSERT_EQ(std::rename(other.c_str(), db.c_str()), 0);
  // Noticed as the next batch of ticks begins: within --commit-every (10 s) and a tick.
  std::string health;
  ASSERT_TRUE(WaitFor(
      [&] {
        health = Curl("http://127.0.0.1:" + std::to_string(port) + "/health");
        return health.find("HTTP 503") != std::string::npos;
      },
      20))
      << health;
  EXPECT_NE(health.find("the history database was replaced by another file"), std::string::npos)
      << health;
  EXPECT_EQ(health.find(dir.path()), std::string::npos) << "/health names no path";
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  const size_t at = metrics.find("cgov_collector_success{collector=\"history_db\"");
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_EQ(metrics.substr(metrics.find('\n', at) - 2, 2), " 0") << metrics.substr(at, 120);
  // The ticks from then on are kept: they go to the file the path names now.
  EXPECT_TRUE(WaitFor(
      [&] {
        return QueryDb(db,
                       "SELECT count(*) FROM tick WHERE run IN (SELECT id FROM run WHERE source = "
                       "'daemon')") >= 1;
      },
      10))
      << "no tick of the daemon's in the file the path names now";
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 60);  // counted from the daemon's start
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(
      stopped.err.find("warning: the history database " + db + " was replaced by another file at "),
      std::string::npos)
      << stopped.err;
}

// Item 18: with the disk full (here: a file-size limit, which fails writes the same way), the
// final line said 8 failed ticks while cgov_tick_failures_total said 71, each reopen added a
// `run` row, and nothing was said when writing recovered.
TEST(HostileInputE2E, FailedWritesAreCountedOnceAndRecoveryIsSaid) {
  TempDir dir;
  const std::string db = dir / "h.db";
  const int port = FreePort();
  Started daemon = StartGpulessDaemon(db, "127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(WaitFor(TicksTaken(port, 2), 15));
  rlimit tiny{1, RLIM_INFINITY}, unlimited{RLIM_INFINITY, RLIM_INFINITY};
  ASSERT_EQ(prlimit(daemon.pid, RLIMIT_FSIZE, &tiny, nullptr), 0) << std::strerror(errno);
  ASSERT_TRUE(WaitFor(
      [&] {
        return Sample(Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics"),
                      "cgov_tick_failures_total") >= 3;
      },
      15));
  ASSERT_EQ(prlimit(daemon.pid, RLIMIT_FSIZE, &unlimited, nullptr), 0);
  // The first tick after a reopen is committed at once.
  const int64_t before = QueryDb(db, "SELECT count(*) FROM tick");
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= before + 1; }, 15))
      << "writing never recovered";
  const double failures = Sample(Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics"),
                                 "cgov_tick_failures_total");
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 60);  // counted from the daemon's start
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find(", " + std::to_string(static_cast<int>(failures)) + " not written\n"),
            std::string::npos)
      << "the final line counts what /metrics counted (" << failures << "):\n"
      << stopped.err;
  EXPECT_NE(stopped.err.find("writing to " + db + " again, after "), std::string::npos)
      << stopped.err;
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM run"), 1) << "one run, however often it reopened";
}

// Items 4, 15, 16: numbers out of any sane range are usage errors, never a busy loop, a window
// in 1715 or an import of 0.00 GPU-hours.
TEST(HostileInputE2E, OutOfRangeIntervalsTimesAndImportsAreRefused) {
  TempDir dir;
  const std::string db = dir / "h.db";
  RunResult interval = RunProgram({CgovBinary(), "daemon", "--db", db, "--interval", "110000d"},
                                  {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}}, 10);
  EXPECT_EQ(interval.exit_code, 2) << interval.err;
  EXPECT_NE(interval.err.find("--interval 110000d: must be between 100ms and 1h"),
            std::string::npos)
      << interval.err;
  RunResult demo = RunProgram(
      {CgovBinary(), "demo", "--db", db, "--gpus", "1", "--duration", "2h", "--interval", "10s"},
      {});
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  for (const auto& [flag, value, message] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--until", "2300-01-01", "outside the times cgov takes: 1970-01-01 to 2199-12-31"},
           {"--since", "9999-12-31T23:59Z", "outside the times cgov takes"}}) {
    RunResult r = RunProgram({CgovBinary(), "report", "--db", db, flag, value}, {});
    EXPECT_EQ(r.exit_code, 2) << flag << " " << value << ": " << r.out;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  // Regression (issue 43, 8): a --since reaching before 1970 means "all of it": the window is
  // clamped to the data, and the report says so (it was an error).
  RunResult all = RunProgram({CgovBinary(), "report", "--db", db, "--since", "1000000d"}, {});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("(2h)"), std::string::npos) << "two hours of data:\n" << all.out;
  EXPECT_NE(all.out.find("Note: the window asked for (1970-01-01T00:00Z → "), std::string::npos)
      << all.out;
  // A gpu-usage-audit database whose run says it sampled every 0 seconds.
  const std::string source = dir / "gua.db";
  std::filesystem::copy_file(Fixture("gpu-usage-audit/demo-30ticks.db"), source);
  ASSERT_EQ(QueryDb(source, "SELECT count(*) FROM daemon_run") > 0, true);
  {
    auto opened = SqliteDb::Open(source, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(opened.ok());
    ASSERT_TRUE((*opened)->Exec("UPDATE daemon_run SET interval_seconds = 0").ok());
  }
  const std::string into = dir / "imported.db";
  RunResult imported =
      RunProgram({CgovBinary(), "import", "gpu-usage-audit", source, "--db", into}, {});
  EXPECT_NE(imported.exit_code, 0);
  EXPECT_NE(imported.err.find("interval_seconds 0.0: must be between 0.1 and 3600; nothing was "
                              "imported"),
            std::string::npos)
      << imported.err;
}

// Issue 58, 4: `cgov report` text printed raw control characters stored in a history database
// it did not write (`--db` names any file). Stored strings enter display-safe where they are read.
TEST(HostileInputE2E, StoredControlCharactersNeverReachATerminal) {
  TempDir dir;
  const std::string db = dir / "h.db";
  std::filesystem::copy_file(SharedDemoDb({"--gpus", "2", "--duration", "6h", "--interval", "60s"}),
                             db);
  {
    auto opened = SqliteDb::Open(db, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    ASSERT_TRUE((*opened)
                    ->Exec("UPDATE identity SET user = user || char(27) || ']0;pwned' || char(7) "
                           "|| char(27) || '[2J' || char(13)")
                    .ok());
    ASSERT_TRUE(
        (*opened)
            ->Exec("UPDATE command SET name = name || char(27) || '[31m' || char(155) || char(8)")
            .ok());
  }
  for (const char* format : {"text", "md", "csv"}) {
    RunResult report =
        RunProgram({CgovBinary(), "report", "--db", db, "--since", "7d", "--format", format}, {});
    ASSERT_EQ(report.exit_code, 0) << format << ": " << report.err;
    for (char c : {'\x1b', '\x07', '\r', '\x08'}) {
      EXPECT_EQ(report.out.find(c), std::string::npos) << format << ": byte " << int(c);
      EXPECT_EQ(report.err.find(c), std::string::npos) << format << ": byte " << int(c);
    }
    if (std::string(format) == "text") {
      EXPECT_NE(report.out.find("\\x1b]0;pwned"), std::string::npos) << report.out;
    }
  }
}

// Item 3: a daemon whose ticks take longer than --interval (a slow driver) ignored SIGTERM for
// as long as they did. Now it stops after the tick under way.
TEST(HostileInputE2E, ADaemonWithTicksLongerThanItsIntervalStillStops) {
  TempDir dir;
  const std::string scenario = dir / "slow.json";
  WriteFile(scenario, R"({"delays_ms": {"nvmlDeviceGetComputeRunningProcesses_v3": 1500},
    "gpus": [{"name": "NVIDIA L4", "memory_total_mib": 23034}]})");
  Started daemon = StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "1s",
                                 "--commit-every", "0s", "--nvml-lib", FakeNvml("full")},
                                {{"CGOV_FAKE_NVML_SCENARIO", scenario}});
  ASSERT_TRUE(WaitFor([&] { return QueryDb(dir / "h.db", "SELECT count(*) FROM tick") >= 2; }, 20));
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 10);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_LT(took, 5) << "a stop waits for the tick under way (1.5 s), no more";
  EXPECT_NE(stopped.err.find("stopped after"), std::string::npos) << stopped.err;
}

// Item 19: an IPv6 listen address was printed as http://[::1:PORT] — a URL no client opens.
TEST(HostileInputE2E, TheIpv6ListenUrlIsOneAClientOpens) {
  TempDir dir;
  Started daemon = StartProgram(
      {CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "1s", "--listen", "[::1]:0"},
      {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
  const bool ticked =
      WaitFor([&] { return QueryDb(dir / "h.db", "SELECT count(*) FROM tick") >= 1; }, 15);
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 15);
  if (!ticked && stopped.err.find("--listen") != std::string::npos) {
    GTEST_SKIP() << "no IPv6 loopback here: " << stopped.err;
  }
  ASSERT_TRUE(ticked) << stopped.err;
  EXPECT_NE(stopped.err.find("serving /metrics on http://[::1]:"), std::string::npos)
      << stopped.err;
}

}  // namespace
}  // namespace cgov::e2e
