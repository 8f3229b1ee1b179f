// Issue 12, "live beside the others": on a GPU Operator node dcgm-exporter serves its DCGM_FI_*
// series too. The real Prometheus scrapes a cgov daemon (authenticating against a bcrypt hash
// from --web-config) and a dcgm-exporter exposition of the same GPUs side by side; then every
// Grafana panel, every rule in deploy/ and the fleet report are evaluated, dcgm-exporter's series
// are deleted from the TSDB (admin API), and everything is evaluated again at the same instants:
// the answers must be identical, i.e. each is the answer cgov alone gives.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/time_format.h"
#include "e2e_helpers.h"
#include "export/http_server.h"
#include "os/http_get.h"
#include "process_runner.h"
#include "store/prometheus_source.h"

namespace cgov::e2e {
namespace {

using json = nlohmann::json;

// The hash of "test" in Prometheus' basic-auth guide (made by another bcrypt implementation).
constexpr char kHashOfTest[] = "$2b$12$hNf2lSsxfm0.i4a.1kVpSOVyBCfIB51VRjgBUyv6kdnyTlgWj81Ay";

std::string DeployFile(const std::string& name) { return DocsFile("../deploy/" + name); }

// A query's answer as text, series in label order, so two answers compare exactly.
std::string Canonical(const std::vector<PromSeries>& result) {
  std::vector<std::string> rows;
  for (const PromSeries& s : result) {
    std::string row;
    for (const auto& [k, v] : s.Labels()) row += fmt::format("{}={},", k, v);
    for (const auto& [t, v] : s.points) row += fmt::format(" {}@{:.3f}", v, t);
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const std::string& r : rows) out += r + "\n";
  return out.empty() ? "(empty)" : out;
}

// Every `expr:` of a rule file (on one line, or folded `>-` over the lines indented below it),
// checked against the number of rules.
std::vector<std::string> RuleExpressions(const std::string& path) {
  const std::string text = ReadFile(path);
  std::vector<std::string> out;
  const std::regex expr(R"(^(\s+)expr:\s*(.+)$)");
  std::istringstream lines(text);
  int rules = 0;
  size_t folded_indent = 0;  // > 0 while reading a folded expression's lines
  for (std::string line; std::getline(lines, line);) {
    const size_t indent = line.find_first_not_of(' ');
    if (folded_indent > 0 && indent != std::string::npos && indent > folded_indent) {
      out.back() += (out.back().empty() ? "" : " ") + line.substr(indent);
      continue;
    }
    folded_indent = 0;
    std::smatch m;
    if (std::regex_match(line, m, expr)) {
      if (m[2] == ">-") {
        folded_indent = m[1].length();
        out.emplace_back();
      } else {
        out.push_back(m[2]);
      }
    }
    if (line.find("- record:") != std::string::npos || line.find("- alert:") != std::string::npos) {
      ++rules;
    }
  }
  EXPECT_EQ(static_cast<int>(out.size()), rules) << "a rule whose expr spans lines: read it too";
  return out;
}

TEST(CoexistenceE2E, BesideDcgmExporterEveryPanelRuleAndTheFleetReportGiveCgovsAnswer) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  TempDir dir;
  // dcgm-exporter, as its /metrics reads on this node (the fixture's header says what it is).
  const std::string exposition = ReadFile(Fixture("dcgm-exporter/node-a.prom"));
  HttpServerOptions dcgm_options;
  dcgm_options.address = *ParseListenAddress("127.0.0.1:0");
  // OpenCost on the same cluster: its node_gpu_hourly_cost, one series per node with its labels
  // (cgov serves no series of that name), served on /opencost of the same test server.
  const std::string opencost =
      "# HELP node_gpu_hourly_cost node_gpu_hourly_cost hourly cost for each gpu on this node\n"
      "# TYPE node_gpu_hourly_cost gauge\n"
      "node_gpu_hourly_cost{arch=\"amd64\",instance=\"node-a\",instance_type=\"p5.48xlarge\","
      "node=\"node-a\",provider_id=\"aws:///us-east-1a/i-0abc\",region=\"us-east-1\"} 3.1\n"
      "# HELP node_gpu_count node_gpu_count count of gpu on this node\n"
      "# TYPE node_gpu_count gauge\n"
      "node_gpu_count{arch=\"amd64\",instance=\"node-a\",instance_type=\"p5.48xlarge\","
      "node=\"node-a\",provider_id=\"aws:///us-east-1a/i-0abc\",region=\"us-east-1\"} 2\n";
  auto dcgm = HttpServer::Start(dcgm_options, [&](const ServedRequest& request) {
    ServedResponse r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";  // what its Go client sends
    r.body = request.path == "/opencost" ? opencost : exposition;
    return r;
  });
  ASSERT_TRUE(dcgm.ok()) << dcgm.status().message();

  // cgov with a bcrypt user in a web config; the real Prometheus authenticates as that user.
  WriteFile(dir / "web.yml", std::string("basic_auth_users:\n  prometheus: ") + kHashOfTest + "\n");
  WriteFile(dir / "password", "test");
  const int cgov_port = FreePort(), prom_port = FreePort();
  const std::string url = "http://127.0.0.1:" + std::to_string(prom_port);
  WriteFile(dir / "prometheus.yml",
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "rule_files: [\"" +
                DeployFile("prometheus/cgov-rules.yml") +
                "\"]\n"
                "scrape_configs:\n"
                "  - job_name: cgov\n"
                "    basic_auth: {username: prometheus, password_file: \"" +
                (dir / "password") +
                "\"}\n"
                "    static_configs: [{targets: [\"127.0.0.1:" +
                std::to_string(cgov_port) +
                "\"]}]\n"
                "  - job_name: nvidia-dcgm-exporter\n"
                "    static_configs: [{targets: [\"127.0.0.1:" +
                std::to_string((*dcgm)->port()) +
                "\"]}]\n"
                "  - job_name: opencost\n"
                "    honor_labels: true\n"
                "    metrics_path: /opencost\n"
                "    static_configs: [{targets: [\"127.0.0.1:" +
                std::to_string((*dcgm)->port()) + "\"]}]\n");
  Started prometheus = StartProgram({kPrometheus, "--config.file=" + (dir / "prometheus.yml"),
                                     "--storage.tsdb.path=" + (dir / "tsdb"),
                                     "--web.listen-address=127.0.0.1:" + std::to_string(prom_port),
                                     "--web.enable-admin-api", "--log.level=warn"},
                                    {});
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "a.db", "--interval", "1s", "--nvml-lib",
                    FakeNvml("full"), "--host-root", Fixture("proc/shared-box"), "--hostname",
                    "node-a", "--listen", "127.0.0.1:" + std::to_string(cgov_port), "--web-config",
                    dir / "web.yml", "--price-per-gpu-hour", "2.00"},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("fleet_a")}});
  auto stop = [](Started& p, int sig) {
    if (p.pid > 0) {
      kill(p.pid, sig);
      WaitProgram(p, 15);
      p.pid = -1;
    }
  };
  auto prom = PrometheusSource::Open(url, std::chrono::seconds(10));
  ASSERT_TRUE(prom.ok());
  const bool scraped = WaitFor(
      [&] {
        auto up = prom->Query(
            "count(up == 1) == 3 and count(count_over_time(cgov_ticks_total[1m]) >= 10) == 1 and "
            "count(count_over_time(DCGM_FI_DEV_GPU_UTIL[1m]) >= 10) == 2",
            NowS());
        return up.ok() && !up->empty();
      },
      60);
  if (!scraped) {
    stop(daemon, SIGKILL);
    stop(prometheus, SIGTERM);
    FAIL() << "Prometheus did not scrape the three exporters (cgov through basic auth)";
  }
  // /health answers a probe without credentials; /metrics does not.
  auto health = HttpGet("http://127.0.0.1:" + std::to_string(cgov_port) + "/health", {},
                        std::chrono::seconds(5));
  auto bare = HttpGet("http://127.0.0.1:" + std::to_string(cgov_port) + "/metrics", {},
                      std::chrono::seconds(5));
  ASSERT_TRUE(health.ok() && bare.ok());
  EXPECT_EQ(health->status, 200) << health->body;
  EXPECT_EQ(bare->status, 401);

  // The questions: every Grafana panel (variables filled in as Grafana would), the host
  // variable's query, every recording and alerting rule's expression; plus a control that
  // reads dcgm-exporter's names and so must change.
  std::vector<std::pair<std::string, std::string>> questions;
  json dashboard = json::parse(ReadFile(DeployFile("grafana/cgov-dashboard.json")));
  for (const json& panel : dashboard["panels"]) {
    for (const json& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex("\\$__rate_interval"), "4s");
      expr = std::regex_replace(expr, std::regex("\\$__range"), "10s");
      // Every variable at "All", as Grafana sends it (allValue ".*").
      expr = std::regex_replace(expr, std::regex("\\$(host|namespace|project)\\b"), ".*");
      // The grid intensity a user types into its textbox (g CO2e a kWh).
      expr = std::regex_replace(expr, std::regex("\\$grid_g_per_kwh\\b"), "400");
      EXPECT_EQ(expr.find('$'), std::string::npos) << "a variable left: " << expr;
      questions.emplace_back("panel " + panel["title"].get<std::string>(), expr);
    }
  }
  questions.emplace_back("variable host", "group by (Hostname) (cgov_gpu_phase_seconds_total)");
  for (const std::string& expr : RuleExpressions(DeployFile("prometheus/cgov-rules.yml"))) {
    questions.emplace_back("rule", expr);
  }
  const std::string control = "sum(DCGM_FI_DEV_POWER_USAGE)";
  questions.emplace_back("control", control);
  ASSERT_GE(questions.size(), 20u);

  // Instants inside the scraped span, whole seconds (the same on both passes).
  const double t0 = std::floor(NowS()) - 2;
  const std::vector<double> instants = {t0 - 4, t0};
  auto answers = [&] {
    std::map<std::string, std::string> out;
    for (double at : instants) {
      for (const auto& [what, expr] : questions) {
        auto result = prom->Query(expr, at);
        EXPECT_TRUE(result.ok()) << what << ": " << expr << ": " << result.status().message();
        out[fmt::format("{} @{}: {}", what, at, expr)] = result.ok() ? Canonical(*result) : "";
      }
    }
    return out;
  };
  auto fleet_report = [&] {
    RunResult r = RunProgram({CgovBinary(), "report", "--prometheus", url, "--since", "10s",
                              "--until", FormatRfc3339Utc(static_cast<int64_t>(t0) * 1'000'000'000),
                              "--format", "json", "--by", "user"},
                             {}, 60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const std::map<std::string, std::string> side_by_side = answers();
  const std::string report_side_by_side = fleet_report();
  // OpenCost's price for the node, read from the same Prometheus; one node_gpu_hourly_cost
  // series in it: OpenCost's (cgov publishes none of that name).
  auto opencost_series = prom->Query("count(node_gpu_hourly_cost)", t0);
  ASSERT_TRUE(opencost_series.ok() && opencost_series->size() == 1);
  EXPECT_EQ(opencost_series->front().points[0].second, 1);
  RunResult priced =
      RunProgram({CgovBinary(), "report", "--prometheus", url, "--since", "10s", "--until",
                  FormatRfc3339Utc(static_cast<int64_t>(t0) * 1'000'000'000), "--format", "json",
                  "--opencost-prices"},
                 {}, 60);
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const json with_opencost = json::parse(priced.out);
  ASSERT_FALSE(with_opencost["gpus"].empty());
  const json by_daemon = json::parse(report_side_by_side);
  ASSERT_EQ(with_opencost["gpus"].size(), by_daemon["gpus"].size());
  for (size_t i = 0; i < by_daemon["gpus"].size(); ++i) {
    const json& g = with_opencost["gpus"][i];
    EXPECT_EQ(g["price_source"], "OpenCost: node_gpu_hourly_cost{node=\"node-a\"}") << g.dump();
    // Its GPU-seconds at $3.10 an hour (the JSON's dollars are in cents).
    const double held_s = g["held_seconds"].get<double>();
    ASSERT_GT(held_s, 0);
    EXPECT_DOUBLE_EQ(g["cost_usd"].get<double>(), std::round(held_s * 3.1 / 3600 * 100) / 100)
        << g.dump();
  }

  // dcgm-exporter goes, and its series with it.
  (*dcgm).reset();
  RunResult deleted = RunProgram(
      {"/usr/bin/curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-g",
       url + "/api/v1/admin/tsdb/delete_series?match[]={job=\"nvidia-dcgm-exporter\"}"},
      {}, 30);
  ASSERT_EQ(deleted.out, "204") << deleted.err;
  const std::map<std::string, std::string> alone = answers();
  const std::string report_alone = fleet_report();
  stop(daemon, SIGTERM);
  stop(prometheus, SIGTERM);

  int non_empty = 0, answerable = 0;
  for (const auto& [question, answer] : side_by_side) {
    const std::string& single = alone.at(question);
    if (question.find(control) != std::string::npos) {
      EXPECT_NE(answer, "(empty)") << "the control: dcgm-exporter's series were scraped";
      EXPECT_EQ(single, "(empty)") << "cgov serves no DCGM_FI_* series by default";
      continue;
    }
    EXPECT_EQ(answer, single) << question;
    if (single != "(empty)") ++non_empty;
    // A rule over other rules' records (the daily rules read the hourly ones) has none to read
    // in these minutes: still compared, not counted as answerable.
    if (question.find(": ") == std::string::npos ||
        question.find("cgov:", question.find(": ")) == std::string::npos) {
      ++answerable;
    }
  }
  // Not a comparison of nothing: most questions have an answer (the budget alert and the
  // collectors-failing alert rightly have none).
  EXPECT_GE(non_empty, answerable * 2 / 3) << answerable << " answerable questions";
  for (const char* panel : {"panel Fleet mean utilization", "panel Power draw per node",
                            "panel GPU memory used per GPU"}) {
    bool found = false;
    for (const auto& [question, answer] : alone) {
      if (question.starts_with(panel) && answer != "(empty)") found = true;
    }
    EXPECT_TRUE(found) << panel << " has an answer";
  }
  EXPECT_FALSE(report_side_by_side.empty());
  EXPECT_EQ(report_side_by_side, report_alone) << "the fleet report reads cgov's series only";
}

}  // namespace
}  // namespace cgov::e2e
