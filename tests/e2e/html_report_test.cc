// End-to-end: the HTML report of a `cgov run` (the `make run` job) and of a history window (the
// demo week), each loaded in Debian's headless Chromium by tests/node/check_report.mjs: no
// console errors, no network, every section, one chart per GPU with both series drawn, every
// number tied to the JSON equal to it, keyboard sorting, axe-core, html-validate, dark mode and
// A4 printing. Screenshots and PDFs are left under the build tree (html-report/) to look at.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

std::string FindNode() {
  for (const char* p : {"/usr/bin/node", "/usr/local/bin/node", "/usr/bin/nodejs"}) {
    if (access(p, X_OK) == 0) return p;
  }
  return "";
}

// Runs the browser check; "" when it passed, else what it printed.
std::string CheckInBrowser(const std::string& html, const std::string& json_text,
                           const std::string& name, const std::vector<std::string>& sections) {
  const std::string node = FindNode();
  const std::string dir = CGOV_NODE_TOOLS_DIR;
  const std::string shots = BuildDir() + "/html-report";
  std::filesystem::create_directories(shots);
  std::vector<std::string> argv = {node, dir + "/check_report.mjs", html, json_text,
                                   shots + "/" + name};
  argv.insert(argv.end(), sections.begin(), sections.end());
  RunResult r = RunProgram(argv, {}, 120);
  return r.exit_code == 0 ? "" : "exit " + std::to_string(r.exit_code) + "\n" + r.out + r.err;
}

class HtmlReportE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindNode().empty()) GTEST_SKIP() << "node is not installed: the browser checks need it";
    ASSERT_EQ(access("/usr/bin/chromium", X_OK), 0)
        << "Debian's chromium is missing: run scripts/install-deps";
    ASSERT_TRUE(
        std::filesystem::exists(std::string(CGOV_NODE_TOOLS_DIR) + "/node_modules/playwright-core"))
        << "the browser test tools are missing: run scripts/install-deps (npm ci in tests/node)";
  }
};

TEST_F(HtmlReportE2E, RunReportOfTheMakeRunJob) {
  TempDir dir;
  auto run = [&](const std::string& out, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {CgovBinary(), "run",          "--nvml-lib", FakeNvml("full"),
                                     "--out",      dir / out,      "--interval", "200ms",
                                     "--tag",      "project=demo", "--work",     "1000"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {"--", "sleep", "3"});
    return RunProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8_fast")}}, 60);
  };
  // (With a grid intensity and an electricity price: the energy's CO2e and cost on the page.)
  RunResult r = run("run", {"--grid-intensity", "400", "--energy-price", "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(dir / "run/report.html")) << r.err;
  // Issue 62: the job's CO2e and electricity from its exact joules; the GPU-time dollars apart.
  const json summary = json::parse(ReadFile(dir / "run/summary.json"));
  const json& e = summary["energy"];
  ASSERT_GT(e["joules"].get<double>(), 0) << e.dump();
  EXPECT_NEAR(e["co2e_kg"].get<double>(), e["joules"].get<double>() / 3.6e6 * 0.4, 0.001);
  EXPECT_EQ(std::llround(e["cost_usd"].get<double>() * 100),
            std::llround(e["joules"].get<double>() / 3.6e6 * 0.2 * 100));
  EXPECT_EQ(e["price_usd_per_kwh"], 0.2);
  EXPECT_NE(r.err.find("(--energy-price), of which idle"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("g/kWh (--grid-intensity)"), std::string::npos) << r.err;
  // A bad figure stops the run before the job starts.
  for (const char* flag : {"--energy-price", "--grid-intensity"}) {
    RunResult bad = RunProgram({CgovBinary(), "run", "--nvml-lib", FakeNvml("full"), "--out",
                                dir / "bad", flag, "-1", "--", "touch", dir / "ran"},
                               {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8_fast")}});
    EXPECT_EQ(bad.exit_code, 2) << flag << bad.err;
    EXPECT_NE(bad.err.find(flag), std::string::npos) << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "ran")) << flag << ": the job never started";
  }
  EXPECT_NE(r.err.find("report.html"), std::string::npos) << "the report names the file";
  EXPECT_EQ(CheckInBrowser(dir / "run/report.html", dir / "run/summary.json", "run",
                           {"cost", "phases", "charts", "gpus", "metrics", "findings"}),
            "");
  // The same job against the first as its baseline: the comparison's section and figures.
  RunResult again = run("again", {"--baseline", dir / "run"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(CheckInBrowser(dir / "again/report.html", dir / "again/summary.json", "run-baseline",
                           {"cost", "phases", "charts", "gpus", "metrics", "findings", "baseline"}),
            "");
}

TEST_F(HtmlReportE2E, HistoryReportOfTheDemoWeek) {
  TempDir dir;
  // The week other suites read too (made once, only read).
  const std::string week = SharedDemoDb({"--duration", "7d", "--interval", "60s"});
  ASSERT_NE(week, "");
  // Budgets too: their section's amounts, spend and forecasts are checked against the JSON.
  WriteFile(dir / "budgets.toml",
            "[[budget]]\nproject = \"notebooks\"\nweekly_usd = 300\n"
            "[[budget]]\nteam = \"research\"\nmonthly_usd = 9000\n");
  for (const char* format : {"html", "json"}) {
    // (--energy-price and --grid-intensity: the energy section's every figure, checked too.)
    RunResult rep = RunProgram(
        {CgovBinary(), "report", "--db", week, "--since", "7d", "--budgets", dir / "budgets.toml",
         "--format", format, "--out", dir / ("week." + std::string(format)), "--energy-price",
         "0.125", "--grid-intensity", "380", "--plan"},
        {}, 60);
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
  }
  EXPECT_EQ(CheckInBrowser(dir / "week.html", dir / "week.json", "demo-week",
                           {"cost", "phases", "waste", "charts", "gpus", "who", "showback",
                            "budgets", "actions", "heatmap", "plan", "findings"}),
            "");
  // Issue 57, 12: the history page lacked the projection the other views show; its figures are
  // read back from the JSON by the browser check with the others.
  const std::string page = ReadFile(dir / "week.html");
  for (const char* pointer :
       {"/cost/hourly_usd", "/cost/daily_usd", "/cost/monthly_usd", "/cost/yearly_usd"}) {
    EXPECT_NE(page.find(std::string("data-json=\"") + pointer + "\""), std::string::npos)
        << pointer;
  }
}

}  // namespace
}  // namespace cgov::e2e
