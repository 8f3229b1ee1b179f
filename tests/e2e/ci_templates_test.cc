// End-to-end: the CI templates. action.yml and the example workflow validated offline against
// GitHub's schemas (@action-validator/cli); the GitLab template executed by gitlab-ci-local with
// its shell executor on a job that runs `cgov run` on the fake driver, and the artifacts, the
// metrics report and the Code Quality report it produced checked against the run's summary.json.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

const std::string kSource = CGOV_SOURCE_DIR;
const std::string kTools = std::string(CGOV_NODE_TOOLS_DIR) + "/node_modules/.bin/";

class CiTemplatesE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access("/usr/bin/node", X_OK) != 0 && access("/usr/local/bin/node", X_OK) != 0) {
      GTEST_SKIP() << "node is not installed: the CI template checks need it";
    }
    ASSERT_EQ(access((kTools + "action-validator").c_str(), X_OK), 0)
        << "the CI test tools are missing: run scripts/install-deps (npm ci in tests/node)";
  }
};

TEST_F(CiTemplatesE2E, ActionAndExampleWorkflowValidateOffline) {
  for (const char* file : {"action.yml", "ci/github/cgov-example.yml"}) {
    RunResult r = RunProgram({kTools + "action-validator", kSource + "/" + file}, {}, 60);
    EXPECT_EQ(r.exit_code, 0) << file << "\n" << r.out << r.err;
  }
  // The validator does reject a broken action: the check is not vacuous.
  TempDir dir;
  std::string broken = ReadFile(kSource + "/action.yml");
  broken.replace(broken.find("using: composite"), 16, "using: compost");
  std::ofstream(dir / "action.yml") << broken;
  EXPECT_NE(RunProgram({kTools + "action-validator", dir / "action.yml"}, {}, 60).exit_code, 0);
}

// A git repository with the template included by a job, as a project would use it.
std::string GitlabProject(const TempDir& dir, const std::string& fail_on) {
  const std::string repo = dir / "project";
  std::filesystem::create_directories(repo + "/ci");
  std::filesystem::copy_file(kSource + "/ci/gitlab/cgov.gitlab-ci.yml",
                             repo + "/ci/cgov.gitlab-ci.yml");
  std::ofstream(repo + "/.gitlab-ci.yml")
      << "include:\n  - local: ci/cgov.gitlab-ci.yml\n"
      << "train:\n  extends: .cgov\n  variables:\n"
      << "    CGOV_COMMAND: \"sleep 1; echo trained\"\n"
      << "    CGOV_BIN: " << CgovBinary() << "\n"
      << "    CGOV_NVML_LIB: " << FakeNvml("full") << "\n"
      << "    CGOV_FAKE_NVML_SCENARIO: " << Scenario("h100x8_fast") << "\n"
      << "    CGOV_TAGS: project=vision,team=perception\n"
      << "    CGOV_PRICE_PER_GPU_HOUR: \"2.50\"\n"
      << "    CGOV_FAIL_ON: \"" << fail_on << "\"\n";
  const Env git_env = {{"GIT_AUTHOR_NAME", "t"},
                       {"GIT_AUTHOR_EMAIL", "t@example.invalid"},
                       {"GIT_COMMITTER_NAME", "t"},
                       {"GIT_COMMITTER_EMAIL", "t@example.invalid"}};
  for (const std::vector<std::string>& git :
       {std::vector<std::string>{"/usr/bin/git", "-C", repo, "init", "-q", "-b", "main"},
        {"/usr/bin/git", "-C", repo, "add", "-A"},
        {"/usr/bin/git", "-C", repo, "commit", "-q", "-m", "train"}}) {
    RunResult r = RunProgram(git, git_env, 30);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return repo;
}

RunResult GitlabCiLocal(const std::string& repo) {
  // It wants to be started in the project (its --cwd takes relative paths only).
  return RunProgram(
      {"/bin/sh", "-c", "cd \"$1\" && exec \"$2\" train", "sh", repo, kTools + "gitlab-ci-local"},
      {{"NO_COLOR", "1"}}, 180);
}

TEST_F(CiTemplatesE2E, GitlabTemplateRunsAndPublishesItsReports) {
  TempDir dir;
  const std::string repo = GitlabProject(dir, "critical");
  RunResult r = GitlabCiLocal(repo);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("trained"), std::string::npos) << "the job's own output passes through";
  const std::string run = repo + "/.gitlab-ci-local/artifacts/train/cgov-run";
  for (const char* file : {"summary.json", "samples.jsonl", "report.md", "report.html",
                           "metrics.txt", "gl-code-quality-report.json"}) {
    EXPECT_TRUE(std::filesystem::exists(run + "/" + file)) << file;
  }
  const json summary = json::parse(ReadFile(run + "/summary.json"));
  EXPECT_EQ(summary["run"]["tags"]["branch"], "main");
  EXPECT_EQ(summary["run"]["tags"]["team"], "perception");

  // The metrics report: valid exposition text (promtool), the summary's figures.
  const std::string metrics = ReadFile(run + "/metrics.txt");
  RunResult lint = RunProgram({"/usr/bin/promtool", "check", "metrics"}, {}, 30, metrics);
  EXPECT_EQ(lint.exit_code, 0) << lint.out << lint.err << metrics;
  std::map<std::string, double> values;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    values[line.substr(0, line.rfind(' '))] = std::stod(line.substr(line.rfind(' ') + 1));
  }
  EXPECT_DOUBLE_EQ(values["cgov_cost_usd"], summary["cost"]["total_usd"].get<double>());
  EXPECT_NEAR(values["cgov_gpu_seconds"], summary["cost"]["gpu_hours"].get<double>() * 3600, 1e-6);
  EXPECT_NEAR(values["cgov_waste_pct"], summary["cost"]["waste_fraction"].get<double>() * 100,
              1e-9);
  EXPECT_DOUBLE_EQ(values["cgov_phase_share_pct{phase=\"idle_held\"}"],
                   summary["phases"]["idle_held"]["share_pct"].get<double>());
  int warnings = 0;
  for (const json& f : summary["findings"]) warnings += f["severity"] == "warning";
  EXPECT_EQ(values["cgov_findings{severity=\"warning\"}"], warnings);

  // The Code Quality report: one issue per finding, located in the CI file, stable fingerprints.
  const json quality = json::parse(ReadFile(run + "/gl-code-quality-report.json"));
  ASSERT_EQ(quality.size(), summary["findings"].size());
  ASSERT_FALSE(quality.empty());
  for (size_t i = 0; i < quality.size(); ++i) {
    const json& issue = quality[i];
    const json& finding = summary["findings"][i];
    EXPECT_EQ(issue["check_name"], "cgov/" + finding["id"].get<std::string>());
    EXPECT_EQ(issue["location"]["path"], ".gitlab-ci.yml");
    EXPECT_EQ(issue["location"]["lines"]["begin"], 1);
    EXPECT_EQ(issue["fingerprint"].get<std::string>().size(), 16u);
    const std::string severity = finding["severity"];
    EXPECT_EQ(issue["severity"], severity == "critical"  ? "critical"
                                 : severity == "warning" ? "major"
                                                         : "info");
  }
}

TEST_F(CiTemplatesE2E, GitlabGateFailsTheJobAndStillKeepsTheArtifacts) {
  TempDir dir;
  const std::string repo = GitlabProject(dir, "warning");
  RunResult r = GitlabCiLocal(repo);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("--fail-on warning"), std::string::npos) << r.out;
  EXPECT_TRUE(
      std::filesystem::exists(repo + "/.gitlab-ci-local/artifacts/train/cgov-run/metrics.txt"))
      << "artifacts: when: always";
}

}  // namespace
}  // namespace cgov::e2e
