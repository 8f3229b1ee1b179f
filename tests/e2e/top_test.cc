// `cgov top` (issue 49) as a person runs it: in a real terminal (tmux: send-keys, capture-pane)
// on a daemon's database, its rows, the idle-held list, sorting, filtering, a resize to 80x24
// and a clean exit on q and on Ctrl-C; and `--once --format json` agreeing with `cgov report`
// for the same day.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

constexpr char kTmux[] = "/usr/bin/tmux";

// Display columns of UTF-8 text (each code point one column, as cgov's glyphs are).
size_t TextWidthOf(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Ten-second ticks: the figures are the same kind, and the sanitizer tree writes it in seconds
// rather than the minute a 1-second 2-day week takes there.
std::string DemoDb() { return SharedDemoDb({"--duration", "2d", "--interval", "10s"}); }

TEST(TopE2E, OnceJsonAgreesWithTheReportForTheSameDay) {
  const std::string db = DemoDb();
  RunResult top = RunProgram({CgovBinary(), "top", "--db", db, "--once", "--format", "json"}, {});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const json t = json::parse(top.out);
  const std::string day = t["today"]["since"];
  RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--since", day, "--format",
                                 "json", "--idle-held-min", "1m"},
                                {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json r = json::parse(report.out);
  EXPECT_EQ(r["window"]["since"], day);
  EXPECT_EQ(t["today"]["idle_gpu_seconds"], r["waste"]["idle_gpu_seconds"]);
  EXPECT_EQ(t["today"]["idle_cost_usd"], r["waste"]["idle_cost_usd"]);
  EXPECT_GT(t["today"]["idle_cost_usd"].get<double>(), 0);
  // Every GPU's price is the report's; the box's cost per hour their sum.
  double sum = 0;
  ASSERT_EQ(t["gpus"].size(), r["gpus"].size());
  for (const json& g : t["gpus"]) sum += g["price_per_hour_usd"].get<double>();
  EXPECT_NEAR(t["now"]["cost_per_hour_usd"].get<double>(), sum, 0.01);
  // The idle-held holder now is the report's ongoing session, with its dollars today.
  ASSERT_EQ(t["idle_held_now"].size(), 1u) << t["idle_held_now"].dump();
  const json& now = t["idle_held_now"][0];
  EXPECT_EQ(now["user"], "bob");
  EXPECT_EQ(now["kind"], "notebook");
  bool found = false;
  for (const json& s : r["idle_held_sessions"]["sessions"]) {
    if (s["ongoing"] == true && s["pid"] == now["pid"]) {
      found = true;
      EXPECT_EQ(s["idle_held_cost_usd"], now["idle_held_cost_today_usd"]);
    }
  }
  EXPECT_TRUE(found) << r["idle_held_sessions"].dump().substr(0, 800);
}

// The idle-held list's policy column: with `--policy FILE` what that file would do to each
// process, read from the host's /proc and /etc as the daemon reads them; what the daemon's own
// policy recorded for a process today wins over it.
TEST(TopE2E, IdleHeldRowsCarryThePolicysVerdict) {
  TempDir dir;
  const std::string db = dir / "h.db";
  std::filesystem::copy_file(DemoDb(), db);
  RunResult plain = RunProgram({CgovBinary(), "top", "--db", db, "--once", "--format", "json"}, {});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const json before = json::parse(plain.out);
  ASSERT_EQ(before["idle_held_now"].size(), 1u);
  EXPECT_TRUE(before["idle_held_now"][0]["policy"].is_null()) << "no policy, no verdict";
  const std::string pid = std::to_string(before["idle_held_now"][0]["pid"].get<int>());
  const double idle_s = before["idle_held_now"][0]["idle_seconds"];
  // The host as the policy reads it: bob's process (its stat and status from the shared-box
  // fixture's jupyter-lab, under the demo's pid) and the fixture's /etc/passwd.
  const std::string root = dir / "host";
  std::filesystem::create_directories(root + "/proc/" + pid);
  std::filesystem::create_directories(root + "/etc");
  std::filesystem::copy_file(Fixture("proc/shared-box/etc/passwd"), root + "/etc/passwd");
  std::string stat = ReadFile(Fixture("proc/shared-box/proc/42000/stat"));
  WriteFile(root + "/proc/" + pid + "/stat", pid + stat.substr(stat.find(' ')));
  const std::string status = ReadFile(Fixture("proc/shared-box/proc/42000/status"));
  auto verdict = [&](const std::string& policy, const std::string& uids = "") {
    std::string s = status;
    if (!uids.empty())
      s.replace(s.find("Uid:"), s.find('\n', s.find("Uid:")) - s.find("Uid:"), "Uid:\t" + uids);
    WriteFile(root + "/proc/" + pid + "/status", s);
    WriteFile(dir / "policy.toml", policy);
    RunResult r = RunProgram({CgovBinary(), "top", "--db", db, "--once", "--format", "json",
                              "--policy", dir / "policy.toml", "--host-root", root},
                             {});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return std::string();
    const json p = json::parse(r.out)["idle_held_now"][0]["policy"];
    return p.is_string() ? p.get<std::string>() : std::string("null");
  };
  const std::string bob_30d =
      "[[policy]]\nname = \"notebooks\"\nidle_held_for = \"30d\"\nusers = [\"bob\"]\n";
  const std::string left = verdict(bob_30d);
  EXPECT_TRUE(left.starts_with("notebooks in ")) << left;
  EXPECT_GT(idle_s, 60) << "the demo's session has been idle-held a while";
  EXPECT_EQ(verdict("[[policy]]\nname = \"nb\"\nidle_held_for = \"1s\"\nusers = [\"bob\"]\n"),
            "nb: due");
  EXPECT_EQ(verdict("[[policy]]\nname = \"nb\"\nidle_held_for = \"1s\"\nusers = [\"carol\"]\n"),
            "no policy");
  EXPECT_EQ(verdict(bob_30d, "1002\t0\t0\t0"), "never: root's rights");
  // The terminal shows it in its own column.
  RunResult text = RunProgram({CgovBinary(), "top", "--db", db, "--once", "--width", "160",
                               "--policy", dir / "policy.toml", "--host-root", root},
                              {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("policy"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("never: root's rights"), std::string::npos) << text.out;

  // What the daemon's policy did to the process today comes first; a step for another program
  // that had the same pid earlier is not this process's.
  const std::string command = before["idle_held_now"][0]["command"];
  {
    auto w = SqliteDb::Open(db, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Exec("INSERT INTO policy_action VALUES ((SELECT max(ts_ms) FROM tick) - "
                           "60000, 'stale', 'would_stop', 1, " +
                           pid + ", 'bob', '" + command + "', 14400000, 'dry run', 'uid 1002')")
                    .ok());
    ASSERT_TRUE((*w)->Exec("INSERT INTO policy_action VALUES ((SELECT max(ts_ms) FROM tick), "
                           "'other', 'sigterm', 1, " +
                           pid + ", 'bob', 'other-program', 14400000, 'sent', 'uid 1002')")
                    .ok());
  }
  const std::string step = verdict(bob_30d, "1002\t1002\t1002\t1002");
  EXPECT_TRUE(step.starts_with("would_stop ") && step.ends_with(" (stale)")) << step;
  // A --notify ladder's step (issue 63) is followed by what the policy will do: T2, then T3.
  {
    auto w = SqliteDb::Open(db, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Exec("INSERT INTO policy_action VALUES ((SELECT max(ts_ms) FROM tick), "
                           "'idle-notebooks', 'told_lead', 1, " +
                           pid + ", 'bob', '" + command + "', 7200000, 'notice to people', '')")
                    .ok());
  }
  const std::string ladder = verdict(bob_30d);
  EXPECT_TRUE(ladder.starts_with("told_lead ")) << ladder;
  EXPECT_NE(ladder.find(" (idle-notebooks) · notebooks in "), std::string::npos) << ladder;
  RunResult bad =
      RunProgram({CgovBinary(), "top", "--db", db, "--once", "--policy", dir / "none.toml"}, {});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("none.toml"), std::string::npos) << bad.err;
}

// A fleet: two daemons on the fake driver scraped every second by the real Prometheus;
// `cgov top --prometheus` shows a row per node and the users wasting most today, its day's
// figures those of `cgov report --prometheus` for the same window.
TEST(TopE2E, AFleetFromPrometheusHasARowPerNodeAndTheReportsDay) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0) << "Debian's prometheus package is required";
  TempDir dir;
  const std::vector<std::string> nodes = {"node-a", "node-b"};
  std::vector<int> ports;
  std::string targets;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ports.push_back(FreePort());
    targets += (i ? ", " : "") + std::string("\"127.0.0.1:") + std::to_string(ports[i]) + "\"";
  }
  const int prom_port = FreePort();
  const std::string url = "http://127.0.0.1:" + std::to_string(prom_port);
  // Ticks four times a scrape interval: "GPUs idle-held now" is the counters' growth between two
  // scrapes, off by at most a tick's credit each (a tick is credited when the next arrives).
  WriteFile(dir / "prometheus.yml",
            "global:\n  scrape_interval: 2s\nscrape_configs:\n"
            "  - job_name: cgov\n    static_configs:\n      - targets: [" +
                targets + "]\n");
  Started prometheus = StartProgram(
      {kPrometheus, "--config.file=" + (dir / "prometheus.yml"),
       "--storage.tsdb.path=" + (dir / "tsdb"),
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port), "--log.level=warn"},
      {});
  std::vector<Started> daemons;
  for (size_t i = 0; i < nodes.size(); ++i) {
    daemons.push_back(
        StartProgram({CgovBinary(), "daemon", "--db", dir / (nodes[i] + ".db"), "--interval",
                      "500ms", "--nvml-lib", FakeNvml("full"), "--host-root",
                      Fixture("proc/shared-box"), "--hostname", nodes[i], "--listen",
                      "127.0.0.1:" + std::to_string(ports[i]), "--price-per-gpu-hour", "2.00"},
                     {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}}));
  }
  auto top = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {CgovBinary(), "top", "--prometheus", url, "--once"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunProgram(argv, {}, 60);
  };
  json t;
  auto bob_of = [](const json& frame) {
    for (const json& w : frame["wasters"]) {
      if (w["user"] == "bob") return w;
    }
    return json();
  };
  // Both nodes' GPUs with a phase now and bob idle-holding on each (bounded: 60 s).
  ASSERT_TRUE(WaitFor(
      [&] {
        RunResult r = top({"--format", "json"});
        if (r.exit_code != 0) return false;
        t = json::parse(r.out);
        if (t["nodes"].size() != 2 || t["wasters"].empty()) return false;
        for (const json& n : t["nodes"]) {
          if (n["phases"].size() != 4 || n["phases"][1].is_null()) return false;
        }
        return bob_of(t).is_object() && bob_of(t)["hosts_now"].size() == 2;
      },
      60))
      << t.dump();
  EXPECT_EQ(t["source"], "prometheus");
  EXPECT_EQ(t["nodes"][0]["host"], "node-a");
  EXPECT_EQ(t["nodes"][1]["host"], "node-b");
  for (const json& n : t["nodes"]) {
    EXPECT_EQ(n["phases"][0], "productive") << n.dump();
    EXPECT_EQ(n["phases"][1], "idle_held") << n.dump();
    EXPECT_NEAR(n["cost_per_hour_usd"].get<double>(), 8.0, 1e-9) << "4 GPUs at $2.00";
    EXPECT_GT(n["idle_cost_per_hour_usd"].get<double>(), 0);
    EXPECT_LT(n["sample_age_seconds"].get<double>(), 30);
  }
  // bob's notebook holds GPU 1 of each node, idle: two GPUs now (each node's figure off by at
  // most a tick in a scrape interval: 0.25).
  EXPECT_NEAR(bob_of(t)["idle_held_gpus_now"].get<double>(), 2.0, 0.55) << t["wasters"].dump();
  RunResult text = top({"--width", "100"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("fleet " + url + " · 2 node(s) · 8 GPU(s)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Top wasters today"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("node-a, node-b"), std::string::npos) << text.out;

  // The day: stopped daemons leave Prometheus's data as it is; top and the report then read
  // the same window and agree to the cent.
  for (Started& d : daemons) {
    kill(d.pid, SIGTERM);
    WaitProgram(d, 15);
  }
  sleep(2);
  RunResult after = top({"--format", "json"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  t = json::parse(after.out);
  RunResult report =
      RunProgram({CgovBinary(), "report", "--prometheus", url, "--since", t["today"]["since"],
                  "--until", t["at"], "--format", "json", "--idle-held-min", "1m"},
                 {}, 60);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json r = json::parse(report.out);
  EXPECT_EQ(SchemaErrors("report.schema.json", r), "");
  EXPECT_EQ(t["today"]["idle_gpu_seconds"], r["waste"]["idle_gpu_seconds"]);
  EXPECT_EQ(t["today"]["idle_cost_usd"], r["waste"]["idle_cost_usd"]);
  EXPECT_GT(t["today"]["idle_cost_usd"].get<double>(), 0);
  ASSERT_EQ(r["idle_by_host"].size(), 2u);
  double hosts_cost = 0;
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(r["idle_by_host"][i]["host"], t["nodes"][i]["host"]);
    EXPECT_EQ(r["idle_by_host"][i]["idle_gpu_seconds"], t["nodes"][i]["idle_gpu_seconds_today"]);
    EXPECT_EQ(r["idle_by_host"][i]["idle_cost_usd"], t["nodes"][i]["idle_cost_today_usd"]);
    hosts_cost += r["idle_by_host"][i]["idle_cost_usd"].get<double>();
  }
  EXPECT_NEAR(hosts_cost, r["waste"]["idle_cost_usd"].get<double>(), 1e-9);
  bool bob = false;
  for (const json& w : r["who"]) {
    if (w["key"] != "bob") continue;
    bob = true;
    EXPECT_EQ(w["idle_held_cost_usd"], bob_of(t)["idle_held_cost_today_usd"]);
    EXPECT_EQ(w["idle_held_seconds"], bob_of(t)["idle_held_gpu_seconds_today"]);
  }
  EXPECT_TRUE(bob) << r["who"].dump().substr(0, 600);
  RunResult both = top({"--db", dir / "node-a.db"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  kill(prometheus.pid, SIGTERM);
  WaitProgram(prometheus, 10);
}

// A tmux server of the test's own (its socket named by the pid), removed at the end.
class Tmux {
 public:
  Tmux() : socket_("cgov-top-" + std::to_string(::getpid())) {}
  ~Tmux() { Run({"kill-server"}); }
  RunResult Run(std::vector<std::string> args) {
    std::vector<std::string> argv = {kTmux, "-L", socket_, "-f", "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {{"TERM", "xterm-256color"}}, 10);
  }
  // The session Screen and Shows read.
  void Watch(std::string session) { session_ = std::move(session); }
  std::string Screen() { return Run({"capture-pane", "-p", "-t", session_}).out; }
  bool Shows(const std::string& text, double timeout_s = 10) {
    return WaitFor([&] { return Screen().find(text) != std::string::npos; }, timeout_s);
  }

 private:
  std::string socket_;
  std::string session_ = "top";
};

TEST(TopE2E, ATerminalSessionSortsFiltersResizesAndExitsClean) {
  if (access(kTmux, X_OK) != 0) GTEST_SKIP() << "no tmux here";
  const std::string db = DemoDb();
  Tmux tmux;
  const std::string command =
      "'" + CgovBinary() + "' top --db '" + db + "' --interval 200ms; echo EXITED $?; sleep 60";
  ASSERT_EQ(
      tmux.Run({"new-session", "-d", "-s", "top", "-x", "120", "-y", "40", command}).exit_code, 0);
  ASSERT_TRUE(tmux.Shows("cgov top — demo-box")) << tmux.Screen();
  std::string screen = tmux.Screen();
  EXPECT_NE(screen.find("Idle-held now: 1"), std::string::npos) << screen;
  EXPECT_NE(screen.find("ipykernel"), std::string::npos) << screen;
  EXPECT_NE(screen.find("erin · serving"), std::string::npos) << screen;

  tmux.Run({"send-keys", "-t", "top", "s"});
  ASSERT_TRUE(tmux.Shows("sort waste")) << tmux.Screen();
  tmux.Run({"send-keys", "-t", "top", "f", "b", "o", "b", "Enter"});
  ASSERT_TRUE(tmux.Shows("filter \"bob\"")) << tmux.Screen();
  screen = tmux.Screen();
  EXPECT_EQ(screen.find("erin"), std::string::npos) << screen;
  EXPECT_NE(screen.find("bob · notebooks"), std::string::npos) << screen;

  tmux.Run({"resize-window", "-t", "top", "-x", "80", "-y", "24"});
  ASSERT_TRUE(WaitFor(
      [&] {
        std::istringstream lines(tmux.Screen());
        size_t widest = 0;
        for (std::string line; std::getline(lines, line);)
          widest = std::max(widest, TextWidthOf(line));
        return widest <= 80 && tmux.Screen().find("cgov top") != std::string::npos;
      },
      10))
      << tmux.Screen();

  tmux.Run({"send-keys", "-t", "top", "q"});
  ASSERT_TRUE(tmux.Shows("EXITED 0")) << tmux.Screen();
  EXPECT_EQ(tmux.Screen().find("cgov top —"), std::string::npos)
      << "the alternate screen is left: the shell's screen is back";

  // Ctrl-C ends it as cleanly. The second session is made before the first is killed: killing
  // a server's last session ends the server, and a new-session racing its exit fails.
  RunResult second =
      tmux.Run({"new-session", "-d", "-s", "top2", "-x", "100", "-y", "30", command});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  tmux.Run({"kill-session", "-t", "top"});
  tmux.Watch("top2");
  ASSERT_TRUE(tmux.Shows("cgov top — demo-box")) << tmux.Screen();
  tmux.Run({"send-keys", "-t", "top2", "C-c"});
  ASSERT_TRUE(tmux.Shows("EXITED 0")) << tmux.Screen();
}

// No daemon's database: cgov top samples the fake driver and the fixture's /proc itself, into a
// private database it removes when it exits.
TEST(TopE2E, WithoutADaemonItSamplesTheBoxItself) {
  TempDir dir;
  RunResult r =
      RunProgram({CgovBinary(), "top", "--once", "--format", "json", "--interval", "200ms",
                  "--nvml-lib", FakeNvml("full"), "--host-root", Fixture("proc/shared-box")},
                 {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")},
                  {"STATE_DIRECTORY", dir / "none"},
                  {"TMPDIR", dir.path()}},
                 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json t = json::parse(r.out);
  ASSERT_EQ(t["gpus"].size(), 4u);
  EXPECT_EQ(t["gpus"][1]["phase"], "idle_held");
  EXPECT_EQ(t["gpus"][1]["holders"][0]["user"], "bob");
  EXPECT_EQ(t["gpus"][0]["phase"], "productive");
  EXPECT_GE(t["gpus"][0]["util_history_pct"].size(), 2u);
  EXPECT_GT(t["now"]["idle_cost_per_hour_usd"].get<double>(), 0);
  EXPECT_NEAR(t["now"]["idle_share_pct"].get<double>(),
              100 * t["now"]["idle_cost_per_hour_usd"].get<double>() /
                  t["now"]["cost_per_hour_usd"].get<double>(),
              0.5);
  size_t left = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    left += e.path().filename().string().starts_with("cgov-top-");
  }
  EXPECT_EQ(left, 0u) << "the private database is removed";
  RunResult both =
      RunProgram({CgovBinary(), "top", "--once", "--live", "--db", dir / "x.db"}, {}, 10);
  EXPECT_EQ(both.exit_code, 2) << both.err;
}

// Issue 49's report KPI: idle GPU-hours by UTC day, in every view, adding up to the window's.
TEST(IdleByDayE2E, TheDaysAddUpToTheWindowsIdleTimeAndCost) {
  const std::string db = DemoDb();
  RunResult report =
      RunProgram({CgovBinary(), "report", "--db", db, "--since", "2d", "--format", "json"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json r = json::parse(report.out);
  ASSERT_EQ(r["idle_by_day"].size(), 2u) << r["idle_by_day"].dump();
  double seconds = 0;
  int64_t cents = 0;
  for (const json& d : r["idle_by_day"]) {
    seconds += d["idle_gpu_seconds"].get<double>();
    cents += Cents(d["idle_cost_usd"]);
  }
  EXPECT_NEAR(seconds, r["waste"]["idle_gpu_seconds"].get<double>(), 0.002);
  EXPECT_EQ(cents, Cents(r["waste"]["idle_cost_usd"]));
  EXPECT_EQ(r["idle_by_day"][0]["day"], "2026-11-23");
  RunResult text = RunProgram({CgovBinary(), "report", "--db", db, "--since", "2d"}, {});
  EXPECT_NE(text.out.find("Idle GPU-hours by day:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2026-11-24"), std::string::npos);
  RunResult html =
      RunProgram({CgovBinary(), "report", "--db", db, "--since", "2d", "--format", "html"}, {});
  EXPECT_NE(html.out.find("Idle GPU-hours by day (UTC)"), std::string::npos);
  EXPECT_NE(html.out.find("/idle_by_day/1/idle_cost_usd"), std::string::npos);
}

// Issue 49's report KPI: each GPU's time by utilization band (the rollups' version 3), in JSON
// and HTML, covering the time its phases cover and bounding its mean.
TEST(UtilHistogramE2E, EachGpusBandsCoverItsTimeAndBoundItsMean) {
  const std::string db = DemoDb();
  RunResult report =
      RunProgram({CgovBinary(), "report", "--db", db, "--since", "2d", "--format", "json"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const json r = json::parse(report.out);
  EXPECT_EQ(SchemaErrors("report.schema.json", r), "");
  ASSERT_FALSE(r["gpus"].empty());
  for (const json& g : r["gpus"]) {
    const json& h = g["util_histogram"];
    ASSERT_TRUE(h.is_object()) << g.dump();
    double total = 0, low = 0, high = 0;
    for (size_t b = 0; b < 10; ++b) {
      const double s = h["gpu_seconds"][b];
      total += s;
      low += s * 10.0 * static_cast<double>(b);
      high += s * (10.0 * static_cast<double>(b) + 10.0);
    }
    double phases = 0;
    for (const auto& [phase, seconds] : g["phase_seconds"].items()) {
      if (phase != "unknown") phases += seconds.get<double>();
    }
    EXPECT_NEAR(total, phases, 0.01) << "GPU " << g["index"];
    const double mean = g["mean_util_pct"];
    EXPECT_GE(mean, low / total - 1e-6) << "GPU " << g["index"];
    EXPECT_LE(mean, high / total + 1e-6) << "GPU " << g["index"];
  }
  // GPU 7 of the demo is never used: all its time in the first band.
  EXPECT_EQ(r["gpus"][7]["util_histogram"]["gpu_seconds"][0], 172800.0);
  RunResult html =
      RunProgram({CgovBinary(), "report", "--db", db, "--since", "2d", "--format", "html"}, {});
  EXPECT_NE(html.out.find("GPU-hours by utilization"), std::string::npos);
  EXPECT_NE(html.out.find("/gpus/7/util_histogram/gpu_seconds/0"), std::string::npos);
}

}  // namespace
}  // namespace cgov::e2e
