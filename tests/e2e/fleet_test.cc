// End-to-end at fleet scale: three `cgov daemon --listen` on loopback, each with its own fake
// driver scenario, scraped every second by the real Prometheus (Debian's package, which .ci/run
// installs); `cgov report --prometheus` must agree with the three hosts' own databases, every
// Grafana panel query must run, and `promtool` must accept the rules and our exposition.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <regex>

#include <fmt/format.h>
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

constexpr double kScrapeS = 1.0;
constexpr double kTickS = 1.0;

std::string DeployFile(const std::string& name) { return DocsFile("../deploy/" + name); }

struct Host {
  std::string name, scenario, db;  // scenario: the fake driver's file
  int port = 0;
  Started process;
};

double Sum(const json& phases) {
  double s = 0;
  for (const auto& [k, v] : phases.items()) s += v.get<double>();
  return s;
}

class FleetE2E : public ::testing::Test {
 protected:
  void TearDown() override {
    for (Host& h : hosts_) {
      if (h.process.pid > 0) {
        kill(h.process.pid, SIGKILL);
        WaitProgram(h.process, 5);
      }
    }
    if (prometheus_.pid > 0) {
      kill(prometheus_.pid, SIGTERM);
      WaitProgram(prometheus_, 10);
    }
  }

  json Report(const std::vector<std::string>& source, const std::string& since,
              const std::string& until, const std::string& by = "user") {
    std::vector<std::string> argv = {CgovBinary(), "report",  "--format", "json", "--since",
                                     since,        "--until", until,      "--by", by};
    argv.insert(argv.end(), source.begin(), source.end());
    RunResult r = RunProgram(argv, {}, 60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return json::object();
    json report = json::parse(r.out);
    EXPECT_EQ(SchemaErrors("report.schema.json", report), "");
    return report;
  }

  // The real Prometheus scraping `targets` ("127.0.0.1:port", ...) every second with the rule
  // file loaded; its URL once ready.
  std::string StartPrometheus(const std::string& targets) {
    const int prom_port = FreePort();
    const std::string url = "http://127.0.0.1:" + std::to_string(prom_port);
    WriteFile(dir_ / "prometheus.yml",
              "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
              "rule_files: [\"" +
                  DeployFile("prometheus/cgov-rules.yml") +
                  "\"]\n"
                  "scrape_configs:\n  - job_name: cgov\n    static_configs:\n      - targets: [" +
                  targets + "]\n");
    prometheus_ = StartProgram(
        {kPrometheus, "--config.file=" + (dir_ / "prometheus.yml"),
         "--storage.tsdb.path=" + (dir_ / "tsdb"),
         "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
        {});
    EXPECT_TRUE(WaitFor(
        [&] {
          auto ready = HttpGet(url + "/-/ready", {}, std::chrono::seconds(1));
          return ready.ok() && ready->status == 200;
        },
        60))
        << "Prometheus did not become ready";
    return url;
  }
  // By how many seconds each host's database is ahead of what Prometheus scraped of it, per GPU:
  // what its daemon ticked after Prometheus' last scrape of it (one scrape interval on an idle
  // machine, more on a loaded one: a scrape can come late), and the one tick whose duration is
  // known only at the next tick. Measured, not assumed; a host never scraped is left out.
  // (Asked as of the stop: once a target is gone its series are stale. A scrape after that
  // moment only makes the real gap smaller than the one measured. The latest sample of the last
  // two minutes, not the sample at the stop: with 1 s scrapes the scrape timeout is 1 s, and
  // under ASan on a loaded machine the last scrape before the stop can fail, which marks the
  // series stale at that moment.)
  std::map<std::string, double> TrailsS(const PrometheusSource& prom, double stopping_s) {
    std::map<std::string, double> out;
    auto last_scrapes = prom.Query(
        "max_over_time(timestamp(cgov_ticks_total{job=\"cgov\"})[2m:250ms])", stopping_s);
    EXPECT_TRUE(last_scrapes.ok()) << last_scrapes.status().message();
    if (!last_scrapes.ok()) return out;
    for (const Host& h : hosts_) {
      for (const PromSeries& series : *last_scrapes) {
        if (series.Label("instance") != "127.0.0.1:" + std::to_string(h.port) ||
            series.points.empty()) {
          continue;
        }
        const double scraped_s = series.points.back().second;
        const double last_tick_s =
            static_cast<double>(QueryDb(h.db, "SELECT max(ts_ms) FROM tick")) / 1e3;
        out[h.name] = std::max(kScrapeS, last_tick_s - scraped_s) + kTickS;
      }
    }
    return out;
  }
  // `cgov daemon` for host `h` on its scenario (the shared-box fixture's /proc), listening on its
  // port, ticking every `interval`.
  static void StartDaemon(Host& h, const std::string& interval,
                          const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {CgovBinary(),  "daemon",
                                     "--db",        h.db,
                                     "--interval",  interval,
                                     "--nvml-lib",  FakeNvml("full"),
                                     "--host-root", Fixture("proc/shared-box"),
                                     "--hostname",  h.name,
                                     "--listen",    "127.0.0.1:" + std::to_string(h.port)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    h.process = StartProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", h.scenario}});
  }
  // Stops every host's daemon (its database final), lets Prometheus see them go, and returns the
  // end of the window to report on: the next whole second, as RFC 3339.
  std::string StopDaemons() {
    for (Host& h : hosts_) kill(h.process.pid, SIGTERM);
    for (Host& h : hosts_) {
      RunResult stopped = WaitProgram(h.process, 150);  // (counted from its start)
      h.process.pid = -1;
      EXPECT_EQ(stopped.exit_code, 0) << h.name << ": " << stopped.err;
    }
    sleep(2);
    return FormatRfc3339Utc(static_cast<int64_t>(std::ceil(NowS())) * 1'000'000'000);
  }
  static double NowS() {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count()) /
           1e3;
  }

  TempDir dir_;
  std::vector<Host> hosts_;
  Started prometheus_;
};

TEST_F(FleetE2E, RealPrometheusFleetReportMatchesTheHostsAndEveryDashboardQueryRuns) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required "
                                             "(scripts/install-deps installs it)";
  for (const char* node : {"a", "b", "c"}) {
    hosts_.push_back(Host{std::string("node-") + node,
                          Scenario(std::string("fleet_") + node),
                          dir_ / (std::string(node) + ".db"),
                          0,
                          {}});
  }
  // Prometheus first, so that each daemon's first scrape comes within a scrape interval of its
  // start: increase() then extrapolates the counters back to their zero.
  std::string targets;
  for (Host& h : hosts_) {
    h.port = FreePort();
    targets +=
        (targets.empty() ? "\"127.0.0.1:" : ", \"127.0.0.1:") + std::to_string(h.port) + "\"";
  }
  const std::string url = StartPrometheus(targets);
  auto prom = PrometheusSource::Open(url, std::chrono::seconds(10));
  ASSERT_TRUE(prom.ok());
  for (Host& h : hosts_) {
    StartDaemon(h, "1s", {"--price-per-gpu-hour", "2.00", "--instance-id", "i-0" + h.name});
  }
  const auto now_s = [] { return NowS(); };
  // Every target up and scraped a few times (bounded: 60 s).
  ASSERT_TRUE(WaitFor(
      [&] {
        auto up = prom->Query(
            "count(up{job=\"cgov\"} == 1) == 3 and count(count_over_time(cgov_ticks_total[1m]) >= "
            "8) == 3",
            now_s());
        return up.ok() && !up->empty();
      },
      60))
      << "Prometheus did not scrape all three daemons";

  // promtool accepts the exposition (the only lint findings are dcgm-exporter's own names).
  auto scraped = HttpGet("http://127.0.0.1:" + std::to_string(hosts_[2].port) + "/metrics", {},
                         std::chrono::seconds(5));
  ASSERT_TRUE(scraped.ok());
  // The same scrape asked with gzip, as Prometheus asks (it has been scraping so above): served
  // compressed, and the same exposition once gunzipped.
  const std::string metrics_url = "http://127.0.0.1:" + std::to_string(hosts_[2].port) + "/metrics";
  RunResult gzipped =
      RunProgram({"/bin/bash", "-c",
                  "set -o pipefail; curl -sS -D /dev/stderr -H 'Accept-Encoding: gzip' '" +
                      metrics_url + "' | gunzip"},
                 {}, 30);
  ASSERT_EQ(gzipped.exit_code, 0) << gzipped.err;
  EXPECT_NE(gzipped.err.find("Content-Encoding: gzip"), std::string::npos) << gzipped.err;
  EXPECT_NE(gzipped.err.find("Vary: Accept-Encoding"), std::string::npos) << gzipped.err;
  for (const std::string* body : {&scraped->body, &gzipped.out}) {
    ASSERT_NE(body->find("# TYPE cgov_build_info gauge"), std::string::npos);
    EXPECT_NE(body->find("process_resident_memory_bytes "), std::string::npos);
    RunResult lint = RunProgram({kPromtool, "check", "metrics"}, {}, 30, *body);
    EXPECT_NE(lint.exit_code, 1) << "promtool could not parse /metrics: " << lint.err;
    std::istringstream problems(lint.out + lint.err);
    for (std::string line; std::getline(problems, line);) {
      if (line.empty()) continue;
      const bool dcgm_names =
          line.find("label names should be written in 'snake_case'") != std::string::npos ||
          line.starts_with("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter");
      EXPECT_TRUE(dcgm_names) << "promtool: " << line;
    }
  }

  // Stop the daemons (their databases are final), let Prometheus see them go.
  const double stopping_s = now_s();
  for (Host& h : hosts_) kill(h.process.pid, SIGTERM);
  for (Host& h : hosts_) {
    RunResult stopped = WaitProgram(h.process, 15);
    h.process.pid = -1;
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  }
  sleep(2);
  const int64_t until_ms = static_cast<int64_t>(std::ceil(now_s())) * 1000;
  const std::string until = FormatRfc3339Utc(until_ms * 1'000'000);

  json fleet = Report({"--prometheus", url}, "10m", until);
  ASSERT_TRUE(fleet.contains("phases")) << fleet.dump();
  EXPECT_EQ(fleet["gpu_count"], 6);
  double held = 0, cost = 0;
  std::map<std::string, double> phase, by_user, by_user_cost;
  size_t gpus = 0;
  for (const Host& h : hosts_) {
    // Issue 11: the database keeps the daemon's price, so the report needs no price flag to
    // show the dollars /metrics shows (the catalog would price these H100s at $5.435).
    json one = Report({"--db", h.db}, "10m", until);
    ASSERT_TRUE(one.contains("phases")) << h.name;
    EXPECT_NE(one["cost"]["price_source"].dump().find("the daemon on " + h.name +
                                                      ": --price-per-gpu-hour $2.0000"),
              std::string::npos)
        << one["cost"].dump();
    EXPECT_DOUBLE_EQ(one["cost"]["price_per_gpu_hour_usd"].get<double>(), 2.0) << h.name;
    // The database knows the instance id the daemon was given: a CUR line for it is this host's
    // without a --billing-map.
    WriteFile(dir_ / (h.name + "-cur.csv"),
              "line_item_resource_id,line_item_usage_start_date,line_item_usage_end_date,"
              "line_item_unblended_cost\ni-0" +
                  h.name + "," + FormatRfc3339Utc((until_ms - 10 * 60'000) * 1'000'000) + "," +
                  until + ",0.50\n");
    json cur = Report({"--db", h.db, "--billing", dir_ / (h.name + "-cur.csv")}, "10m", until);
    EXPECT_EQ(cur["showback"]["matched_lines"], 1) << cur["showback"].dump(1);
    held += one["held_gpu_seconds"].get<double>();
    cost += one["cost"]["total_usd"].get<double>();
    gpus += one["gpu_count"].get<size_t>();
    for (const auto& [k, v] : one["phases"].items()) phase[k] += v["gpu_seconds"].get<double>();
    for (const json& w : one["who"]) {
      by_user[w["key"]] += Sum(w["attributed_seconds"]);
      by_user_cost[w["key"]] += w["cost_usd"].get<double>();
    }
  }
  EXPECT_EQ(gpus, 6u);
  // A report-time price still wins, and says so.
  json override = Report({"--db", hosts_[0].db, "--price-per-gpu-hour", "3.00"}, "10m", until);
  EXPECT_EQ(override["cost"]["price_source"], "--price-per-gpu-hour $3.0000")
      << override["cost"].dump();
  // The fleet trails each host's database by what was not scraped yet: what its daemon ticked
  // after Prometheus' last scrape of it (one scrape interval on an idle machine, more on a loaded
  // one: a scrape can come late), and the one tick whose duration is known only at the next tick,
  // for each of its GPUs. The gap is measured, not assumed.
  double tolerance = 0.5;
  const std::map<std::string, double> trails = TrailsS(*prom, stopping_s);
  for (const Host& h : hosts_) {
    ASSERT_TRUE(trails.count(h.name)) << h.name << ": never scraped";
    tolerance += trails.at(h.name) * static_cast<double>(QueryDb(h.db, "SELECT count(*) FROM gpu"));
  }
  EXPECT_NEAR(fleet["held_gpu_seconds"].get<double>(), held, tolerance);
  EXPECT_GT(held, 6 * 8.0) << "each GPU recorded at least 8 s";
  for (const auto& [k, v] : phase) {
    EXPECT_NEAR(fleet["phases"][k]["gpu_seconds"].get<double>(), v, tolerance) << k;
  }
  // Dollars: the same time at each daemon's $2/GPU-hour (reports round to the cent).
  EXPECT_NEAR(fleet["cost"]["total_usd"].get<double>(), cost, tolerance * 2.0 / 3600 + 0.03);
  EXPECT_NE(fleet["cost"]["price_source"].dump().find("the daemon on node-a"), std::string::npos)
      << fleet["cost"].dump();
  std::map<std::string, double> fleet_user;
  for (const json& w : fleet["who"]) fleet_user[w["key"]] = Sum(w["attributed_seconds"]);
  for (const auto& [user, seconds] : by_user) {
    EXPECT_NEAR(fleet_user[user], seconds, tolerance) << "user " << user;
  }
  for (const char* user : {"alice", "bob", "carol"}) EXPECT_GT(by_user[user], 5) << user;
  // Phases the scenarios put there: alice's 95 % H100 is compute-bound, bob's A100 idle-held.
  EXPECT_GT(phase["compute_bound"], 5);
  EXPECT_GT(phase["idle_held"], 5);
  EXPECT_GT(phase["truly_idle"], 5);

  // Findings name GPUs as the per-GPU table does (host/index), not by a position.
  int named = 0;
  for (const json& f : fleet["findings"]) {
    const json& evidence = f["evidence"];
    if (evidence["gpus"].empty()) continue;
    ASSERT_EQ(evidence["gpu_names"].size(), evidence["gpus"].size()) << f.dump();
    for (const json& name : evidence["gpu_names"]) {
      EXPECT_NE(name.get<std::string>().find("node-"), std::string::npos) << f.dump();
      ++named;
    }
  }
  EXPECT_GT(named, 0) << "the fleet has an idle-held GPU: at least one finding names GPUs";

  // --by host: the three hosts.
  json by_host = Report({"--prometheus", url}, "10m", until, "host");
  std::set<std::string> hosts;
  for (const json& w : by_host["who"]) hosts.insert(w["key"]);
  EXPECT_EQ(hosts, (std::set<std::string>{"node-a", "node-b", "node-c"}));
  // Budgets from the fleet's counters (issue 18): a project's spend this month is the fleet
  // report's own cost for it over the same span.
  WriteFile(dir_ / "budgets.toml", "[[budget]]\nproject = \"llm\"\nmonthly_usd = 100\n");
  json budgeted = Report({"--prometheus", url, "--budgets", dir_ / "budgets.toml"}, "10m", until);
  ASSERT_TRUE(budgeted.contains("budgets")) << budgeted.dump();
  const json& budget = budgeted["budgets"]["rows"][0];
  json month = Report({"--prometheus", url}, budget["period_start"], until, "project");
  double llm_cost = -1;
  for (const json& w : month["who"]) {
    if (w["key"] == "llm") llm_cost = w["cost_usd"].get<double>();
  }
  EXPECT_GT(llm_cost, 0) << month["who"].dump();
  EXPECT_DOUBLE_EQ(budget["spent_usd"].get<double>(), llm_cost) << budget.dump(1);
  // The fleet's invoice: one line per node over the window (and one for a node cgov never saw)
  // spread over each node's GPU time, reconciling to the cent.
  const std::string since_text = FormatRfc3339Utc((until_ms - 10 * 60'000) * 1'000'000);
  std::string bill = "host,start,end,cost_usd\n";
  // node-c's line names its instance id: Prometheus has it from cgov_build_info.
  for (const char* host : {"node-a", "node-b", "i-0node-c", "node-z"}) {
    bill += std::string(host) + "," + since_text + "," + until + ",1.00\n";
  }
  WriteFile(dir_ / "bill.csv", bill);
  json billed = Report({"--prometheus", url, "--billing", dir_ / "bill.csv"}, "10m", until);
  const json& showback = billed["showback"];
  EXPECT_EQ(showback["estimate"], false) << showback.dump(1);
  EXPECT_EQ(showback["matched_lines"], 3) << showback.dump(1);
  EXPECT_DOUBLE_EQ(showback["unmatched_usd"].get<double>(), 1.0) << "node-z";
  int64_t cents = std::llround(showback["idle_usd"].get<double>() * 100) + 100;
  for (const json& row : showback["rows"]) cents += std::llround(row["usd"].get<double>() * 100);
  EXPECT_EQ(cents, 400) << showback.dump(1);
  // The text report renders with per-host GPU names and says where sessions live.
  RunResult text = RunProgram(
      {CgovBinary(), "report", "--prometheus", url, "--since", "10m", "--until", until}, {}, 60);
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("node-c/2"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Not available from Prometheus"), std::string::npos);
  // The HTML page of the fleet: a chart per GPU named by host, who and the sessions' note.
  RunResult page = RunProgram({CgovBinary(), "report", "--prometheus", url, "--since", "10m",
                               "--until", until, "--format", "html"},
                              {}, 60);
  EXPECT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(page.out.find("<figure class=\"gpu-chart\" data-gpu=\"node-c/2\">"), std::string::npos)
      << page.out.substr(0, 2000);
  EXPECT_NE(page.out.find("<section id=\"who\">"), std::string::npos);
  EXPECT_NE(page.out.find("no per-session data (Prometheus)"), std::string::npos);

  // Every dashboard query runs against the real engine, with Grafana's variables filled in.
  json dashboard = json::parse(ReadFile(DeployFile("grafana/cgov-dashboard.json")));
  int queries = 0;
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex("\\$__rate_interval"), "4s");
      expr = std::regex_replace(expr, std::regex("\\$__range"), "1m");
      // Every variable at "All", as Grafana sends it (allValue ".*").
      expr = std::regex_replace(expr, std::regex("\\$(host|namespace|project)\\b"), ".*");
      // The grid intensity a user types into its textbox (g CO2e a kWh).
      expr = std::regex_replace(expr, std::regex("\\$grid_g_per_kwh\\b"), "400");
      EXPECT_EQ(expr.find('$'), std::string::npos) << "a variable left: " << expr;
      auto result = prom->Query(expr, static_cast<double>(until_ms) / 1e3 - 3);
      EXPECT_TRUE(result.ok()) << panel["title"] << ": " << result.status().message();
      ++queries;
    }
  }
  EXPECT_GE(queries, 10);
  // Issue 17: a window before the data is "not in this window", not "no cgov metrics".
  const std::string hour_before = FormatRfc3339Utc((until_ms - 3'600'000) * 1'000'000);
  RunResult early = RunProgram(
      {CgovBinary(), "report", "--prometheus", url, "--since", "1h", "--until", hour_before}, {},
      60);
  EXPECT_EQ(early.exit_code, 1);
  EXPECT_NE(early.err.find("not in this window"), std::string::npos) << early.err;
  // The rule files load in the real Prometheus (it would not be ready otherwise) and pass
  // their unit tests.
  for (const char* tests :
       {"prometheus/cgov-rules.test.yml", "prometheus/cgov-hourly-rules.test.yml",
        "prometheus/cgov-daily-rules.test.yml"}) {
    RunResult rules = RunProgram({kPromtool, "test", "rules", DeployFile(tests)}, {}, 60);
    EXPECT_EQ(rules.exit_code, 0) << tests << ": " << rules.out << rules.err;
  }
}

// Issue 57, item 7: one box read two ways. Its daemon's history database and the Prometheus that
// scraped its /metrics give the same findings, naming the same GPUs: the fleet report reads the
// utilization patterns and swings back, not only the phases (it read a bursty, throttled GPU
// as "steady low" before). The fleet trails the database by the ticks not scraped yet: the
// scenario's figures sit well away from the findings' thresholds.
TEST_F(FleetE2E, OneBoxGivesTheSameFindingsFromItsDatabaseAndFromPrometheus) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  hosts_.push_back(Host{"box", Scenario("bursty_box"), dir_ / "box.db", FreePort(), {}});
  Host& h = hosts_[0];
  const std::string url = StartPrometheus("\"127.0.0.1:" + std::to_string(h.port) + "\"");
  auto prom = PrometheusSource::Open(url, std::chrono::seconds(10));
  ASSERT_TRUE(prom.ok());
  StartDaemon(h, "500ms", {"--price-per-gpu-hour", "2.00"});
  // Six of the bursty GPU's 2 s cycles (four ticks each), scraped (bounded: 90 s).
  ASSERT_TRUE(WaitFor(
      [&] {
        auto up = prom->Query("cgov_ticks_total >= 24", NowS());
        return up.ok() && !up->empty();
      },
      90))
      << "Prometheus did not scrape the daemon";
  const std::string until = StopDaemons();
  // Each finding's id and the GPUs it names (the fleet names them host/index).
  auto findings = [](const json& report) {
    std::map<std::string, std::vector<std::string>> out;
    for (const json& f : report["findings"]) {
      std::vector<std::string>& gpus = out[f["id"]];
      for (const json& name : f["evidence"]["gpu_names"]) {
        std::string n = name;
        if (n.starts_with("box/")) n = n.substr(4);
        gpus.push_back(n);
      }
      std::sort(gpus.begin(), gpus.end());
    }
    return out;
  };
  const json db_report = Report({"--db", h.db}, "10m", until);
  const json fleet_report = Report({"--prometheus", url}, "10m", until);
  const auto from_db = findings(db_report);
  const auto from_prometheus = findings(fleet_report);
  // The savings too: each GPU's levers, and the combined share of the spend within the scrape
  // bound (the fleet trails by a tick or three of 24).
  auto levers = [](const json& report) {
    std::vector<std::string> out;
    for (const json& g : report["savings"]["gpus"]) {
      std::string line = std::to_string(g["gpu"].get<int>()) + ":";
      for (const json& l : g["levers"]) line += " " + l["finding"].get<std::string>();
      out.push_back(line);
    }
    return out;
  };
  EXPECT_EQ(levers(fleet_report), levers(db_report));
  EXPECT_NEAR(fleet_report["savings"]["combined_fraction"].get<double>(),
              db_report["savings"]["combined_fraction"].get<double>(), 0.03);
  auto text = [](const std::map<std::string, std::vector<std::string>>& f) {
    std::string out;
    for (const auto& [id, gpus] : f) {
      out += id + " [";
      for (const std::string& g : gpus) out += g + " ";
      out += "]; ";
    }
    return out;
  };
  EXPECT_EQ(text(from_prometheus), text(from_db));
  using Gpus = std::vector<std::string>;
  EXPECT_EQ(
      from_db.count("input_pipeline_starvation") ? from_db.at("input_pipeline_starvation") : Gpus{},
      Gpus{"0"});
  EXPECT_EQ(from_db.count("thermal_throttling") ? from_db.at("thermal_throttling") : Gpus{},
            Gpus{"0"});
  EXPECT_EQ(
      from_db.count("steady_underutilization") ? from_db.at("steady_underutilization") : Gpus{},
      Gpus{"3"});
  // Issue 61: the right-size plan from the database's ticks and from Prometheus' series (the
  // GPUs' memory used, the highest of each step; compute the step's mean): the same packing.
  // alice's 60 GB stays on GPU 0, carol's 30 GB on GPU 3 takes bob's idle 20 GB; GPUs 1, 2 freed.
  const json db_plan = Report({"--db", h.db, "--plan"}, "10m", until);
  const json fleet_plan = Report({"--prometheus", url, "--plan"}, "10m", until);
  for (const json* r : {&db_plan, &fleet_plan}) {
    ASSERT_TRUE(r->contains("plan")) << r->dump().substr(0, 500);
    const json& p = (*r)["plan"];
    EXPECT_EQ(p["gpus_now"], 4) << p.dump(1);
    EXPECT_EQ(p["gpus_planned"], 2) << p.dump(1);
    ASSERT_EQ(p["groups"].size(), 1u);
    std::vector<std::string> freed;
    for (const json& f : p["groups"][0]["freed"]) {
      std::string n = f;
      freed.push_back(n.starts_with("box/") ? n.substr(4) : n);
    }
    EXPECT_EQ(freed, (std::vector<std::string>{"1", "2"})) << p.dump(1);
    EXPECT_GT(Cents(p["consolidate_usd"]), 0);
  }
  EXPECT_EQ(fleet_plan["plan"]["workloads"].size(), 0u) << "no per-process memory in Prometheus";
  EXPECT_GT(db_plan["plan"]["workloads"].size(), 0u);
}

// A generated box for the fake driver (issue 57's generated boxes, through the real binaries):
// 1 to 4 GPUs of mixed models (so mixed catalog prices), each busy, idle-held, bursty, steady at a
// random utilization or unused, held by the shared-box fixture's users.
json GeneratedScenario(std::mt19937_64& rng, int host) {
  struct Model {
    const char* name;
    int memory_mib;
  };
  constexpr Model kModels[] = {{"NVIDIA H100 80GB HBM3", 81559},
                               {"NVIDIA L4", 23034},
                               {"NVIDIA A100-SXM4-80GB", 81920},
                               {"Tesla T4", 15360}};
  constexpr int kPids[] = {41000, 42000, 43000};  // alice, bob, carol
  json gpus = json::array();
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < n; ++i) {
    const Model& m = kModels[rng() % 4];
    json g = {{"name", m.name},
              {"memory_total_mib", m.memory_mib},
              {"uuid", fmt::format("GPU-{:04d}{:04d}-0000-4000-8000-000000000000", host, i)},
              {"pci_bus_id", fmt::format("00000000:{:02X}:00.0", 0x18 + i)}};
    auto point = [](int t, int util) {
      return json{{"t", t},
                  {"util_gpu", util},
                  {"util_mem", util / 2},
                  {"power_w", 60 + 3 * util},
                  {"temp_c", 30 + util / 3}};
    };
    const int kind = static_cast<int>(rng() % 5);
    const int util = 10 + static_cast<int>(rng() % 81);
    switch (kind) {
      case 0:
        g["timeline"] = json::array({point(0, 95)});
        break;  // busy
      case 1:
        g["timeline"] = json::array({point(0, 0)});
        break;  // idle-held
      case 2:   // bursty
        g["period_s"] = 4 + static_cast<int>(rng() % 5);
        g["timeline"] = json::array({point(0, 95), point(2, 5)});
        break;
      case 3:
        g["timeline"] = json::array({point(0, util)});
        break;  // steady
      default:
        g["timeline"] = json::array({point(0, 0)});
        break;  // unused
    }
    if (kind != 4) {
      g["processes"] =
          json::array({json{{"pid", kPids[rng() % 3]},
                            {"type", "compute"},
                            {"used_mib", 500 + static_cast<int>(rng() % (m.memory_mib / 2))}}});
    }
    gpus.push_back(g);
  }
  return {{"comment", "generated"}, {"driver_version", "550.54.15"}, {"gpus", gpus}};
}

// Issue 57: generated boxes through the real binaries. Four daemons, each on a generated box and
// priced by the catalog (mixed prices on one host), scraped by the real Prometheus, and a `cgov
// run` on each box (its summary adds up too). Every report
// (each host's database, the fleet's Prometheus) adds up to the cent: GPUs, phases and Who with
// the unattributed part each sum to the total; the savings never exceed the wasted dollars; and
// each GPU's time and dollars from Prometheus are its database's within the scrape bound.
TEST_F(FleetE2E, GeneratedBoxesAddUpAndAgreeFromTheirDatabasesAndFromPrometheus) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  uint64_t seed = 20261128;
  if (const char* s = std::getenv("CGOV_LEDGER_SEED")) seed = std::strtoull(s, nullptr, 10);
  SCOPED_TRACE("seed " + std::to_string(seed) + " (CGOV_LEDGER_SEED)");
  std::mt19937_64 rng(seed);
  std::string targets;
  for (int i = 0; i < 4; ++i) {
    const std::string name = fmt::format("gen-{}", i);
    WriteFile(dir_ / (name + ".json"), GeneratedScenario(rng, i).dump(1));
    hosts_.push_back(Host{name, dir_ / (name + ".json"), dir_ / (name + ".db"), FreePort(), {}});
    targets += fmt::format("{}\"127.0.0.1:{}\"", targets.empty() ? "" : ", ", hosts_.back().port);
  }
  const std::string url = StartPrometheus(targets);
  auto prom = PrometheusSource::Open(url, std::chrono::seconds(10));
  ASSERT_TRUE(prom.ok());
  for (Host& h : hosts_) StartDaemon(h, "1s", {});  // priced by the catalog
  // And `cgov run` of a 3 s job on each box, beside its daemon.
  std::vector<Started> runs;
  for (const Host& h : hosts_) {
    runs.push_back(StartProgram(
        {CgovBinary(), "run", "--nvml-lib", FakeNvml("full"), "--out", dir_ / (h.name + "-run"),
         "--interval", "500ms", "--quiet", "--", "/bin/sleep", "3"},
        {{"CGOV_FAKE_NVML_SCENARIO", h.scenario}}));
  }
  ASSERT_TRUE(WaitFor(
      [&] {
        auto up = prom->Query("count(count_over_time(cgov_ticks_total[1m]) >= 12) == 4", NowS());
        return up.ok() && !up->empty();
      },
      90))
      << "Prometheus did not scrape the four daemons";
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(hosts_[i].name + "'s cgov run");
    RunResult run = WaitProgram(runs[i], 150);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json summary = json::parse(ReadFile(dir_ / (hosts_[i].name + "-run/summary.json")));
    EXPECT_EQ(SchemaErrors("summary.schema.json", summary), "");
    ASSERT_TRUE(summary["cost"]["priced"].get<bool>()) << summary["gpu_data"].dump() << run.err;
    int64_t phases = 0, waste = 0;
    for (const auto& [phase, p] : summary["phases"].items()) {
      phases += std::llround(p["cost_usd"].get<double>() * 100);
      waste += std::llround(p["waste_usd"].get<double>() * 100);
    }
    EXPECT_EQ(phases, std::llround(summary["cost"]["total_usd"].get<double>() * 100));
    EXPECT_EQ(waste, std::llround(summary["cost"]["waste_usd"].get<double>() * 100));
    const json& savings = summary["savings"];
    EXPECT_LE(savings["utilization_fraction"].get<double>() *
                  summary["cost"]["total_micro_usd"].get<double>() / 1e6,
              summary["cost"]["waste_usd"].get<double>() + 0.005);
    if (savings["rate_fraction"].get<double>() == 0) {
      EXPECT_LE(savings["combined_usd"].get<double>(),
                summary["cost"]["waste_usd"].get<double>() + 1e-9);
    }
  }
  const double stopping_s = NowS();
  const std::string until = StopDaemons();
  auto cents = [](const json& usd) { return std::llround(usd.get<double>() * 100); };
  // The invariants every report holds, whatever its source.
  auto adds_up = [&](const json& r, const std::string& what) {
    SCOPED_TRACE(what);
    ASSERT_TRUE(r["cost"]["priced"].get<bool>()) << r["cost"].dump();
    const int64_t total = cents(r["cost"]["total_usd"]);
    int64_t gpus = 0, phases = 0, who = cents(r["unattributed"]["cost_usd"]);
    double gpu_seconds = 0, phase_seconds = 0;
    for (const json& g : r["gpus"]) {
      gpus += cents(g["cost_usd"]);
      for (const auto& [phase, seconds] : g["phase_seconds"].items()) {
        gpu_seconds += seconds.get<double>();
      }
    }
    for (const auto& [phase, p] : r["phases"].items()) {
      phases += cents(p["cost_usd"]);
      phase_seconds += p["gpu_seconds"].get<double>();
    }
    for (const json& w : r["who"]) who += cents(w["cost_usd"]);
    // Issue 62: the energy adds up the same way (joules to the mJ): the GPUs', and Who's with
    // the unattributed part.
    const double joules = r["energy"]["joules"].get<double>();
    double gpu_joules = 0, who_joules = r["unattributed"]["energy_joules"].get<double>();
    for (const json& g : r["gpus"]) gpu_joules += g["energy_joules"].get<double>();
    for (const json& w : r["who"]) who_joules += w["energy_joules"].get<double>();
    EXPECT_GT(joules, 0);
    EXPECT_NEAR(gpu_joules, joules, 1e-3 * (1 + r["gpus"].size()));
    EXPECT_NEAR(who_joules, joules, 1e-3 * (2 + r["who"].size()));
    EXPECT_EQ(gpus, total) << "the GPUs' cents";
    EXPECT_EQ(phases, total) << "the phases' cents";
    EXPECT_EQ(who, total) << "Who's cents with the unattributed part";
    EXPECT_NEAR(gpu_seconds, phase_seconds, 1e-6);
    EXPECT_NEAR(phase_seconds + r["unknown_gpu_seconds"].get<double>(),
                r["held_gpu_seconds"].get<double>(), 1e-6);
    // Savings within the wasted dollars: the utilization levers' share of the exact spend, and
    // the shown figures when no rate lever (spot) adds its own.
    const json& savings = r["savings"];
    const double waste = r["cost"]["waste_usd"].get<double>();
    EXPECT_LE(savings["utilization_fraction"].get<double>() *
                  r["cost"]["total_micro_usd"].get<double>() / 1e6,
              waste + 0.005);
    if (savings["rate_fraction"].get<double>() == 0) {
      EXPECT_LE(savings["combined_usd"].get<double>(), waste + 1e-9)
          << "$" << savings["combined_usd"] << " of savings beside $" << waste << " of waste";
    }
  };
  // Each GPU (host/index) of a report: its seconds and its exact dollars at its price.
  struct GpuFigures {
    double seconds = 0, usd = 0, joules = 0;
  };
  auto per_gpu = [](const json& r, const std::string& host) {
    std::map<std::string, GpuFigures> out;
    for (const json& g : r["gpus"]) {
      GpuFigures& f = out[fmt::format("{}/{}", host.empty() ? g["host"].get<std::string>() : host,
                                      g["index"].get<int>())];
      for (const auto& [phase, seconds] : g["phase_seconds"].items())
        f.seconds += seconds.get<double>();
      f.usd = g["cost_usd"].get<double>();
      f.joules = g["energy_joules"].get<double>();
    }
    return out;
  };
  // The scenarios draw at most 60 + 3 x 95 W: what a trailing second can differ by.
  constexpr double kMaxWatts = 345;
  const std::map<std::string, double> trails = TrailsS(*prom, stopping_s);
  const json fleet = Report({"--prometheus", url}, "10m", until);
  adds_up(fleet, "the fleet from Prometheus");
  const std::map<std::string, GpuFigures> fleet_gpus = per_gpu(fleet, "");
  size_t gpus = 0;
  std::map<std::string, double> user_usd;     // Who's dollars, summed over the hosts' databases
  std::map<std::string, double> user_joules;  // and their energy
  double usd_bound = 0.0101, joules_bound = 0.01, power_known_s = 0, trails_s = 0;
  for (const Host& h : hosts_) {
    ASSERT_TRUE(trails.count(h.name)) << h.name << ": never scraped";
    const json one = Report({"--db", h.db}, "10m", until);
    adds_up(one, h.name + "'s database");
    for (const json& w : one["who"]) {
      user_usd[w["key"]] += w["cost_usd"].get<double>();
      user_joules[w["key"]] += w["energy_joules"].get<double>();
    }
    usd_bound += 0.0101 + trails.at(h.name) * 10 / 3600 * one["gpus"].size();
    joules_bound += trails.at(h.name) * kMaxWatts * one["gpus"].size();
    power_known_s += one["energy"]["power_known_gpu_seconds"].get<double>();
    trails_s += trails.at(h.name) * one["gpus"].size();
    for (const auto& [name, f] : per_gpu(one, h.name)) {
      ++gpus;
      ASSERT_TRUE(fleet_gpus.count(name)) << name;
      EXPECT_NEAR(fleet_gpus.at(name).seconds, f.seconds, trails.at(h.name)) << name;
      // (The catalog's prices here are under $10 a GPU-hour; each side rounds to the cent.)
      EXPECT_NEAR(fleet_gpus.at(name).usd, f.usd, trails.at(h.name) * 10 / 3600 + 0.0101) << name;
      EXPECT_GT(f.seconds, 8) << name;
      // Issue 62: its energy from Prometheus is its database's (counter-corrected in both).
      EXPECT_NEAR(fleet_gpus.at(name).joules, f.joules, trails.at(h.name) * kMaxWatts + 0.01)
          << name;
      EXPECT_GT(f.joules, 8 * 60) << name << ": at least 60 W for 8 s";
    }
  }
  EXPECT_EQ(gpus, fleet_gpus.size());
  EXPECT_NEAR(fleet["energy"]["power_known_gpu_seconds"].get<double>(), power_known_s,
              trails_s + 1e-3);
  for (const json& w : fleet["who"]) {
    EXPECT_NEAR(w["energy_joules"].get<double>(), user_joules[w["key"]], joules_bound) << w["key"];
  }
  // Each holder's dollars: a host's GPUs at different prices are each priced as their time was
  // credited (the fleet once priced all of a host's holders at its first GPU's price).
  for (const json& w : fleet["who"]) {
    EXPECT_NEAR(w["cost_usd"].get<double>(), user_usd[w["key"]], usd_bound) << w["key"];
  }
}

TEST_F(FleetE2E, ClearErrorsForNoServerNotPrometheusAndNoData) {
  // Nothing listens on this port.
  const int closed = FreePort();
  RunResult r = RunProgram(
      {CgovBinary(), "report", "--prometheus", "http://127.0.0.1:" + std::to_string(closed)}, {},
      30);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot reach the server"), std::string::npos) << r.err;
  // A cgov daemon is an HTTP server but not a Prometheus API.
  Host h{"node-x", "fleet_b", dir_ / "x.db", 0, {}};
  h.port = FreePort();
  h.process = StartProgram({CgovBinary(), "daemon", "--db", h.db, "--interval", "1s", "--nvml-lib",
                            FakeNvml("full"), "--listen", "127.0.0.1:" + std::to_string(h.port)},
                           {{"CGOV_FAKE_NVML_SCENARIO", Scenario("fleet_b")}});
  hosts_.push_back(std::move(h));  // its process is the fixture's to stop now
  ASSERT_TRUE(WaitFor(
      [&] {
        return HttpGet("http://127.0.0.1:" + std::to_string(h.port) + "/health", {},
                       std::chrono::seconds(1))
            .ok();
      },
      15));
  r = RunProgram(
      {CgovBinary(), "report", "--prometheus", "http://127.0.0.1:" + std::to_string(h.port)}, {},
      30);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("is not a Prometheus query API"), std::string::npos) << r.err;
  // A real Prometheus with no cgov metrics.
  const int prom_port = FreePort();
  WriteFile(dir_ / "empty.yml", "global:\n  scrape_interval: 1s\nscrape_configs: []\n");
  prometheus_ = StartProgram(
      {kPrometheus, "--config.file=" + (dir_ / "empty.yml"),
       "--storage.tsdb.path=" + (dir_ / "tsdb-empty"),
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
      {});
  const std::string url = "http://127.0.0.1:" + std::to_string(prom_port);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto ready = HttpGet(url + "/-/ready", {}, std::chrono::seconds(1));
        return ready.ok() && ready->status == 200;
      },
      30));
  r = RunProgram({CgovBinary(), "report", "--prometheus", url, "--since", "1h"}, {}, 30);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no cgov metrics"), std::string::npos) << r.err;
  // Usage errors: both sources, or neither.
  r = RunProgram({CgovBinary(), "report", "--prometheus", url, "--db", dir_ / "x.db"}, {}, 30);
  EXPECT_EQ(r.exit_code, 2);
  r = RunProgram({CgovBinary(), "report", "--prometheus", "ftp://x"}, {}, 30);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("http://"), std::string::npos) << r.err;
  // --prometheus-parallel: with --prometheus only, 1 to 32.
  r = RunProgram({CgovBinary(), "report", "--db", dir_ / "x.db", "--prometheus-parallel", "2"}, {},
                 30);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--prometheus-parallel goes with --prometheus"), std::string::npos) << r.err;
  for (const char* bad : {"0", "33", "-1"}) {
    r = RunProgram({CgovBinary(), "report", "--prometheus", url, "--prometheus-parallel", bad}, {},
                   30);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("expected 1 to 32"), std::string::npos) << bad << ": " << r.err;
  }
}

TEST_F(FleetE2E, DaemonServesHttpsWithBasicAuthAndRefusesBadListenFlags) {
  // A throwaway certificate for 127.0.0.1, made here (openssl: scripts/install-deps).
  const std::string cert = dir_ / "cert.pem", key = dir_ / "key.pem";
  RunResult made = RunProgram(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out",
       cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"},
      {}, 60);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  WriteFile(dir_ / "auth", "prometheus:correct horse\n");
  ASSERT_EQ(chmod((dir_ / "auth").c_str(), 0600), 0);
  Host h{"node-tls", "fleet_b", dir_ / "tls.db", FreePort(), {}};
  const std::string port = std::to_string(h.port);
  h.process = StartProgram({CgovBinary(), "daemon", "--db", h.db, "--interval", "1s", "--nvml-lib",
                            FakeNvml("full"), "--listen", "127.0.0.1:" + port, "--tls-cert", cert,
                            "--tls-key", key, "--basic-auth-file", dir_ / "auth"},
                           {{"CGOV_FAKE_NVML_SCENARIO", Scenario("fleet_b")}});
  hosts_.push_back(std::move(h));  // its process is the fixture's to stop now
  const std::string url = "https://127.0.0.1:" + port + "/metrics";
  auto curl = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {"/usr/bin/curl",       "-s",       "-o", "/dev/stdout", "-w",
                                     "\nHTTP %{http_code}", "--cacert", cert, "--max-time",  "5"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(url);
    return RunProgram(argv, {}, 10).out;
  };
  std::string out;
  RunResult r0;
  ASSERT_TRUE(WaitFor(
      [&] {
        out = curl({"-u", "prometheus:correct horse"});
        return out.find("cgov_gpu_utilization_ratio") != std::string::npos;
      },
      20))
      << out;
  EXPECT_NE(out.find("HTTP 200"), std::string::npos);
  EXPECT_NE(curl({"-u", "prometheus:wrong"}).find("HTTP 401"), std::string::npos);
  EXPECT_NE(curl({}).find("HTTP 401"), std::string::npos);
  // Plain HTTP on the TLS port gets nothing served.
  auto plain = HttpGet("http://127.0.0.1:" + port + "/metrics", {}, std::chrono::seconds(2));
  EXPECT_TRUE(!plain.ok() || plain->body.find("cgov_") == std::string::npos);

  // The same served from a Prometheus web config: a bcrypt user (the hash of "test" in
  // Prometheus' basic-auth guide) and the certificate and key named relative to the file.
  WriteFile(dir_ / "web.yml",
            "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
            "basic_auth_users:\n  prometheus: $2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBC"
            "fIB51VRjgBUyv6kdnyTlgWj81Ay\n");
  Host w{"node-web", "fleet_b", dir_ / "web.db", FreePort(), {}};
  const std::string web_port = std::to_string(w.port);
  w.process = StartProgram(
      {CgovBinary(), "daemon", "--db", w.db, "--interval", "1s", "--nvml-lib", FakeNvml("full"),
       "--listen", "127.0.0.1:" + web_port, "--web-config", dir_ / "web.yml"},
      {{"CGOV_FAKE_NVML_SCENARIO", Scenario("fleet_b")}});
  hosts_.push_back(std::move(w));
  auto web = [&](std::vector<std::string> extra, const std::string& path) {
    std::vector<std::string> argv = {"/usr/bin/curl",       "-s",       "-o", "/dev/stdout", "-w",
                                     "\nHTTP %{http_code}", "--cacert", cert, "--max-time",  "5"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back("https://127.0.0.1:" + web_port + path);
    // A check that needs bcrypt while its budget is spent is 429, and the client tries again
    // (docs/security.md): on a loaded machine the first check's wall time can spend it.
    std::string answer;
    WaitFor(
        [&] {
          answer = RunProgram(argv, {}, 10).out;
          return answer.find("HTTP 429") == std::string::npos;
        },
        20);
    return answer;
  };
  ASSERT_TRUE(WaitFor(
      [&] {
        out = web({"-u", "prometheus:test"}, "/metrics");
        return out.find("cgov_gpu_utilization_ratio") != std::string::npos;
      },
      20))
      << out;
  for (const auto& [user, code] : {std::pair<std::string, std::string>{"prometheus:test", "200"},
                                   {"prometheus:Test", "401"},
                                   {"", "401"}}) {
    const std::string answer =
        web(user.empty() ? std::vector<std::string>{} : std::vector<std::string>{"-u", user},
            "/metrics");
    EXPECT_NE(answer.find("HTTP " + code), std::string::npos)
        << user << ": " << answer.substr(answer.size() - std::min<size_t>(answer.size(), 200));
  }
  const std::string probe = web({}, "/health");
  EXPECT_NE(probe.find("HTTP 200"), std::string::npos) << "probes send no credentials";
  EXPECT_EQ(probe.find("cgov_"), std::string::npos) << probe;

  // Flags that make no sense are usage errors, before anything starts.
  r0 = RunProgram({CgovBinary(), "daemon", "--db", dir_ / "y.db", "--listen", "127.0.0.1:0",
                   "--web-config", dir_ / "web.yml", "--basic-auth-file", dir_ / "auth"},
                  {}, 10);
  EXPECT_EQ(r0.exit_code, 2);
  EXPECT_NE(r0.err.find("give the users in one of them"), std::string::npos) << r0.err;
  WriteFile(dir_ / "bad-web.yml", "basic_auth_users:\n  prometheus: correct horse\n");
  r0 = RunProgram({CgovBinary(), "daemon", "--db", dir_ / "y.db", "--listen", "127.0.0.1:0",
                   "--web-config", dir_ / "bad-web.yml"},
                  {}, 10);
  EXPECT_EQ(r0.exit_code, 2);
  EXPECT_NE(r0.err.find("bad-web.yml:2: basic_auth_users.prometheus: not a bcrypt hash"),
            std::string::npos)
      << r0.err;
  EXPECT_EQ(r0.err.find("correct horse"), std::string::npos) << "the secret is not echoed";
  RunResult r = RunProgram(
      {CgovBinary(), "daemon", "--db", dir_ / "y.db", "--tls-cert", cert, "--tls-key", key}, {},
      10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("need --listen"), std::string::npos) << r.err;
  r = RunProgram({CgovBinary(), "daemon", "--db", dir_ / "y.db", "--listen", "gpu-node:9400"}, {},
                 10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("numeric"), std::string::npos) << r.err;
  WriteFile(dir_ / "bad-auth", "no colon here\n");
  ASSERT_EQ(chmod((dir_ / "bad-auth").c_str(), 0600), 0);
  r = RunProgram({CgovBinary(), "daemon", "--db", dir_ / "y.db", "--listen", "127.0.0.1:0",
                  "--basic-auth-file", dir_ / "bad-auth"},
                 {}, 10);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("line 1: expected USER:PASSWORD"), std::string::npos) << r.err;
  // A busy port is a clear error at start (exit 1), not a silent daemon without /metrics.
  r = RunProgram({CgovBinary(), "daemon", "--db", dir_ / "y.db", "--interval", "1s", "--nvml-lib",
                  FakeNvml("full"), "--listen", "127.0.0.1:" + port},
                 {{"CGOV_FAKE_NVML_SCENARIO", Scenario("fleet_b")}}, 20);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Address already in use"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cgov::e2e
