// End-to-end: what a person at a terminal sees. On a terminal (a pty, through util-linux's
// `script`) `cgov report` and `cgov run` print plain text, coloured unless NO_COLOR is set or
// TERM is dumb; piped, `cgov report` prints the same text without colour, and `cgov run` the
// Markdown that report.md holds.
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string Quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += (out.empty() ? "" : " ") + q + "'";
  }
  return out;
}

// `argv` run with a pty as its stdin, stdout and stderr; what the terminal showed.
RunResult OnTerminal(const std::vector<std::string>& argv, const Env& env) {
  return RunProgram({"/usr/bin/script", "-qec", Quoted(argv), "/dev/null"}, env, 120);
}

bool HasEscape(const std::string& s) { return s.find('\x1b') != std::string::npos; }

class TerminalOutputE2E : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    db_ = new TempDir;
    RunResult demo = RunProgram(
        {CgovBinary(), "demo", "--duration", "1d", "--interval", "60s", "--db", *db_ / "demo.db"},
        {}, 120);
    ASSERT_EQ(demo.exit_code, 0) << demo.err;
  }
  static void TearDownTestSuite() { delete db_; }
  void SetUp() override {
    if (access("/usr/bin/script", X_OK) != 0) GTEST_SKIP() << "util-linux's script is missing";
  }
  static std::vector<std::string> Report() {
    return {CgovBinary(), "report", "--db", *db_ / "demo.db", "--since", "1d"};
  }
  static TempDir* db_;
};
TempDir* TerminalOutputE2E::db_ = nullptr;

TEST_F(TerminalOutputE2E, ReportIsColouredPlainTextOnATerminal) {
  RunResult tty = OnTerminal(Report(), {{"TERM", "xterm"}, {"NO_COLOR", ""}});
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_TRUE(HasEscape(tty.out)) << tty.out;
  EXPECT_NE(tty.out.find("\x1b[1m■ Findings\x1b[0m"), std::string::npos) << tty.out;
  EXPECT_EQ(tty.out.find("### Findings"), std::string::npos);
  EXPECT_EQ(tty.out.find("**["), std::string::npos);

  for (const Env& plain :
       {Env{{"TERM", "xterm"}, {"NO_COLOR", "1"}}, Env{{"TERM", "dumb"}, {"NO_COLOR", ""}}}) {
    RunResult r = OnTerminal(Report(), plain);
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_FALSE(HasEscape(r.out)) << r.out;
    EXPECT_NE(r.out.find("■ Findings"), std::string::npos);
  }
  RunResult piped = RunProgram(Report(), {{"TERM", "xterm"}, {"NO_COLOR", ""}});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_FALSE(HasEscape(piped.out));
  EXPECT_NE(piped.out.find("■ Findings"), std::string::npos) << "text, the default";
  std::vector<std::string> md = Report();
  md.insert(md.end(), {"--format", "md"});
  RunResult markdown = OnTerminal(md, {{"TERM", "xterm"}, {"NO_COLOR", ""}});
  EXPECT_FALSE(HasEscape(markdown.out)) << "Markdown is never coloured";
  EXPECT_NE(markdown.out.find("### Findings"), std::string::npos);
}

TEST_F(TerminalOutputE2E, RunPrintsTextOnATerminalAndMarkdownToALog) {
  TempDir dir;
  auto run = [&](const std::string& out) {
    return std::vector<std::string>{CgovBinary(), "run",     "--nvml-lib", FakeNvml("full"),
                                    "--out",      dir / out, "--interval", "200ms",
                                    "--",         "sleep",   "1"};
  };
  const Env env = {
      {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8_fast")}, {"TERM", "xterm"}, {"NO_COLOR", ""}};
  RunResult tty = OnTerminal(run("tty"), env);
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("\x1b[1mcgov run · sleep 1\x1b[0m"), std::string::npos) << tty.out;
  EXPECT_EQ(tty.out.find("## cgov run"), std::string::npos);
  EXPECT_EQ(tty.out.find("| Metric"), std::string::npos);
  const std::string saved = ReadFile(dir / "tty/report.md");
  EXPECT_NE(saved.find("## cgov run · sleep 1"), std::string::npos) << "report.md stays Markdown";
  EXPECT_FALSE(HasEscape(saved));

  RunResult log = RunProgram(run("log"), env);
  ASSERT_EQ(log.exit_code, 0) << log.err;
  EXPECT_NE(log.err.find("## cgov run · sleep 1"), std::string::npos) << log.err;
  EXPECT_FALSE(HasEscape(log.err));
}

}  // namespace
}  // namespace cgov::e2e
