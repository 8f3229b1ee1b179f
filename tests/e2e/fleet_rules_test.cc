// End-to-end: the hourly recording rules in a real Prometheus (Debian's package). A 30-hour
// history of three nodes (cgov_fleet_history) is backfilled with `promtool tsdb create-blocks-
// from openmetrics`, the cgov-hourly rules are backfilled over it with `promtool tsdb create-
// blocks-from rules` (leaving out two hours, as when Prometheus is down; the hours before them
// with the group as it was before the owners' rules), and `cgov report --prometheus` must give
// the generator's own totals to the GPU-second from the raw counters and from the rules alike.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <map>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/fleet/fleet_load.h"
#include "core/time_format.h"
#include "e2e_helpers.h"
#include "os/http_get.h"
#include "process_runner.h"
#include "store/prometheus_source.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

// A group of deploy/prometheus/cgov-rules.yml (cgov-hourly unless named), as a rule file of its
// own.
std::string HourlyGroup(const std::string& name = "cgov-hourly") {
  const std::string rules = ReadFile(DocsFile("../deploy/prometheus/cgov-rules.yml"));
  const size_t from = rules.find("  - name: " + name + "\n");
  EXPECT_NE(from, std::string::npos);
  const size_t to = rules.find("\n  - name:", from + 1);
  return "groups:\n" + rules.substr(from, to == std::string::npos ? to : to + 1 - from);
}

// The group as a rule file of version 1 had it: without its version, the owners' rules and the
// energy rules (version 4).
std::string HourlyGroupVersion1() {
  const std::string group = HourlyGroup();
  std::string out;
  bool keep = true;
  for (size_t at = 0; at < group.size();) {
    const size_t end = std::min(group.find('\n', at), group.size());
    const std::string line = group.substr(at, end + 1 - at);
    at = end + 1;
    if (line.starts_with("      - record: ")) {
      keep = line.find("cgov:owner_") == std::string::npos &&
             line.find("cgov:hourly_rules:version") == std::string::npos &&
             line.find("energy") == std::string::npos;
    } else if (!line.starts_with("       ")) {
      keep = true;  // a comment or the group's own lines
    }
    if (keep) out += line;
  }
  EXPECT_EQ(out.find("record: cgov:owner_"), std::string::npos);
  EXPECT_NE(out.find("cgov:identity_held_seconds:increase1h"), std::string::npos);
  return out;
}

// A report's phase totals and its projects' attributed time: the generator's counters, to the
// second.
void ExpectTheGeneratorsTotals(const json& report, const json& truth) {
  for (const auto& [phase, seconds] : truth["phase_seconds"].items()) {
    if (phase == "unknown") continue;
    EXPECT_NEAR(report["phases"][phase]["gpu_seconds"].get<double>(), seconds.get<double>(), 0.5)
        << phase;
  }
  std::map<std::string, double> projects;
  for (const json& w : report["who"]) {
    for (const auto& [phase, s] : w["attributed_seconds"].items()) {
      projects[w["key"]] += s.get<double>();
    }
  }
  for (const auto& [project, seconds] : truth["project_seconds"].items()) {
    EXPECT_NEAR(projects[project], seconds.get<double>(), 0.5) << project;
  }
}

// Issue 62: its energy, idle energy and the time with a power reading, and its projects'
// energy: the generator's counters, to the joule.
void ExpectTheGeneratorsEnergy(const json& report, const json& truth) {
  const json& e = report["energy"];
  auto near = [](double v) { return 1 + v * 1e-9; };
  const double joules = truth["energy_joules"].get<double>();
  EXPECT_NEAR(e["joules"].get<double>(), joules, near(joules));
  EXPECT_NEAR(e["idle_joules"].get<double>(), truth["idle_energy_joules"].get<double>(),
              near(joules));
  EXPECT_NEAR(e["power_known_gpu_seconds"].get<double>(),
              truth["power_known_seconds"].get<double>(), 0.5);
  std::map<std::string, double> projects;
  double idle_held = 0;
  for (const json& w : report["who"]) {
    projects[w["key"]] += w["energy_joules"].get<double>();
    idle_held += w["idle_held_energy_joules"].get<double>();
  }
  for (const auto& [project, j] : truth["project_energy_joules"].items()) {
    EXPECT_NEAR(projects[project], j.get<double>(), near(j.get<double>())) << project;
  }
  EXPECT_NEAR(idle_held, truth["idle_held_energy_joules"].get<double>(), near(joules));
}

class FleetRulesE2E : public ::testing::Test {
 protected:
  void TearDown() override { Stop(); }
  void Start() {
    prometheus_ = StartProgram(
        {kPrometheus, "--config.file=" + (dir_ / "prometheus.yml"),
         "--storage.tsdb.path=" + (dir_ / "tsdb"), "--storage.tsdb.retention.time=100y",
         "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        {});
    ASSERT_TRUE(WaitFor(
        [&] {
          auto ready = HttpGet(url_ + "/-/ready", {}, std::chrono::seconds(1));
          return ready.ok() && ready->status == 200;
        },
        60))
        << "Prometheus did not become ready";
  }
  void Stop() {
    if (prometheus_.pid > 0) {
      kill(prometheus_.pid, SIGTERM);
      WaitProgram(prometheus_, 20);
      prometheus_.pid = -1;
    }
  }
  json Report(const std::string& rules, const std::string& since, const std::string& until,
              const std::string& by) {
    return ReportJson({"--prometheus", url_, "--since", since, "--until", until, "--by", by,
                       "--recording-rules", rules});
  }
  // A history of three nodes of two GPUs (cgov_fleet_history), written in day files as the scale
  // benchmark writes a month and backfilled one by one into the TSDB; its truth.
  json BackfillHistory(int hours) {
    RunResult made = RunProgram(
        {CGOV_FLEET_HISTORY, "--nodes", "3", "--gpus", "2", "--hours", std::to_string(hours),
         "--split-hours", "24", "--out", dir_ / "fleet.om", "--truth", dir_ / "truth.json"},
        {});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    const int files = (hours + 23) / 24;
    EXPECT_FALSE(std::filesystem::exists(dir_ / ("fleet.om." + std::to_string(files))));
    for (int k = 0; k < files; ++k) {
      const std::string part = dir_ / ("fleet.om." + std::to_string(k));
      RunResult backfill = RunProgram({kPromtool, "tsdb", "create-blocks-from", "openmetrics",
                                       "--max-block-duration=24h", part, dir_ / "tsdb"},
                                      {}, 120);
      EXPECT_EQ(backfill.exit_code, 0) << part << backfill.out << backfill.err;
    }
    WriteFile(dir_ / "prometheus.yml", "global:\n  scrape_interval: 1m\n");
    return json::parse(ReadFile(dir_ / "truth.json"));
  }
  // The queries of a report over the rules (--verbose lists each on stderr).
  std::string Queries(const std::string& since, const std::string& until, const std::string& by) {
    RunResult r =
        RunProgram({CgovBinary(), "report", "--format", "json", "--prometheus", url_, "--since",
                    since, "--until", until, "--by", by, "--recording-rules", "on", "--verbose"},
                   {}, 120);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.err;
  }
  // Backfills a rule file over [from, to] from the running Prometheus, then restarts it with
  // the new blocks. promtool evaluates a group only where an evaluation falls in the block it
  // writes (2 h unless --max-block-duration says more): a daily group needs longer blocks.
  void BackfillRules(const std::string& file, int64_t from, int64_t to) {
    const std::string out = dir_ / ("out-" + file);
    RunResult rules =
        RunProgram({kPromtool, "tsdb", "create-blocks-from", "--max-block-duration=744h", "rules",
                    "--start", std::to_string(from), "--end", std::to_string(to), "--url", url_,
                    "--output-dir", out, dir_ / file},
                   {}, 120);
    ASSERT_EQ(rules.exit_code, 0) << rules.out << rules.err;
    Stop();
    RunResult moved = RunProgram({"/bin/sh", "-c", "mv " + out + "/* " + (dir_ / "tsdb")}, {});
    ASSERT_EQ(moved.exit_code, 0) << moved.err;
    Start();
  }

  TempDir dir_;
  int port_ = FreePort();
  std::string url_ = "http://127.0.0.1:" + std::to_string(port_);
  Started prometheus_;
};

TEST_F(FleetRulesE2E, HourlyRulesGiveTheRawCountersTotalsToTheSecondAroundASkippedHour) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  // In two files, of 24 and 6 hours.
  const json truth = BackfillHistory(30);
  ASSERT_FALSE(HasFailure());
  const int64_t start = truth["start"], end = truth["end"];
  WriteFile(dir_ / "hourly-v1.yml", HourlyGroupVersion1());
  WriteFile(dir_ / "hourly.yml", HourlyGroup());
  Start();
  // The rules over hours 0-12 (an older rule file) and 14-30 (this one): Prometheus "down" for
  // two hours between.
  for (auto [from, to, out, file] :
       {std::tuple{start, start + 12 * 3600, "rules-a", "hourly-v1.yml"},
        std::tuple{start + 14 * 3600, end, "rules-b", "hourly.yml"}}) {
    RunResult rules = RunProgram(
        {kPromtool, "tsdb", "create-blocks-from", "rules", "--start", std::to_string(from), "--end",
         std::to_string(to), "--url", url_, "--output-dir", dir_ / out, dir_ / file},
        {}, 120);
    ASSERT_EQ(rules.exit_code, 0) << rules.out << rules.err;
  }
  Stop();
  for (const char* out : {"rules-a", "rules-b"}) {
    RunResult moved =
        RunProgram({"/bin/sh", "-c", "mv " + (dir_ / out) + "/* " + (dir_ / "tsdb")}, {});
    ASSERT_EQ(moved.exit_code, 0) << moved.err;
  }
  Start();

  const std::string since = FormatRfc3339Utc((start - 60) * 1'000'000'000);
  const std::string until = FormatRfc3339Utc(end * 1'000'000'000);
  std::map<std::string, json> reports;
  for (const char* rules : {"off", "on", "auto"}) {
    reports[rules] = Report(rules, since, until, "project");
    ASSERT_TRUE(reports[rules].contains("phases")) << rules;
  }
  for (const auto& [rules, report] : reports) {
    SCOPED_TRACE(rules);
    EXPECT_EQ(report["gpu_count"], 6);
    ExpectTheGeneratorsTotals(report, truth);
    const std::string notes = report["notes"].dump();
    std::smatch m;
    const bool from_rules = std::regex_search(
        notes, m, std::regex("(\\d+) of the window's 31 hours from the hourly recording rules"));
    EXPECT_EQ(from_rules, rules != "off") << notes;
    // The older file's hours carry no energy: said, and left out (never made up).
    const bool older = notes.find("older than version 4") != std::string::npos;
    EXPECT_EQ(older, rules != "off") << notes;
    if (rules == "off") {
      ExpectTheGeneratorsEnergy(report, truth);
    } else {
      EXPECT_LT(report["energy"]["joules"].get<double>(),
                truth["energy_joules"].get<double>() * 0.9);
      EXPECT_LT(report["energy"]["power_known_gpu_seconds"].get<double>(),
                truth["power_known_seconds"].get<double>() * 0.9);
    }
    // Where the backfill's evaluations fall in the hour is its own; the two skipped hours are
    // never among them.
    if (from_rules) {
      EXPECT_GE(std::stoi(m[1]), 24) << notes;
      EXPECT_LE(std::stoi(m[1]), 28) << notes;
    }
  }
  // --by pod reads identities down to the pod (the other --by values have them summed in
  // Prometheus): one row per generated job, the same held time.
  json by_pod = Report("on", since, until, "pod");
  EXPECT_EQ(by_pod["who"].size(), truth["identities"].get<size_t>());
  EXPECT_DOUBLE_EQ(by_pod["held_gpu_seconds"].get<double>(),
                   reports["on"]["held_gpu_seconds"].get<double>());
  // Which rules the identities came from (--verbose lists each query): by project, the pods'
  // rules for the hours the older file recorded and the owners' for the rest; by pod, the pods'
  // alone.
  const std::string by_project_queries = Queries(since, until, "project");
  EXPECT_NE(by_project_queries.find("sum_over_time(cgov:owner_held_seconds:increase1h["),
            std::string::npos)
      << by_project_queries;
  EXPECT_NE(by_project_queries.find("sum_over_time(cgov:identity_held_seconds:increase1h["),
            std::string::npos)
      << by_project_queries;
  const std::string by_pod_queries = Queries(since, until, "pod");
  EXPECT_EQ(by_pod_queries.find("cgov:owner_"), std::string::npos) << by_pod_queries;

  // A large fleet's runs come as per-GPU totals and the fleet's hours (here forced by a budget
  // of no hourly points): the same totals, and a heatmap holding every second of them.
  auto prom = PrometheusSource::Open(url_, std::chrono::seconds(30));
  ASSERT_TRUE(prom.ok());
  std::map<std::string, std::array<int64_t, kPhaseCount>> by_budget;
  for (int64_t budget : {int64_t{50'000}, int64_t{0}}) {
    SCOPED_TRACE(budget);
    auto in = LoadFleet(*prom, (start - 60) * 1000, end * 1000,
                        {.rules = RecordingRules::kOn, .hourly_point_budget = budget});
    ASSERT_TRUE(in.ok()) << in.status().message();
    std::array<int64_t, kPhaseCount> phases{};
    int64_t known = 0, heatmap_known = 0;
    for (const HourBucket& b : in->hours) {
      for (const auto& [id, g] : b.gpus) {
        for (size_t p = 0; p < kPhaseCount; ++p) phases[p] += g.usage.phase_ms[p];
        known += g.usage.KnownMs();
      }
    }
    for (const auto& [hour, u] : in->heatmap_hours) heatmap_known += u.KnownMs();
    EXPECT_EQ(in->heatmap_hours.empty(), budget > 0);
    if (budget == 0) {
      EXPECT_EQ(heatmap_known, known);
      EXPECT_GE(in->heatmap_hours.size(), 30u);
    }
    by_budget[std::to_string(budget)] = phases;
  }
  EXPECT_EQ(by_budget["0"], by_budget["50000"]);

  // A window of less than a day reads the raw counters unless told to read the rules.
  const std::string half = FormatRfc3339Utc((start + 12 * 3600) * 1'000'000'000);
  json short_auto = Report("auto", since, half, "user");
  EXPECT_EQ(short_auto["notes"].dump().find("recording rules"), std::string::npos);
  json short_on = Report("on", since, half, "user");
  EXPECT_NE(short_on["notes"].dump().find("recording rules"), std::string::npos);
  EXPECT_DOUBLE_EQ(short_on["held_gpu_seconds"].get<double>(),
                   short_auto["held_gpu_seconds"].get<double>());

  // Where the rules were never evaluated, `on` says so; a bad value is a usage error.
  RunResult none =
      RunProgram({CgovBinary(), "report", "--prometheus", url_, "--since", "2h", "--until",
                  FormatRfc3339Utc(start * 1'000'000'000), "--recording-rules", "on"},
                 {}, 60);
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("no evaluation of the hourly rules"), std::string::npos) << none.err;
  RunResult bad = RunProgram(
      {CgovBinary(), "report", "--prometheus", url_, "--recording-rules", "sometimes"}, {}, 60);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("expected auto, on or off"), std::string::npos) << bad.err;
}

// The daily rules (group cgov-daily) backfilled over the hourly ones of a 50-hour history: the
// second daily evaluation summed 24 hourly ones (the first, a few hours in, summed only those
// before it), and so did the third where the group's offset (Prometheus hashes it from the
// rule file's path, a new temporary folder each run) put it within the history; the report reads
// those hours a day at a time and the rest by the hour or raw, with the generator's totals to
// the second; by pod it reads no daily rule.
TEST_F(FleetRulesE2E, DailyRulesStandForTheDaysTheySummedWithTheSameTotals) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  const json truth = BackfillHistory(50);
  ASSERT_FALSE(HasFailure());
  const int64_t start = truth["start"], end = truth["end"];
  WriteFile(dir_ / "hourly.yml", HourlyGroup());
  WriteFile(dir_ / "daily.yml", HourlyGroup("cgov-daily"));
  Start();
  ASSERT_NO_FATAL_FAILURE(BackfillRules("hourly.yml", start, end));
  ASSERT_NO_FATAL_FAILURE(BackfillRules("daily.yml", start, end));  // they read the hourly rules

  const std::string since = FormatRfc3339Utc((start - 60) * 1'000'000'000);
  const std::string until = FormatRfc3339Utc(end * 1'000'000'000);
  for (const char* rules : {"off", "on"}) {
    SCOPED_TRACE(rules);
    json report = Report(rules, since, until, "project");
    ASSERT_TRUE(report.contains("phases"));
    EXPECT_EQ(report["gpu_count"], 6);
    ExpectTheGeneratorsTotals(report, truth);
    double held = 0;  // the identities' held time
    for (const auto& [key, seconds] : HeldByKey(report)) held += seconds;
    EXPECT_NEAR(held, truth["held_seconds"].get<double>(), 0.5);
    ExpectTheGeneratorsEnergy(report, truth);
    const std::string notes = report["notes"].dump();
    std::smatch days;
    const bool daily =
        std::regex_search(notes, days, std::regex("(\\d+) of them summed by day in cgov-daily"));
    EXPECT_EQ(daily, std::string(rules) == "on") << notes;
    if (daily) {
      const int hours = std::stoi(days[1].str());
      EXPECT_TRUE(hours == 24 || hours == 48) << "one or two whole days: " << notes;
    }
  }
  const std::string by_project = Queries(since, until, "project");
  EXPECT_NE(by_project.find("sum_over_time(cgov:owner_held_seconds:increase1d["), std::string::npos)
      << by_project;
  EXPECT_NE(by_project.find("sum_over_time(cgov:gpu_phase_seconds:increase1d["), std::string::npos)
      << by_project;
  const std::string by_pod = Queries(since, until, "pod");
  EXPECT_EQ(by_pod.find(":increase1d"), std::string::npos) << by_pod;
}

}  // namespace
}  // namespace cgov::e2e
