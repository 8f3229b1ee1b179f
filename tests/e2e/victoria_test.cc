// End-to-end: the fleet report on a long-term store (issue 50). Debian's VictoriaMetrics
// (single node, its own scraper reading a Prometheus scrape config) and the real Prometheus
// scrape the same two daemons every second; `cgov report --prometheus` must give each host's
// GPU-seconds as its own database does, from both stores, for a steady window, a window that
// starts before the data, a window with a daemon restart in it, and one whose daemon restarted
// 10 s before the report (inside VictoriaMetrics' -search.latencyOffset of 30 s, which the report
// turns off with nocache=1). A 30-hour history, backfilled into both and summed by
// deploy/prometheus/cgov-rules.yml's hourly rules (promtool's backfill for Prometheus, vmalert's
// replay for VictoriaMetrics), gives the generator's totals from the rules of either.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/time_format.h"
#include "e2e_helpers.h"
#include "os/http_get.h"
#include "process_runner.h"
#include "store/prometheus_source.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

constexpr char kVictoria[] = "/usr/bin/victoria-metrics";
constexpr char kVmalert[] = "/usr/bin/vmalert";
constexpr char kVmctl[] = "/usr/bin/vmctl";

std::string At(double seconds) {
  return FormatRfc3339Utc(static_cast<int64_t>(std::llround(seconds * 1000)) * 1'000'000);
}

// CLOCK_MONOTONIC, as Started::start_s.
double MonotonicS() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool Ready(const std::string& url, const std::string& path) {
  auto ready = HttpGet(url + path, {}, std::chrono::seconds(1));
  return ready.ok() && ready->status == 200;
}

// Each host's GPU-seconds (all phases) in a report.
std::map<std::string, double> SecondsByHost(const json& report, const std::string& host = "") {
  std::map<std::string, double> out;
  for (const json& g : report["gpus"]) {
    for (const auto& [phase, v] : g["phase_seconds"].items()) {
      out[host.empty() ? g["host"].get<std::string>() : host] += v.get<double>();
    }
  }
  return out;
}

class VictoriaE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {kPrometheus, kVictoria, kVmalert, kVmctl}) {
      ASSERT_EQ(access(tool, X_OK), 0) << tool
                                       << ": Debian's prometheus and victoria-metrics packages are "
                                          "required (scripts/install-deps)";
    }
  }
  void TearDown() override {
    for (Started* p : {&daemons_[0], &daemons_[1], &prometheus_, &victoria_, &vmalert_}) {
      if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        WaitProgram(*p, 20);
        p->pid = -1;
      }
    }
  }

  // `scrape`: a Prometheus scrape config, read by both servers.
  void StartStores(const std::string& scrape) {
    WriteFile(dir_ / "scrape.yml", scrape);
    StartVictoria(/*scrape=*/true);
    StartPrometheus();
  }
  // Prometheus on dir_/tsdb with dir_/scrape.yml.
  void StartPrometheus() {
    prometheus_ = StartProgram(
        {kPrometheus, "--config.file=" + (dir_ / "scrape.yml"),
         "--storage.tsdb.path=" + (dir_ / "tsdb"), "--storage.tsdb.retention.time=100y",
         "--web.listen-address=127.0.0.1:" + std::to_string(prom_port_), "--log.level=warn"},
        {});
    ASSERT_TRUE(WaitFor([&] { return Ready(prom_url_, "/-/ready"); }, 60))
        << "Prometheus did not become ready";
  }
  void StartVictoria(bool scrape) {
    std::vector<std::string> argv = {
        kVictoria, "-httpListenAddr=127.0.0.1:" + std::to_string(vm_port_),
        "-storageDataPath=" + (dir_ / "vm"), "-retentionPeriod=100y", "-loggerLevel=ERROR"};
    if (scrape) argv.push_back("-promscrape.config=" + (dir_ / "scrape.yml"));
    victoria_ = StartProgram(argv, {});
    ASSERT_TRUE(WaitFor([&] { return Ready(vm_url_, "/health"); }, 60))
        << "VictoriaMetrics did not start";
  }

  void StartDaemon(size_t k) {
    const char* node = k == 0 ? "a" : "b";
    daemons_[k] = StartProgram(
        {CgovBinary(), "daemon", "--db", dir_ / (std::string(node) + ".db"), "--interval", "1s",
         "--commit-every", "1s", "--nvml-lib", FakeNvml("full"), "--host-root",
         Fixture("proc/shared-box"), "--hostname", std::string("node-") + node, "--listen",
         "127.0.0.1:" + std::to_string(ports_[k])},
        {{"CGOV_FAKE_NVML_SCENARIO", Scenario(std::string("fleet_") + node)}});
  }
  void RestartDaemon(size_t k) {
    ASSERT_EQ(kill(daemons_[k].pid, SIGTERM), 0);
    RunResult stopped = WaitProgram(daemons_[k], MonotonicS() - daemons_[k].start_s + 15);
    daemons_[k].pid = -1;
    ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
    StartDaemon(k);
  }

  // Both stores hold at least `samples` scrapes of every daemon (bounded: 60 s).
  void WaitForScrapes(int samples) {
    for (const std::string& url : {prom_url_, vm_url_}) {
      auto store = PrometheusSource::Open(url, std::chrono::seconds(10));
      ASSERT_TRUE(store.ok());
      ASSERT_TRUE(WaitFor(
          [&] {
            auto n = store->Query("count(count_over_time(cgov_ticks_total[5m]) >= " +
                                      std::to_string(samples) + ") == 2",
                                  NowS());
            return n.ok() && !n->empty();
          },
          60))
          << url << " did not scrape both daemons " << samples << " times";
    }
  }

  json Report(const std::vector<std::string>& source, double since_s, double until_s,
              const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {CgovBinary(), "report",    "--format", "json",
                                     "--since",    At(since_s), "--until",  At(until_s)};
    argv.insert(argv.end(), source.begin(), source.end());
    argv.insert(argv.end(), extra.begin(), extra.end());
    if (source[0] == "--prometheus") argv.push_back("--verbose");  // each query, on failure
    RunResult r = RunProgram(argv, {}, 120);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return json::object();
    return json::parse(r.out);
  }

  // Prometheus and VictoriaMetrics each give every host what its database gives, to a bound
  // built of what each store cannot see (docs/metrics.md, "Long-term stores"), per GPU: 2.5 s
  // for each edge of the window that falls while a daemon runs (the counters move at the next
  // tick and are read at the last scrape: a scrape interval and a tick, 1 s each, and half a
  // second of scheduling), 2.5 s for each restart inside the window (the old daemon's ticks after
  // its last scrape, and its last tick's credit), and from Prometheus 2.5 s more where the data
  // begins inside a window read across a restart (its increase() counts from the first scrape,
  // not from 0: VictoriaMetrics' counts from 0). The two stores agree to the larger bound.
  void ExpectTheHostsFigures(const std::string& what, double since_s, double until_s,
                             int edges_inside, const std::map<std::string, int>& restarts,
                             bool starts_before_data) {
    SCOPED_TRACE(what);
    std::map<std::string, double> truth;
    std::map<std::string, int> gpus;
    for (const char* node : {"a", "b"}) {
      const std::string host = std::string("node-") + node;
      const json db = Report({"--db", dir_ / (std::string(node) + ".db")}, since_s, until_s);
      truth[host] = SecondsByHost(db, host)[host];
      gpus[host] = db["gpu_count"].get<int>();
    }
    std::map<std::string, std::map<std::string, double>> stores;
    for (const auto& [name, url] : {std::pair{"prometheus", prom_url_}, {"victoria", vm_url_}}) {
      const json r = Report({"--prometheus", url}, since_s, until_s);
      stores[name] = SecondsByHost(r);
    }
    for (const auto& [host, seconds] : truth) {
      const int restarted = restarts.count(host) ? restarts.at(host) : 0;
      std::map<std::string, double> bound;
      for (const char* name : {"prometheus", "victoria"}) {
        const bool first_scrape =
            std::string(name) == "prometheus" && restarted > 0 && starts_before_data;
        bound[name] = 2.5 * gpus[host] * (edges_inside + restarted + (first_scrape ? 1 : 0));
      }
      EXPECT_GT(seconds, 2 * gpus[host]) << host;
      for (const auto& [name, by_host] : stores) {
        const double got = by_host.count(host) ? by_host.at(host) : 0;
        EXPECT_NEAR(got, seconds, bound[name])
            << name << " " << host << ": the database has " << seconds;
      }
      EXPECT_NEAR(stores["prometheus"][host], stores["victoria"][host],
                  std::max(bound["prometheus"], bound["victoria"]))
          << host;
    }
  }

  TempDir dir_;
  int prom_port_ = FreePort(), vm_port_ = FreePort();
  std::string prom_url_ = "http://127.0.0.1:" + std::to_string(prom_port_);
  std::string vm_url_ = "http://127.0.0.1:" + std::to_string(vm_port_);
  std::array<int, 2> ports_ = {FreePort(), FreePort()};
  std::array<Started, 2> daemons_;
  Started prometheus_, victoria_, vmalert_;
};

TEST_F(VictoriaE2E, BothStoresGiveTheHostsFiguresAcrossRestartsAndTheLatencyOffset) {
  StartStores(
      "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      "scrape_configs:\n  - job_name: cgov\n    static_configs:\n      - targets: [\"127.0.0.1:" +
      std::to_string(ports_[0]) + "\", \"127.0.0.1:" + std::to_string(ports_[1]) + "\"]\n");
  ASSERT_FALSE(HasFatalFailure());
  const double before_data = NowS() - 60;
  StartDaemon(0);
  StartDaemon(1);
  const double started = NowS();
  WaitForScrapes(8);
  ASSERT_FALSE(HasFatalFailure());
  const double steady_end = NowS();
  // node-b restarts: its counters start again from 0.
  RestartDaemon(1);
  WaitForScrapes(4);  // node-a only needs more; node-b's new series are scraped again
  ASSERT_FALSE(HasFatalFailure());
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const double after_restart = NowS();
  // node-a restarts 10 s before the last report: within VictoriaMetrics' latency offset.
  RestartDaemon(0);
  ASSERT_FALSE(HasFatalFailure());
  std::this_thread::sleep_for(std::chrono::seconds(10));
  const double now = NowS();

  // The four windows, each store against each host's database (node-b restarted once before
  // after_restart, node-a once in the last 10 s).
  ExpectTheHostsFigures("a restart 10 s before the report", before_data, now, 1,
                        {{"node-a", 1}, {"node-b", 1}}, true);
  ExpectTheHostsFigures("a steady window", started + 2, steady_end, 2, {}, false);
  ExpectTheHostsFigures("a window that starts before the data", before_data, steady_end, 1, {},
                        true);
  ExpectTheHostsFigures("a restart in the window", before_data, after_restart, 1, {{"node-b", 1}},
                        true);
}

// The hourly group of deploy/prometheus/cgov-rules.yml as a rule file of its own.
std::string HourlyGroup() {
  const std::string rules = ReadFile(DocsFile("../deploy/prometheus/cgov-rules.yml"));
  const size_t from = rules.find("  - name: cgov-hourly\n");
  EXPECT_NE(from, std::string::npos);
  const size_t to = rules.find("\n  - name:", from + 1);
  return "groups:\n" + rules.substr(from, to == std::string::npos ? to : to + 1 - from);
}

// A window of 30 hours, read through the hourly recording rules: a 30-hour history of three nodes
// (cgov_fleet_history) backfilled into Prometheus (promtool) and from its blocks into
// VictoriaMetrics (vmctl); the rules evaluated over it by promtool's backfill for Prometheus and
// by vmalert's replay for VictoriaMetrics. Both give the generator's totals.
TEST_F(VictoriaE2E, ADayAndMoreReadThroughTheRecordingRulesGivesTheGeneratorsTotals) {
  RunResult made = RunProgram(
      {CGOV_FLEET_HISTORY, "--nodes", "3", "--gpus", "2", "--hours", "30", "--split-hours", "24",
       "--out", dir_ / "fleet.om", "--truth", dir_ / "truth.json"},
      {});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const json truth = json::parse(ReadFile(dir_ / "truth.json"));
  const int64_t start = truth["start"], end = truth["end"];
  for (const char* part : {"fleet.om.0", "fleet.om.1"}) {
    RunResult backfill = RunProgram({kPromtool, "tsdb", "create-blocks-from", "openmetrics",
                                     "--max-block-duration=24h", dir_ / part, dir_ / "tsdb"},
                                    {}, 120);
    ASSERT_EQ(backfill.exit_code, 0) << part << backfill.out << backfill.err;
  }
  // VictoriaMetrics takes the same samples from Prometheus' blocks.
  StartVictoria(/*scrape=*/false);
  ASSERT_FALSE(HasFatalFailure());
  // vmctl 1.79 draws a progress bar on its terminal whatever its flags, and stops when it has
  // none: script(1) (util-linux, in every Debian) lends it one.
  RunResult imported =
      RunProgram({"/usr/bin/script", "-qec",
                  std::string(kVmctl) + " prometheus --prom-snapshot=" + (dir_ / "tsdb") +
                      " --vm-addr=" + vm_url_ + " --vm-disable-progress-bar -s",
                  "/dev/null"},
                 {}, 180);
  ASSERT_EQ(imported.exit_code, 0) << imported.out << imported.err;
  WriteFile(dir_ / "hourly.yml", HourlyGroup());
  WriteFile(dir_ / "scrape.yml", "global:\n  scrape_interval: 1m\n");
  StartPrometheus();
  ASSERT_FALSE(HasFatalFailure());
  // The rules: promtool's backfill into new blocks (Prometheus restarted to load them)...
  RunResult rules = RunProgram({kPromtool, "tsdb", "create-blocks-from", "rules", "--start",
                                std::to_string(start), "--end", std::to_string(end), "--url",
                                prom_url_, "--output-dir", dir_ / "rules", dir_ / "hourly.yml"},
                               {}, 180);
  ASSERT_EQ(rules.exit_code, 0) << rules.out << rules.err;
  kill(prometheus_.pid, SIGTERM);
  WaitProgram(prometheus_, MonotonicS() - prometheus_.start_s + 20);
  RunResult moved =
      RunProgram({"/bin/sh", "-c", "mv " + (dir_ / "rules") + "/* " + (dir_ / "tsdb")}, {});
  ASSERT_EQ(moved.exit_code, 0) << moved.err;
  StartPrometheus();
  ASSERT_FALSE(HasFatalFailure());
  // ... and vmalert's replay, writing to VictoriaMetrics what it evaluated there. vmalert 1.79
  // replays a group at -datasource.queryStep (5m by default), not at the group's interval: an
  // hourly group replayed every 5 minutes would record each hour 12 times.
  RunResult replay = RunProgram(
      {kVmalert, "-rule=" + (dir_ / "hourly.yml"), "-datasource.url=" + vm_url_,
       "-remoteWrite.url=" + vm_url_, "-replay.timeFrom=" + At(static_cast<double>(start)),
       "-replay.timeTo=" + At(static_cast<double>(end)), "-replay.disableProgressBar",
       "-datasource.queryStep=1h", "-loggerLevel=ERROR"},
      {}, 180);
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  auto flushed = HttpGet(vm_url_ + "/internal/force_flush", {}, std::chrono::seconds(10));
  ASSERT_TRUE(flushed.ok() && flushed->status == 200);

  for (const auto& [name, url] : {std::pair{"prometheus", prom_url_}, {"victoria", vm_url_}}) {
    SCOPED_TRACE(name);
    const json r = Report({"--prometheus", url}, static_cast<double>(start - 60),
                          static_cast<double>(end), {"--recording-rules", "on", "--by", "project"});
    ASSERT_TRUE(r.contains("phases")) << r.dump();
    EXPECT_EQ(r["gpu_count"], 6);
    EXPECT_NE(r["notes"].dump().find("from the hourly recording rules"), std::string::npos)
        << r["notes"];
    for (const auto& [phase, seconds] : truth["phase_seconds"].items()) {
      if (phase == "unknown") continue;
      EXPECT_NEAR(r["phases"][phase]["gpu_seconds"].get<double>(), seconds.get<double>(), 0.5)
          << phase;
    }
    std::map<std::string, double> projects;
    for (const json& w : r["who"]) {
      for (const auto& [phase, v] : w["attributed_seconds"].items()) {
        projects[w["key"]] += v.get<double>();
      }
    }
    for (const auto& [project, seconds] : truth["project_seconds"].items()) {
      EXPECT_NEAR(projects[project], seconds.get<double>(), 0.5) << project;
    }
  }
}

}  // namespace
}  // namespace cgov::e2e
