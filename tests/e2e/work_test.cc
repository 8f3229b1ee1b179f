// Issue 49's cost per sample: a job run with a progress file (cgov run sets CGOV_PROGRESS_FILE)
// on a host with `cgov daemon --listen`: the daemon counts the work the file reports while the
// job is on a GPU (cgov_identity_work_total{unit}), refuses a file the job points elsewhere
// with a link, and the Grafana panel prices a sample on the real Prometheus.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"
#include "store/prometheus_source.h"

namespace cgov::e2e {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The series of `name` for `user` in a /metrics text (its value), or -1.
double UserSample(const std::string& metrics, const std::string& name, const std::string& user) {
  const std::regex line("(^|\n)" + name + "\\{[^}]*user=\"" + user + "\"[^}]*\\} ([0-9.e+]+)");
  std::smatch m;
  return std::regex_search(metrics, m, line) ? std::stod(m[2]) : -1;
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

TEST(WorkE2E, TheDaemonCountsTheWorkJobsReportAndThePanelPricesASample) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  TempDir dir;
  // The shared box, where alice's training job (pid 41000, a busy GPU) reports samples and
  // carol's (pid 43000) points its progress file at a link to a file that is not hers.
  const std::string root = dir / "host";
  fs::copy(Fixture("proc/shared-box"), root, fs::copy_options::recursive);
  const auto add_env = [&](int pid, const std::string& path) {
    const std::string file = root + "/proc/" + std::to_string(pid) + "/environ";
    WriteFile(file, ReadFile(file) + "CGOV_PROGRESS_FILE=" + path + std::string(1, '\0'));
    fs::create_symlink(root, root + "/proc/" + std::to_string(pid) + "/root");
  };
  add_env(41000, "/jobs/alice/progress.log");
  add_env(43000, "/jobs/carol/progress.log");
  fs::create_directories(root + "/jobs/alice");
  fs::create_directories(root + "/jobs/carol");
  const std::string progress = root + "/jobs/alice/progress.log";
  WriteFile(progress, "1000 samples\n");
  WriteFile(root + "/secret", "99999 samples\n");
  fs::create_symlink(root + "/secret", root + "/jobs/carol/progress.log");
  if (geteuid() == 0) {
    ASSERT_EQ(chown(progress.c_str(), 1001, 1001), 0) << "alice's file is alice's";
  } else {
    // Not root: alice is the test's own user, so that her file is hers.
    const std::string uid = std::to_string(geteuid());
    for (const std::string& f :
         {root + "/proc/41000/status", root + "/proc/41000/loginuid", root + "/etc/passwd"}) {
      WriteFile(f, Replace(ReadFile(f), "1001", uid));
    }
  }
  const int port = FreePort(), prom_port = FreePort();
  const std::string prom_url = "http://127.0.0.1:" + std::to_string(prom_port);
  WriteFile(dir / "prometheus.yml",
            "global:\n  scrape_interval: 1s\nscrape_configs:\n"
            "  - job_name: cgov\n    static_configs:\n      - targets: [\"127.0.0.1:" +
                std::to_string(port) + "\"]\n");
  Started prometheus = StartProgram(
      {kPrometheus, "--config.file=" + (dir / "prometheus.yml"),
       "--storage.tsdb.path=" + (dir / "tsdb"),
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
      {});
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "1s", "--nvml-lib",
                    FakeNvml("full"), "--host-root", root, "--listen",
                    "127.0.0.1:" + std::to_string(port), "--price-per-gpu-hour", "2.00"},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  const std::string metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  std::string metrics;
  // The first reading is where counting starts: alice's cost runs, her work series waits.
  ASSERT_TRUE(WaitFor(
      [&] {
        metrics = Curl(metrics_url);
        return UserSample(metrics, "cgov_identity_cost_usd_total", "alice") > 0;
      },
      20))
      << metrics.substr(0, 1500);
  EXPECT_EQ(UserSample(metrics, "cgov_identity_work_total", "alice"), -1) << metrics;
  WriteFile(progress, "1000 samples\n1500 samples\n");
  ASSERT_TRUE(WaitFor(
      [&] {
        metrics = Curl(metrics_url);
        return UserSample(metrics, "cgov_identity_work_total", "alice") == 500;
      },
      20))
      << metrics.substr(0, 3000);
  EXPECT_NE(metrics.find("project=\"llm\""), std::string::npos);
  EXPECT_NE(metrics.find("unit=\"samples\""), std::string::npos);
  WriteFile(progress, "1000 samples\n1500 samples\n2600 samples\n");
  ASSERT_TRUE(WaitFor(
      [&] { return UserSample(Curl(metrics_url), "cgov_identity_work_total", "alice") == 1600; },
      20));
  // carol's link was not followed: no work of hers, and the log says why.
  EXPECT_EQ(UserSample(Curl(metrics_url), "cgov_identity_work_total", "carol"), -1);

  // The dashboard's panel on the real Prometheus: llm's dollars per sample.
  auto prom = PrometheusSource::Open(prom_url, std::chrono::seconds(10));
  ASSERT_TRUE(prom.ok());
  json dashboard = json::parse(ReadFile(DocsFile("../deploy/grafana/cgov-dashboard.json")));
  std::string expr;
  for (const json& panel : dashboard["panels"]) {
    if (std::string(panel["title"]).starts_with("Cost per unit of work")) {
      expr = panel["targets"][0]["expr"];
    }
  }
  ASSERT_FALSE(expr.empty());
  const auto now_s = [] {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()) /
           1e3;
  };
  // Prometheus has scraped the count at 1,600; the job goes on, so that the range holds growth
  // (increase() counts none before a series' first scrape).
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = prom->Query("cgov_identity_work_total{user=\"alice\"}", now_s());
        return r.ok() && !r->empty() && (*r)[0].points.back().second == 1600;
      },
      20));
  WriteFile(progress, "1000 samples\n1500 samples\n2600 samples\n3700 samples\n");
  expr = std::regex_replace(expr, std::regex("\\$__range"), "5m");
  expr = std::regex_replace(expr, std::regex("\\$(host|namespace|project)\\b"), ".*");
  double per_sample = -1;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = prom->Query(expr, now_s());
        if (!r.ok() || r->empty()) return false;
        EXPECT_EQ((*r)[0].Label("project"), "llm");
        per_sample = (*r)[0].points.back().second;
        return per_sample > 0;
      },
      30))
      << expr;
  // alice's one GPU at $2.00 an hour for a few seconds, over more than 1,000 samples.
  EXPECT_LT(per_sample, 0.01);
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 15);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("pid 43000: its work is not counted"), std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("a symlink (not followed)"), std::string::npos) << stopped.err;
  kill(prometheus.pid, SIGTERM);
  WaitProgram(prometheus, 10);
}

// Issue 58, 1-3: a root process in a container names a file outside its root (through an
// absolute symlink, and through a chroot's "/../.."); two processes of one job (DDP ranks) name
// one file; a job drives its count to 1e308 and back. The daemon reads nothing outside a
// process's root and logs nothing of what it read, counts a file once, and keeps work finite.
TEST(WorkE2E, AFileIsReadInsideItsRootOnceAndItsWorkStaysFinite) {
  TempDir dir;
  const std::string root = dir / "host";
  fs::copy(Fixture("proc/shared-box"), root, fs::copy_options::recursive);
  const auto set_env = [&](int pid, const std::string& path) {
    const std::string file = root + "/proc/" + std::to_string(pid) + "/environ";
    WriteFile(file, ReadFile(file) + "CGOV_PROGRESS_FILE=" + path + std::string(1, '\0'));
  };
  const std::string me = std::to_string(geteuid());
  // bob's pid 42000 and the unknown pid 49999: root processes (the test's uid when not root) in
  // a container whose root holds a link to "/".
  const std::string container = dir / "container";
  fs::create_directories(container);
  fs::create_symlink("/", container + "/x");
  fs::copy(root + "/proc/42000", root + "/proc/49999", fs::copy_options::recursive);
  for (int pid : {42000, 49999}) {
    const std::string status = root + "/proc/" + std::to_string(pid) + "/status";
    WriteFile(status, Replace(ReadFile(status), "1002", me));
    const std::string stat = root + "/proc/" + std::to_string(pid) + "/stat";
    WriteFile(stat, Replace(ReadFile(stat), "42000 (", std::to_string(pid) + " ("));
    fs::create_symlink(container, root + "/proc/" + std::to_string(pid) + "/root");
  }
  const std::string secret = dir / "outside/secret.log";
  fs::create_directories(dir / "outside");
  WriteFile(secret, "5 samples\n");
  set_env(42000, "/x" + secret);
  set_env(49999, "/../../../../../../../../../../../.." + secret);
  // alice's two ranks, 41000 and carol's 43000 made alice's, name one file.
  for (const char* f : {"/proc/43000/status", "/proc/43000/loginuid"}) {
    WriteFile(root + f, Replace(ReadFile(root + f), "1003", geteuid() == 0 ? "1001" : me));
  }
  for (int pid : {41000, 43000}) {
    set_env(pid, "/jobs/alice/progress.log");
    fs::create_symlink(root, root + "/proc/" + std::to_string(pid) + "/root");
  }
  fs::create_directories(root + "/jobs/alice");
  const std::string progress = root + "/jobs/alice/progress.log";
  WriteFile(progress, "1000 samples\n");
  if (geteuid() == 0) {
    ASSERT_EQ(chown(progress.c_str(), 1001, 1001), 0);
  } else {
    for (const std::string& f :
         {root + "/proc/41000/status", root + "/proc/41000/loginuid", root + "/etc/passwd"}) {
      WriteFile(f, Replace(ReadFile(f), "1001", me));
    }
  }
  const int port = FreePort();
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "200ms",
                    "--nvml-lib", FakeNvml("full"), "--host-root", root, "--listen",
                    "127.0.0.1:" + std::to_string(port), "--price-per-gpu-hour", "2.00"},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  const std::string metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  const auto alice_work = [&] {
    return UserSample(Curl(metrics_url), "cgov_identity_work_total", "alice");
  };
  std::string metrics;
  ASSERT_TRUE(WaitFor(
      [&] {
        metrics = Curl(metrics_url);
        return UserSample(metrics, "cgov_identity_cost_usd_total", "alice") > 0;
      },
      20))
      << metrics.substr(0, 1500);
  usleep(600'000);  // a few ticks: the first readings made
  WriteFile(secret, "5 samples\n99999 samples\n");
  WriteFile(progress, "1000 samples\n1500 samples\n");
  // Two ranks, one file: its growth once.
  ASSERT_TRUE(WaitFor([&] { return alice_work() >= 500; }, 20));
  usleep(600'000);
  EXPECT_EQ(alice_work(), 500);
  // Driven to 1e308 and back: not understood, then a restart from 0, then 2,000 more.
  for (const char* line : {"1e308 samples", "0 samples", "1e308 samples", "0 samples"}) {
    WriteFile(progress, std::string(line) + "\n");
    usleep(600'000);
  }
  WriteFile(progress, "2000 samples\n");
  ASSERT_TRUE(WaitFor([&] { return alice_work() >= 2500; }, 20));
  usleep(600'000);
  metrics = Curl(metrics_url);
  EXPECT_EQ(UserSample(metrics, "cgov_identity_work_total", "alice"), 2500) << metrics;
  EXPECT_EQ(metrics.find("+Inf"), std::string::npos);
  // Nothing outside the container's root was counted for its root processes.
  EXPECT_EQ(metrics.find("99994"), std::string::npos) << metrics;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("cgov_identity_work_total")) continue;
    EXPECT_NE(line.find("user=\"alice\""), std::string::npos) << line;
  }
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 15);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_EQ(stopped.err.find("99999"), std::string::npos) << stopped.err;
  EXPECT_EQ(stopped.err.find("1e308"), std::string::npos)
      << "a line's content logged: " << stopped.err;
}

}  // namespace
}  // namespace cgov::e2e
