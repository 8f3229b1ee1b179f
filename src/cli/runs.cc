#include "cli/runs.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "analysis/run_showback.h"
#include "app/run/run_analysis.h"
#include "app/run/run_digests.h"
#include "cli/command_table.h"
#include "cli/run.h"
#include "cli/usage_exit.h"
#include "core/atomic_file.h"
#include "core/json_writer.h"
#include "os/terminal.h"
#include "report/ci_export.h"
#include "report/compare_report.h"
#include "report/runs_report.h"
#include "report/summary_read.h"

namespace cgov::cli {
namespace {

TextStyle StyleFor(const std::string& format, const std::string& out) {
  if (format == "md") return kMarkdown;
  return TextStyle{false, out.empty() && TerminalWantsColor(STDOUT_FILENO)};
}

int Emit(const std::string& command, const std::string& text, const std::string& out) {
  if (out.empty()) {
    fmt::print("{}", text);
    return kExitOk;
  }
  if (Status s = WriteFileAtomically(out, text); !s.ok()) {
    fmt::print(stderr, "cgov {}: {}\n", command, s.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

int RunCompare(int argc, char** argv) {
  CLI::App app{
      "Compare a run with one or more baseline runs of the same job, from their summary.json: cost "
      "per unit of work (or per run), waste, phase shares, findings new and gone. Exit status: 0; "
      "3 when --fail-on-regression's limit was passed; 1 when a file cannot be read; 2 for bad "
      "options.",
      "cgov compare BASELINE... CURRENT"};
  std::vector<std::string> paths;
  std::optional<double> limit;
  std::string format = "text", out;
  app.add_option("paths", paths,
                 "baseline summary.json files or directories of them (those with CURRENT's tags, "
                 "branch/commit aside), then CURRENT's summary.json")
      ->required()
      ->expected(2, -1);
  app.add_option("--fail-on-regression", limit,
                 "exit 3 when CURRENT's cost per unit (or per run) rose more than PCT % over the "
                 "baselines' median (and above every baseline when there are several)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--format", format, "text, md or json")
      ->check(CLI::IsMember({"text", "md", "json"}));
  app.add_option("--out", out, "write here (atomically) instead of stdout");
  AddColorFlag(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  Result<RunDigest> current = ReadRunDigest(paths.back());
  if (!current.ok()) {
    fmt::print(stderr, "cgov compare: {}\n", current.status().message());
    return kExitFailure;
  }
  paths.pop_back();
  Result<std::vector<RunDigest>> baselines = LoadBaselines(paths, current->tags);
  if (!baselines.ok()) {
    fmt::print(stderr, "cgov compare: {}\n", baselines.status().message());
    return kExitFailure;
  }
  Result<RunComparison> c = CompareRuns(*baselines, *current, limit);
  if (!c.ok()) {
    fmt::print(stderr, "cgov compare: {}\n", c.status().message());
    return kExitFailure;
  }
  std::vector<std::string> used;
  for (const RunDigest& b : *baselines) used.push_back(b.path);
  const std::string text = format == "json" ? DumpJson(ComparisonJson(*c, used), 2) + "\n"
                                            : ComparisonText(*c, used, StyleFor(format, out));
  if (int rc = Emit("compare", text, out); rc != kExitOk) return rc;
  if (c->regressed) {
    fmt::print(stderr, "cgov compare: exit {}: --fail-on-regression {:g}: {}\n", kExitFindingsGate,
               *limit, c->verdict);
    return kExitFindingsGate;
  }
  return kExitOk;
}

int RunRuns(int argc, char** argv) {
  CLI::App app{
      "Read every summary.json under the given directories (CI artifacts downloaded in bulk) and "
      "report GPU-hours, dollars, waste and cost per unit by a tag, with the findings that recur "
      "across runs.",
      "cgov runs DIR..."};
  std::vector<std::string> paths;
  std::string by = "project", format = "text", out;
  app.add_option("paths", paths, "directories searched for summary.json, or summary.json files")
      ->required();
  app.add_option(
      "--by", by,
      "the tag to group by: project, team, user, branch or any tag key (default project)");
  app.add_option("--format", format, "text, md, json (docs/ci.md) or csv")
      ->check(CLI::IsMember({"text", "md", "json", "csv"}));
  app.add_option("--out", out, "write here (atomically) instead of stdout");
  AddColorFlag(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  if (by.empty()) {
    fmt::print(stderr, "cgov runs: --by: expected a tag key\n");
    return kExitUsage;
  }
  Result<std::vector<std::string>> files = FindSummaries(paths);
  if (!files.ok()) {
    fmt::print(stderr, "cgov runs: {}\n", files.status().message());
    return kExitFailure;
  }
  std::vector<RunDigest> runs;
  for (const std::string& file : *files) {
    Result<RunDigest> run = ReadRunDigest(file);
    if (!run.ok()) {
      fmt::print(stderr, "cgov runs: {}\n", run.status().message());
      return kExitFailure;
    }
    runs.push_back(std::move(run).value());
  }
  const RunShowback s = AggregateRuns(runs, by);
  const std::string text = format == "json"  ? DumpJson(RunsReportJson(s), 2) + "\n"
                           : format == "csv" ? RunsReportCsv(s)
                                             : RunsReportText(s, StyleFor(format, out));
  return Emit("runs", text, out);
}

int RunCi(int argc, char** argv) {
  CLI::App app{
      "Turn a run's summary.json into what a CI system reads: GitHub workflow annotations, a "
      "GitLab metrics report (OpenMetrics text) or a GitLab Code Quality report (docs/ci.md).",
      "cgov ci SUMMARY.json --format github|gitlab-metrics|gitlab-codequality"};
  std::string path, format, out, location = ".gitlab-ci.yml";
  app.add_option("summary", path, "the run's summary.json")->required();
  app.add_option(
         "--format", format,
         "github (annotations, on stdout in a workflow step), gitlab-metrics or gitlab-codequality")
      ->required()
      ->check(CLI::IsMember({"github", "gitlab-metrics", "gitlab-codequality"}));
  app.add_option("--path", location,
                 "gitlab-codequality: the file each issue is located in (default .gitlab-ci.yml)");
  app.add_option("--out", out, "write here (atomically) instead of stdout");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  Result<RunDigest> run = ReadRunDigest(path);
  if (!run.ok()) {
    fmt::print(stderr, "cgov ci: {}\n", run.status().message());
    return kExitFailure;
  }
  const std::string text = format == "github" ? GithubAnnotations(*run)
                           : format == "gitlab-metrics"
                               ? GitlabMetrics(*run)
                               : DumpJson(GitlabCodeQuality(*run, location), 2) + "\n";
  return Emit("ci", text, out);
}

}  // namespace cgov::cli
