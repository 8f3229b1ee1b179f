// The daemon's log as operators read it (issue 48): every line one event with its level, in
// the text, logfmt and json formats; --log.level drops what is below it; under systemd (stderr
// is the journal's stream) every line carries the journal's priority. Also what /metrics says
// of the daemon itself: each collector's duration, the build's revision and date.
#include <signal.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

// A daemon on the fake driver with --listen, through a reload and a stop; its stderr.
RunResult DaemonLog(const std::vector<std::string>& extra, const std::string& shell_prefix = "") {
  TempDir dir;
  const int port = FreePort();
  std::vector<std::string> argv = FakeDaemonArgv(dir, port);
  argv.insert(argv.end(), extra.begin(), extra.end());
  const Env env = {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}};
  Started daemon;
  if (shell_prefix.empty()) {
    daemon = StartProgram(argv, env);
  } else {
    std::string command = shell_prefix + " exec";
    for (const std::string& a : argv) command += " '" + a + "'";
    daemon = StartProgram({"/bin/bash", "-c", command}, env);
  }
  EXPECT_TRUE(WaitFor(TicksTaken(port, 3), 20));
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  EXPECT_NE(metrics.find("cgov_collector_duration_seconds{collector=\"nvml\""), std::string::npos)
      << metrics.substr(0, 2000);
  EXPECT_NE(metrics.find("cgov_collector_duration_seconds{collector=\"history_db\""),
            std::string::npos);
  EXPECT_NE(metrics.find("cgov_collector_duration_seconds{collector=\"metrics\""),
            std::string::npos);
  EXPECT_TRUE(std::regex_search(metrics, std::regex("cgov_build_info\\{version=\"0\\.1\\.0\","
                                                    "revision=\"([0-9a-f]{40}|unknown)\","
                                                    "build_date=\"[0-9TZ:-]+|unknown\"")))
      << metrics.substr(metrics.find("cgov_build_info"), 300);
  kill(daemon.pid, SIGHUP);
  ::usleep(400 * 1000);
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 30);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  return stopped;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(LoggingE2E, EveryTextLineCarriesItsLevel) {
  RunResult r = DaemonLog({});
  const std::vector<std::string> lines = Lines(r.err);
  ASSERT_GE(lines.size(), 4u) << r.err;  // serving, recording, SIGHUP, stopped
  const std::regex leveled("cgov daemon: (debug|info|warning|error): .+");
  for (const std::string& line : lines) {
    EXPECT_TRUE(std::regex_match(line, leveled)) << line;
  }
  EXPECT_NE(r.err.find("cgov daemon: info: recording 8 GPU(s)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cgov daemon: info: SIGHUP: "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(": tick 1:"), std::string::npos) << "no tick lines unless asked";
}

// --log-ticks: a line a tick with every GPU's phase (issue 49), as gpu-usage-audit's daemon.
TEST(LoggingE2E, LogTicksSaysEachGpusPhaseEveryTick) {
  RunResult r = DaemonLog({"--log-ticks"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m,
                                std::regex("cgov daemon: info: tick 1: (GPU \\d+=\\w+( \\d+%)?( "
                                           "\\([^)]*\\))? ?){8}; \\d of 8 idle")))
      << r.err;
  EXPECT_NE(r.err.find("tick 3:"), std::string::npos) << r.err;
}

TEST(LoggingE2E, LogfmtAtWarnLeavesInfoOut) {
  // Bound to loopback (no warning of an open /metrics): the only event at warn or above is the
  // reload's, of a catalog that no longer parses.
  TempDir dir;
  const int port = FreePort();
  const std::string catalog = dir / "prices.json";
  WriteFile(catalog, ReadFile(std::string(CGOV_SOURCE_DIR) + "/data/prices.json"));
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "200ms",
                    "--nvml-lib", FakeNvml("full"), "--listen", "127.0.0.1:" + std::to_string(port),
                    "--price-catalog", catalog, "--log.format", "logfmt", "--log.level", "warn"},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}});
  ASSERT_TRUE(WaitFor(TicksTaken(port, 2), 20));
  WriteFile(catalog, "{ not json");
  kill(daemon.pid, SIGHUP);  // keeps the catalog in use: a warning
  ASSERT_TRUE(WaitFor(TicksTaken(port, 5), 20));
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 30);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  const std::vector<std::string> lines = Lines(stopped.err);
  ASSERT_EQ(lines.size(), 1u) << stopped.err;
  EXPECT_TRUE(std::regex_match(lines[0],
                               std::regex("ts=\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z level=warn "
                                          "msg=\"SIGHUP: keeping the price catalog in use: .*\"")))
      << lines[0];
}

TEST(LoggingE2E, JsonLinesParseAndTheJournalGetsPriorities) {
  RunResult as_json = DaemonLog({"--log.format", "json"});
  const std::vector<std::string> lines = Lines(as_json.err);
  ASSERT_GE(lines.size(), 4u) << as_json.err;
  for (const std::string& line : lines) {
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(event.is_object()) << line;
    EXPECT_TRUE(event["level"] == "info" || event["level"] == "warn") << line;
    EXPECT_TRUE(event["ts"].is_string() && event["msg"].is_string()) << line;
  }
  // systemd gives the service's stderr as a stream and names it in JOURNAL_STREAM (dev:inode):
  // here a file stands for it.
  TempDir dir;
  const std::string stream = dir / "journal";
  RunResult journal = DaemonLog(
      {}, "exec 2>'" + stream + "'; export JOURNAL_STREAM=$(stat -L -c %d:%i '" + stream + "');");
  const std::vector<std::string> journal_lines = Lines(ReadFile(stream));
  ASSERT_GE(journal_lines.size(), 4u);
  for (const std::string& line : journal_lines) {
    EXPECT_TRUE(std::regex_match(line, std::regex("<[3467]>cgov daemon: \\w+: .+"))) << line;
  }
  EXPECT_TRUE(std::regex_search(ReadFile(stream), std::regex("<6>cgov daemon: info: recording")));
}

}  // namespace
}  // namespace cgov::e2e
