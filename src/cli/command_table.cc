#include "cli/command_table.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "cli/daemon.h"
#include "cli/demo.h"
#include "cli/doctor.h"
#include "cli/import.h"
#include "cli/prices.h"
#include "cli/report.h"
#include "cli/run.h"
#include "cli/runs.h"
#include "cli/top.h"
#include "core/build_info.h"

namespace cgov::cli {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

namespace {

void PrintUsage(std::FILE* out) {
  fmt::print(out,
             "cgov {} — Cost Governor: how much of the GPU time you pay for is wasted, and why.\n\n"
             "usage: cgov <command> [options]\n\ncommands:\n",
             CGOV_VERSION);
  for (const Command& c : Commands()) fmt::print(out, "  {:<8} {}\n", c.name, c.summary);
  fmt::print(out,
             "\n`cgov <command> --help` shows a command's options; `cgov --version` (or -V) the "
             "version.\n");
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"run", "run a job unchanged and report how well it used the GPUs: cgov run -- COMMAND",
       RunRun},
      {"compare", "compare a run with baseline runs: cgov compare BASELINE... CURRENT", RunCompare},
      {"runs", "many runs' summary.json by tag (CI artifacts): cgov runs DIR... --by project",
       RunRuns},
      {"ci",
       "a run's summary.json as CI annotations, metrics or code quality: cgov ci FILE --format",
       RunCi},
      {"daemon", "record every GPU and GPU process of this host into a SQLite history", RunDaemon},
      {"report", "where the GPU-time of a history database went, who held it, what it cost",
       RunReport},
      {"top", "the box now: each GPU's phase and holders, who is idle-held, today's waste", RunTop},
      {"demo", "write a simulated shared GPU box (a week in seconds) for cgov report", RunDemo},
      {"import", "import another tool's history: cgov import gpu-usage-audit SOURCE.db --db PATH",
       RunImport},
      {"doctor", "check what this machine offers: NVML, GPUs and their fields, /proc, cgroups",
       RunDoctor},
      {"prices", "the price catalog, and the price a GPU name resolves to: cgov prices --gpu NAME",
       RunPrices},
  };
  return commands;
}

std::vector<std::string> SuggestCommands(std::string_view typed) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const Command& c : Commands()) {
    std::string_view name = c.name;
    size_t distance = EditDistance(typed, name);
    bool prefix = !typed.empty() && name.substr(0, typed.size()) == typed;
    if (distance <= 2 || prefix) scored.emplace_back(prefix ? 0 : distance, name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> names;
  for (auto& [score, name] : scored) names.push_back(name);
  return names;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  std::string_view name = argv[1];
  if (name == "-h" || name == "--help" || name == "help") {
    PrintUsage(stdout);
    return kExitOk;
  }
  if (name == "--version" || name == "-V" || name == "version") {
    fmt::print("cgov {}\n  revision:   {}\n  build date: {}\n", kBuildInfo.version,
               kBuildInfo.revision, kBuildInfo.build_date);
    return kExitOk;
  }
  for (const Command& c : Commands()) {
    if (name == c.name) return c.run(argc - 1, argv + 1);
  }
  fmt::print(stderr, "cgov: unknown command '{}'", name);
  std::vector<std::string> suggestions = SuggestCommands(name);
  if (!suggestions.empty()) fmt::print(stderr, "; did you mean '{}'?", suggestions.front());
  fmt::print(stderr, "\nRun 'cgov --help' for the list of commands.\n");
  return kExitUsage;
}

}  // namespace cgov::cli
