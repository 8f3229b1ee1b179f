// The exit-status contract (issue 17): 0 after --help, 2 for every usage error, from every
// subcommand, whatever the argument parser thinks (its own codes are 100 and up).
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

struct Case {
  std::vector<std::string> args;  // after `cgov`
  const char* what;
};

TEST(CliContract, EveryUsageErrorOfEverySubcommandExitsTwo) {
  TempDir dir;
  const std::string db = dir / "x.db";
  const std::vector<Case> cases = {
      // unknown flag
      {{"run", "--bogus", "--", "true"}, "run: unknown flag"},
      {{"daemon", "--db", db, "--bogus"}, "daemon: unknown flag"},
      {{"report", "--db", db, "--bogus"}, "report: unknown flag"},
      {{"demo", "--bogus"}, "demo: unknown flag"},
      {{"import", "gpu-usage-audit", db, "--db", db, "--bogus"}, "import: unknown flag"},
      {{"doctor", "--bogus"}, "doctor: unknown flag"},
      {{"prices", "--bogus"}, "prices: unknown flag"},
      // a flag without its value
      {{"run", "--out"}, "run: missing value"},
      {{"daemon", "--db"}, "daemon: missing value"},
      {{"report", "--db"}, "report: missing value"},
      {{"demo", "--gpus"}, "demo: missing value"},
      {{"import", "gpu-usage-audit", db, "--db"}, "import: missing value"},
      {{"doctor", "--nvml-lib"}, "doctor: missing value"},
      {{"prices", "--gpu"}, "prices: missing value"},
      // a bad value
      {{"run", "--interval", "soon", "--", "true"}, "run: bad duration"},
      {{"daemon", "--db", db, "--interval", "soon"}, "daemon: bad duration"},
      {{"report", "--db", db, "--format", "yaml"}, "report: bad format"},
      {{"demo", "--gpus", "0"}, "demo: out of range"},
      {{"demo", "--gpus", "many"}, "demo: not a number"},
      {{"prices", "--format", "yaml"}, "prices: bad format"},
      {{"report", "--db", db, "--idle-cost", "nobody"}, "report: bad idle policy"},
      {{"report", "--db", db, "--since", "2026-02-30"}, "report: a day February has not"},
      {{"report", "--db", db, "--since", "30m2h"}, "report: units out of order"},
      {{"demo", "--seed", "-1"}, "demo: a negative seed"},
      {{"demo", "--start", "2026-02-30", "--db", db}, "demo: a --start that is not a day"},
      // a required argument missing
      {{"daemon", "--db"}, "daemon: --db without its path"},
      {{"daemon", "--log.level", "loud", "--db", db}, "daemon: a --log.level that is not one"},
      {{"report"}, "report: no source"},
      {{"import"}, "import: no subcommand"},
      {{"import", "gpu-usage-audit"}, "import: no source"},
      {{"import", "gpu-usage-audit", db}, "import: no --db"},
      {{"run"}, "run: no command"},
      // not a subcommand at all
      {{"reprot"}, "a typo of a subcommand"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {CgovBinary()};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    // No default database here: `report` has no source and `daemon` none to create.
    RunResult r = RunProgram(argv, {{"STATE_DIRECTORY", "/nonexistent/cgov"}}, 20);
    EXPECT_EQ(r.exit_code, 2) << c.what << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << c.what << ": says why on stderr";
  }
  for (const char* command : {"run", "daemon", "report", "demo", "import", "doctor", "prices"}) {
    RunResult help = RunProgram({CgovBinary(), command, "--help"}, {}, 20);
    EXPECT_EQ(help.exit_code, 0) << command << ": --help";
    EXPECT_NE(help.out.find("Usage:"), std::string::npos) << command;
  }
}

// A failed import names the source and what is wrong with it, and creates nothing.
TEST(CliContract, AFailedImportLeavesNoDatabaseBehind) {
  TempDir dir;
  WriteFile(dir / "notes.txt", "not a database\n");
  RunResult r = RunProgram(
      {CgovBinary(), "import", "gpu-usage-audit", dir / "notes.txt", "--db", dir / "h.db"}, {}, 20);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(dir / "notes.txt" + ": not a SQLite database"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("SELECT"), std::string::npos) << "no internal SQL: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "h.db")) << "no empty database left behind";
  // A SQLite file that is not gpu-usage-audit's: refused, and the new database removed too.
  RunResult demo = RunProgram(
      {CgovBinary(), "demo", "--db", dir / "other.db", "--duration", "1h", "--interval", "10s"}, {},
      30);
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  RunResult wrong = RunProgram(
      {CgovBinary(), "import", "gpu-usage-audit", dir / "other.db", "--db", dir / "h2.db"}, {}, 20);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "h2.db")) << wrong.err;
}

// Issue 48's polish: every --help fits 100 columns; a usage error says which command, what, and
// a hint (the nearest option to a mistyped one); colour can be forced or refused.
TEST(CliContract, HelpFitsOneHundredColumnsAndErrorsSayTheCommandAndAHint) {
  for (const char* command :
       {"run", "compare", "runs", "ci", "daemon", "report", "demo", "import", "doctor", "prices"}) {
    RunResult help = RunProgram({CgovBinary(), command, "--help"}, {}, 20);
    ASSERT_EQ(help.exit_code, 0) << command;
    std::istringstream lines(help.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 100u) << command << ": " << line;
    }
  }
  RunResult typo = RunProgram({CgovBinary(), "report", "--fomat", "json"}, {}, 20);
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_EQ(typo.err,
            "cgov report: unknown option --fomat\n"
            "did you mean --format? `cgov report --help` lists the options\n");
  RunResult unit = RunProgram({CgovBinary(), "run", "--unit", "tokenz", "--", "true"}, {}, 20);
  EXPECT_EQ(unit.exit_code, 2);
  EXPECT_TRUE(unit.err.starts_with("cgov run: --unit: tokenz not in {samples,tokens,steps}\n"))
      << unit.err;
  RunResult spaced = RunProgram({CgovBinary(), "report", "--since", "7", "days"}, {}, 20);
  EXPECT_EQ(spaced.exit_code, 2);
  EXPECT_TRUE(
      spaced.err.starts_with("cgov report: unexpected argument 'days'\nan option takes one value: "
                             "quote a value that has spaces"))
      << spaced.err;
}

TEST(CliContract, ColourIsForcedOrRefusedByFlagAndEnvironment) {
  const std::string db = SharedDemoDb({"--duration", "1d", "--interval", "10m"});
  auto report = [&](std::vector<std::string> extra, const Env& env) {
    std::vector<std::string> argv = {CgovBinary(), "report", "--db", db, "--since", "1d"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunResult r = RunProgram(argv, env, 30);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.find("\x1b[") != std::string::npos;
  };
  EXPECT_FALSE(report({}, {}));  // a pipe: plain
  EXPECT_TRUE(report({"--color", "always"}, {}));
  EXPECT_TRUE(report({}, {{"CLICOLOR_FORCE", "1"}}));
  EXPECT_FALSE(report({}, {{"CLICOLOR_FORCE", "0"}}));
  EXPECT_FALSE(report({}, {{"CLICOLOR_FORCE", "1"}, {"NO_COLOR", "1"}}));
  EXPECT_FALSE(report({"--color", "never"}, {{"CLICOLOR_FORCE", "1"}}));
  EXPECT_TRUE(report({"--color", "always"}, {{"NO_COLOR", "1"}}));  // the flag wins
  RunResult bad = RunProgram({CgovBinary(), "report", "--db", db, "--color", "sometimes"}, {}, 20);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace cgov::e2e
