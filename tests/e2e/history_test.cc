// End-to-end: cgov daemon against the fake driver, cgov report, cgov demo, cgov import.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

Env SharedBox() { return {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}}; }

Started StartDaemon(const std::string& db, const Env& env = SharedBox()) {
  return StartProgram({CgovBinary(), "daemon", "--db", db, "--interval", "1s", "--nvml-lib",
                       FakeNvml("full"), "--host-root", Fixture("proc/shared-box")},
                      env);
}

const json& GpuByIndex(const json& report, int index) {
  for (const json& g : report["gpus"]) {
    if (g["index"] == index) return g;
  }
  static const json none = json::object();
  ADD_FAILURE() << "no GPU " << index;
  return none;
}

std::map<std::string, json> WhoByKey(const json& report) {
  std::map<std::string, json> out;
  for (const json& w : report["who"]) out[w["key"].get<std::string>()] = w;
  return out;
}

TEST(HistoryE2E, DaemonRecordsTheScenarioAndTheReportNamesPhasesHoldersAndSessions) {
  TempDir dir;
  const std::string db = dir / "h.db";
  Started daemon = StartDaemon(db);
  // The first tick is committed at once; the next ones a batch later (--commit-every 10s).
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 1; }, 15));
  // A report while the daemon writes.
  RunResult live = RunProgram({CgovBinary(), "report", "--db", db}, {});
  EXPECT_EQ(live.exit_code, 0) << live.err;
  EXPECT_NE(live.out.find("Where the GPU-time went"), std::string::npos) << live.out;
  // A second daemon on the same database is refused, and the first keeps going.
  RunResult second =
      RunProgram({CgovBinary(), "daemon", "--db", db, "--nvml-lib", FakeNvml("full")}, SharedBox());
  EXPECT_EQ(second.exit_code, 1);
  EXPECT_NE(second.err.find("another cgov is writing"), std::string::npos) << second.err;
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 4; }, 30))
      << "the daemon commits a batch within --commit-every (10 s) and a tick";
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("stopped after"), std::string::npos) << stopped.err;

  json r = ReportJson({"--db", db, "--idle-held-min", "2s"});
  EXPECT_EQ(r["schema_version"], 1);
  EXPECT_EQ(r["gpu_count"], 4);
  EXPECT_EQ(GpuByIndex(r, 0)["phase_share_pct"]["productive"], 100.0);
  EXPECT_EQ(GpuByIndex(r, 1)["phase_share_pct"]["idle_held"], 100.0);
  EXPECT_EQ(GpuByIndex(r, 2)["phase_share_pct"]["truly_idle"], 100.0);
  EXPECT_GT(GpuByIndex(r, 2)["graphics_only_seconds"].get<double>(), 0) << "Xorg noted";
  EXPECT_EQ(GpuByIndex(r, 3)["phase_share_pct"]["underutilized"], 100.0);
  std::map<std::string, json> who = WhoByKey(r);
  for (const char* user : {"alice", "bob", "carol", "gdm", ""}) {
    EXPECT_TRUE(who.count(user)) << "no row for '" << user << "'\n" << r["who"].dump(1);
  }
  EXPECT_EQ(who["bob"]["idle_held_seconds"], who["bob"]["held_seconds"]);
  EXPECT_EQ(who["alice"]["idle_held_seconds"], 0.0);
  EXPECT_EQ(who["gdm"]["attributed_seconds"]["truly_idle"], 0.0) << "graphics is not charged";
  // Sessions: bob's notebook and the process of no known user, both still holding GPU 1.
  const json& sessions = r["idle_held_sessions"]["sessions"];
  ASSERT_EQ(sessions.size(), 2u) << sessions.dump(1);
  std::set<int> pids;
  for (const json& s : sessions) {
    EXPECT_EQ(s["gpu_index"], 1);
    EXPECT_TRUE(s["ongoing"].get<bool>());
    pids.insert(s["pid"].get<int>());
  }
  EXPECT_EQ(pids, (std::set<int>{42000, 49999}));

  // Issue 61: the plan of this box is known. A100 80GB x 4: alice's 70 GB at 80 % stays on GPU 0;
  // carol's 10 GB at 40 % (GPU 3) takes bob's 8 GB at 2 % (GPU 1); GPU 2 (Xorg only) carries
  // nothing. Two GPUs freed. bob fits 1g.10gb (9,728 MiB usable); alice fits no profile under the
  // whole GPU.
  json plan = ReportJson({"--db", db, "--plan"});
  ASSERT_TRUE(plan.contains("plan")) << plan.dump(1).substr(0, 2000);
  const json& p = plan["plan"];
  EXPECT_EQ(p["gpus_now"], 4);
  EXPECT_EQ(p["gpus_planned"], 2);
  ASSERT_EQ(p["groups"].size(), 1u) << p.dump(1);
  const json& g = p["groups"][0];
  EXPECT_EQ(g["model"], "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g["freed"], json::array({"1", "2"})) << g.dump(1);
  EXPECT_EQ(g["sizing"], "p99");
  ASSERT_EQ(g["bins"].size(), 2u);
  EXPECT_EQ(g["bins"][0]["takes"], json::array({"0"}));
  EXPECT_EQ(g["bins"][1]["takes"], json::array({"3", "1"}));
  EXPECT_EQ(g["bins"][1]["peak_memory_mib"].get<int>(), 10'000 + 8'000 + 200);
  EXPECT_EQ(g["bins"][1]["compute_over_pct"], 0.0);
  std::map<std::string, json> loads;
  for (const json& w : p["workloads"]) loads[w["name"].get<std::string>()] = w;
  EXPECT_EQ(loads["bob"]["profile"], "1g.10gb") << p["workloads"].dump(1);
  EXPECT_EQ(loads["bob"]["memory_peak_mib"], 8000);
  EXPECT_EQ(loads["bob"]["headroom_mib"], 9728 - 8000);
  // carol's compute needs 4g.40gb (half the GPU's price), but an L40S holds it for less: the
  // catalog's $1.17 against the A100's $2.79 (42 %), 40 % x 312 / 362 TFLOPS = 34.5 % of it.
  EXPECT_EQ(loads["carol"]["profile"], "L40S 48GB");
  EXPECT_EQ(loads["carol"]["profile_kind"], "gpu");
  EXPECT_EQ(loads["bob"]["profile_kind"], "mig") << "a T4 (19 % of the price) costs more than 1/8";
  EXPECT_EQ(loads["alice"]["profile"], nullptr);
  EXPECT_NE(loads["alice"]["why"].get<std::string>().find("no profile"), std::string::npos);
  // The plan's dollars are savings: levers of the combined savings, within the waste, and the
  // groups' and workloads' parts add up to their lever's.
  ASSERT_TRUE(plan["cost"]["priced"].get<bool>());
  EXPECT_GT(Cents(p["consolidate_usd"]), 0);
  EXPECT_GT(Cents(p["right_size_usd"]), 0);
  EXPECT_LE(Cents(p["consolidate_usd"]), Cents(plan["cost"]["waste_usd"]));
  EXPECT_LE(Cents(p["right_size_usd"]), Cents(plan["cost"]["waste_usd"]));
  EXPECT_EQ(Cents(g["usd"]), Cents(p["consolidate_usd"]));
  int64_t workload_cents = 0;
  for (const json& w : p["workloads"]) workload_cents += Cents(w["usd"]);
  EXPECT_EQ(workload_cents, Cents(p["right_size_usd"]));
  std::set<std::string> levers;
  for (const json& l : plan["savings"]["levers"]) levers.insert(l["finding"].get<std::string>());
  EXPECT_TRUE(levers.count("consolidate_gpus") && levers.count("right_size")) << plan["savings"];
  EXPECT_LE(Cents(plan["savings"]["combined_usd"]), Cents(plan["cost"]["total_usd"]));
  // Without --plan: no plan, no plan findings, and the same cost.
  EXPECT_FALSE(r.contains("plan"));
  for (const json& f : r["findings"]) EXPECT_NE(f["id"], "consolidate_gpus");
  // The text and Markdown say the same figures.
  for (const char* format : {"text", "md"}) {
    RunResult text =
        RunProgram({CgovBinary(), "report", "--db", db, "--plan", "--format", format}, {});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("Right-size plan"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("fit on 2 of 4 GPUs"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(fmt::format("${:.2f}", p["consolidate_usd"].get<double>())),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("1g.10gb"), std::string::npos);
  }

  json by_pod = ReportJson({"--db", db, "--by", "pod"});
  EXPECT_TRUE(WhoByKey(by_pod).count("0f6c1e2a-93b4-4c1d-9f3e-5a7b2c8d4e61")) << by_pod["who"];
  json by_project = ReportJson({"--db", db, "--by", "project"});
  EXPECT_EQ(WhoByKey(by_project)["llm"]["users"], json::array({"alice"}));
}

TEST(HistoryE2E, KillNineTwentyTimesLosesNoCommittedTickAndLeavesAnIntactDatabase) {
  TempDir dir;
  const std::string db = dir / "h.db";
  int64_t committed = 0;
  for (int round = 0; round < 20; ++round) {
    Started daemon = StartDaemon(db);
    ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") > committed; }, 15))
        << "round " << round;
    committed = QueryDb(db, "SELECT count(*) FROM tick");
    usleep(static_cast<useconds_t>((round % 5) * 230'000));  // land anywhere in the tick cycle
    ASSERT_EQ(kill(daemon.pid, SIGKILL), 0);
    RunResult killed = WaitProgram(daemon, 15);
    EXPECT_EQ(killed.exit_code, 128 + SIGKILL);
    const int64_t after = QueryDb(db, "SELECT count(*) FROM tick");
    EXPECT_GE(after, committed) << "round " << round << ": a committed tick was lost";
    committed = after;
    auto opened = SqliteDb::Open(db, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(opened.ok());
    auto check = (*opened)->Prepare("PRAGMA integrity_check");
    ASSERT_TRUE(check.ok());
    ASSERT_TRUE(*check->Step());
    EXPECT_EQ(check->Text(0), "ok") << "round " << round;
  }
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM run"), 20);
  json r = ReportJson({"--db", db, "--since", "1h"});
  int64_t samples = 0;
  for (const json& g : r["gpus"]) samples += g["samples"].get<int64_t>();
  EXPECT_EQ(samples, 4 * committed) << "every committed tick is in the report";
}

// Issue 20: the daemon samples down to 100 ms, as `cgov run` does; the history keeps every tick
// it took (the batches and the final commit) and the report counts each for its 100 ms.
TEST(HistoryE2E, ASubSecondDaemonKeepsEveryTickAndCountsEachForItsInterval) {
  TempDir dir;
  const std::string db = dir / "h.db";
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", db, "--interval", "100ms", "--nvml-lib",
                    FakeNvml("full"), "--host-root", Fixture("proc/shared-box")},
                   SharedBox());
  // A dozen ticks committed (each batch a transaction the reader sees), however slow the
  // machine: a fixed sleep counted 9 ticks in 3 s under the sanitizers on a loaded VM.
  usleep(1'200'000);
  EXPECT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 12; }, 60));
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 30);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("every 100ms"), std::string::npos) << stopped.err;
  const size_t at = stopped.err.find("stopped after ");
  ASSERT_NE(at, std::string::npos) << stopped.err;
  const int64_t ticks = std::stoll(stopped.err.substr(at + 14));
  EXPECT_GE(ticks, 12);
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM tick"), ticks);
  json r = ReportJson({"--db", db, "--since", "1h"});
  ASSERT_EQ(r["gpus"].size(), 4u);
  for (const json& g : r["gpus"]) {
    EXPECT_EQ(g["samples"], ticks) << g;
    // Each tick stands for the time to the next (<= 2 intervals), the last for one interval.
    EXPECT_GE(g["held_seconds"].get<double>(), 0.1 * static_cast<double>(ticks) - 0.05) << g;
    EXPECT_LE(g["held_seconds"].get<double>(), 0.2 * static_cast<double>(ticks) + 0.05) << g;
  }
  // Issue 62: the scenario's GPUs draw a constant 300, 70, 60 and 200 W: each one's energy is
  // its power times its time to the millijoule, whatever the ticks' spacing; the holders' shares
  // and the part no one held add up to it.
  const double watts[] = {300, 70, 60, 200};
  double joules = 0;
  for (int i = 0; i < 4; ++i) {
    const json& g = GpuByIndex(r, i);
    EXPECT_NEAR(g["energy_joules"].get<double>(), watts[i] * g["held_seconds"].get<double>(), 1e-3)
        << g;
    joules += g["energy_joules"].get<double>();
  }
  EXPECT_NEAR(r["energy"]["joules"].get<double>(), joules, 1e-3);
  double who = r["unattributed"]["energy_joules"].get<double>();
  for (const json& w : r["who"]) who += w["energy_joules"].get<double>();
  EXPECT_NEAR(who, joules, 1e-2);
  EXPECT_NEAR(r["energy"]["idle_joules"].get<double>(),
              GpuByIndex(r, 1)["idle_energy_joules"].get<double>() +
                  GpuByIndex(r, 2)["idle_energy_joules"].get<double>(),
              1e-3)
      << "GPUs 1 (2 %) and 2 (0 %) are the idle ones";
  EXPECT_GT(GpuByIndex(r, 2)["idle_energy_joules"].get<double>(), 0);
  EXPECT_EQ(GpuByIndex(r, 0)["idle_energy_joules"], 0.0) << "GPU 0 is busy at 80 %";
}

TEST(HistoryE2E, ImportsTheRealGpuUsageAuditDatabaseAndAgreesWithItsReport) {
  TempDir dir;
  // A copy: SQLite may create -shm next to a WAL database even when reading it.
  const std::string source = dir / "gua.db";
  std::filesystem::copy_file(Fixture("gpu-usage-audit/demo-30ticks.db"), source);
  const std::string db = dir / "h.db";
  RunResult first = RunProgram({CgovBinary(), "import", "gpu-usage-audit", source, "--db", db}, {});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("30 tick(s) added, 0 already there"), std::string::npos) << first.err;
  json r = ReportJson({"--db", db, "--since", "1h", "--idle-held-min", "10s"});
  const json gua = json::parse(ReadFile(Fixture("gpu-usage-audit/demo-30ticks.gua-report.json")));

  // Per GPU: GPU-0 40 % productive (gua's "active", util 80), 40 % idle-held, 20 % truly idle;
  // GPU-1 all idle-held; GPU-2 truly idle with a graphics-only note, where gua-usage-audit counts
  // Xorg's memory as held (the one documented definitional difference).
  std::map<std::string, json> ours;
  for (const json& g : r["gpus"]) ours[g["uuid"].get<std::string>()] = g;
  for (const json& g : gua["per_gpu"]) {
    const json& share = ours[g["uuid"].get<std::string>()]["phase_share_pct"];
    const double active = share["productive"].get<double>() + share["compute_bound"].get<double>() +
                          share["underutilized"].get<double>();
    EXPECT_NEAR(active / 100, g["active"].get<double>(), 1e-9) << g;
    if (g["uuid"] == "GPU-2") {
      EXPECT_EQ(share["truly_idle"], 100.0);
      EXPECT_NEAR(ours["GPU-2"]["graphics_only_seconds"].get<double>(), 30, 0.1);
      continue;
    }
    EXPECT_NEAR(share["idle_held"].get<double>() / 100, g["idle_held"].get<double>(), 1e-9) << g;
    EXPECT_NEAR(share["truly_idle"].get<double>() / 100, g["truly_idle"].get<double>(), 1e-9) << g;
  }
  // Identities and their GPU-hours ("unknown" there is our empty user).
  std::map<std::string, json> who = WhoByKey(r);
  ASSERT_EQ(who.size(), gua["top_identities"].size()) << r["who"].dump(1);
  for (const json& id : gua["top_identities"]) {
    const std::string key = id["identity"] == "unknown" ? "" : id["identity"].get<std::string>();
    ASSERT_TRUE(who.count(key)) << key;
    EXPECT_NEAR(who[key]["held_seconds"].get<double>() / 3600, id["gpu_hours"].get<double>(),
                id["gpu_hours"].get<double>() * 0.001)
        << key;
    if (key != "gdm") {
      EXPECT_NEAR(
          who[key]["idle_held_seconds"].get<double>() / who[key]["held_seconds"].get<double>(),
          id["idle_held"].get<double>(), 0.001)
          << key;
    }
  }
  EXPECT_EQ(r["idle_held_sessions"]["sessions"].size(), 2u) << "bob's jupyter and pid 9999";

  RunResult again = RunProgram({CgovBinary(), "import", "gpu-usage-audit", source, "--db", db}, {});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("0 tick(s) added, 30 already there"), std::string::npos) << again.err;
  EXPECT_EQ(ReportJson({"--db", db, "--since", "1h", "--idle-held-min", "10s"}), r);
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM run"), 1) << "the same source run is found again";
}

TEST(HistoryE2E, DemoIsDeterministicAndReportsEverySection) {
  TempDir dir;
  for (const char* name : {"a.db", "b.db"}) {
    // 10 s ticks keep it quick under the sanitizers; the schedule (users, sessions) is the same.
    RunResult demo = RunProgram({CgovBinary(), "demo", "--duration", "26h", "--interval", "10s",
                                 "--gpus", "8", "--db", dir / name},
                                {}, 120);
    ASSERT_EQ(demo.exit_code, 0) << demo.err;
    EXPECT_NE(demo.err.find("wrote 9360 ticks (74880 GPU-samples)"), std::string::npos) << demo.err;
  }
  json a = ReportJson({"--db", dir / "a.db", "--since", "26h"});
  EXPECT_EQ(a, ReportJson({"--db", dir / "b.db", "--since", "26h"}));
  // Issue 17: a window that starts before the history does, mid-hour, is not "pruned".
  const time_t first = QueryDb(dir / "a.db", "SELECT min(ts_ms) FROM tick") / 1000 - 1800;
  tm utc{};
  gmtime_r(&first, &utc);
  char since[32];
  strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &utc);
  const json longer = ReportJson({"--db", dir / "a.db", "--since", since});
  EXPECT_EQ(longer["notes"].dump().find("pruned"), std::string::npos) << longer["notes"].dump();
  EXPECT_EQ(longer["phases"]["idle_held"], a["phases"]["idle_held"]) << "the same data";
  std::map<std::string, json> who = WhoByKey(a);
  for (const char* user : {"alice", "bob", "carol", "dave", "erin", "gdm"}) {
    EXPECT_TRUE(who.count(user)) << user;
  }
  EXPECT_GT(a["phases"]["idle_held"]["gpu_seconds"].get<double>(), 0);
  EXPECT_FALSE(a["idle_held_sessions"]["sessions"].empty());
  EXPECT_FALSE(a["findings"].empty());
  RunResult md = RunProgram({CgovBinary(), "report", "--db", dir / "a.db", "--format", "md",
                             "--since", "7d", "--tz", "Europe/Berlin", "--out", dir / "r.md"},
                            {});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  const std::string text = ReadFile(dir / "r.md");
  for (const char* section : {"## Waste", "## Per GPU", "## Who (by user)", "## Act on these",
                              "(Europe/Berlin)", "### Findings", "| Phase "}) {
    EXPECT_NE(text.find(section), std::string::npos) << section;
  }
  // Issue 17: the simulated time ends before now (on a Monday's week), or starts at --start.
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  EXPECT_LE(QueryDb(dir / "a.db", "SELECT max(ts_ms) FROM tick"), now_ms);
  EXPECT_EQ((QueryDb(dir / "a.db", "SELECT min(ts_ms) FROM tick") / 86'400'000 + 3) % 7, 0)
      << "a Monday";
  RunResult pinned = RunProgram({CgovBinary(), "demo", "--duration", "1h", "--start",
                                 "2026-11-16T00:00Z", "--db", dir / "pinned.db"},
                                {});
  ASSERT_EQ(pinned.exit_code, 0) << pinned.err;
  EXPECT_EQ(QueryDb(dir / "pinned.db", "SELECT min(ts_ms) FROM tick"), 1'794'787'200'000);
  RunResult exists =
      RunProgram({CgovBinary(), "demo", "--duration", "1h", "--db", dir / "a.db"}, {});
  EXPECT_EQ(exists.exit_code, 1);
  EXPECT_NE(exists.err.find("--force"), std::string::npos);
}

// Issue 14: the demo week's action list is a handful of habits with advice for their kind of
// holder, not one row per day; the GPU that computed nothing has a finding with its dollars.
TEST(HistoryE2E, TheDemoWeekGroupsHabitsAndNamesTheUnusedGpu) {
  // The week the consistency and billing suites read (made once, only read).
  const std::string week = SharedDemoDb({"--start", "2026-11-16", "--interval", "10s"});
  ASSERT_NE(week, "");
  json r = ReportJson({"--db", week, "--since", "7d"});
  const json& habits = r["idle_held_sessions"]["habits"];
  const json& sessions = r["idle_held_sessions"]["sessions"];
  ASSERT_GE(habits.size(), 2u);
  EXPECT_LE(habits.size(), 5u) << habits.dump(1);
  EXPECT_GT(sessions.size(), habits.size()) << "every session is still in the JSON";
  EXPECT_EQ(habits[0]["user"], "bob");
  EXPECT_EQ(habits[0]["kind"], "notebook");
  EXPECT_GE(habits[0]["days"].get<int>(), 5);
  EXPECT_NE(habits[0]["advice"].get<std::string>().find("cull_idle_timeout"), std::string::npos);
  bool batch = false;
  for (const json& h : habits) {
    if (h["user"] == "dave") {
      batch = true;
      EXPECT_EQ(h["kind"], "batch job");
      EXPECT_EQ(h["advice"].get<std::string>().find("Jupyter"), std::string::npos)
          << "a finished batch job is not told about notebooks";
    }
  }
  EXPECT_TRUE(batch) << habits.dump(1);
  bool unused = false;
  for (const json& f : r["findings"]) {
    if (f["id"] != "unused_gpu") continue;
    unused = true;
    EXPECT_EQ(f["evidence"]["gpu_names"], json::array({"7"}));
    EXPECT_NE(f["recommendation"].get<std::string>().find("computed nothing for 7.0 days"),
              std::string::npos)
        << f.dump(1);
    EXPECT_NE(f["recommendation"].get<std::string>().find("$"), std::string::npos);
    EXPECT_GT(f["savings_fraction"].get<double>(), 0.1) << f.dump(1);
  }
  EXPECT_TRUE(unused) << r["findings"].dump(1);
  RunResult text = RunProgram({CgovBinary(), "report", "--db", week, "--since", "7d"}, {});
  EXPECT_NE(text.out.find("bob's ipykernel (notebook) on GPU 4"), std::string::npos) << text.out;
}

// Issue 57, 4: with --idle-cost proportional or owner:, Who's rows and the unattributed part
// added up to a cent more than the total. Every idle-cost policy: Who adds up to the cent.
TEST(HistoryE2E, WhoAddsUpToTheTotalUnderEveryIdleCostPolicy) {
  const std::string db = SharedDemoDb({"--duration", "7d", "--interval", "60s"});
  auto cents = [](const json& usd) { return std::llround(usd.get<double>() * 100); };
  for (const char* policy : {"unallocated", "proportional", "owner:team=platform"}) {
    for (const char* by : {"user", "project", "team"}) {
      RunResult r = RunProgram({CgovBinary(), "report", "--db", db, "--since", "30d", "--format",
                                "json", "--idle-cost", policy, "--by", by},
                               {});
      ASSERT_EQ(r.exit_code, 0) << policy << ": " << r.err;
      const json d = json::parse(r.out);
      int64_t sum = cents(d["unattributed"]["cost_usd"]);
      for (const json& w : d["who"]) sum += cents(w["cost_usd"]);
      EXPECT_EQ(sum, cents(d["cost"]["total_usd"])) << policy << " by " << by;
    }
  }
}

// Issue 57, 12: `cgov demo --gpus 5` still described GPUs 5-7. It describes the GPUs it made.
// Issue 62: CO2e only from a grid intensity the user gives, checked where it enters; the text
// and the JSON show the same energy.
TEST(HistoryE2E, EnergyAndCo2eOfTheDemoWeekComeFromTheGridIntensityGiven) {
  const std::string db = SharedDemoDb({"--duration", "7d", "--interval", "60s"});
  const json plain = ReportJson({"--db", db, "--since", "30d"});
  ASSERT_TRUE(plain.contains("energy"));
  EXPECT_GT(plain["energy"]["kwh"].get<double>(), 100) << "a week of 8 H100s";
  EXPECT_TRUE(plain["energy"]["co2e_kg"].is_null()) << "no intensity is assumed";
  const json green = ReportJson({"--db", db, "--since", "30d", "--grid-intensity", "380"});
  EXPECT_EQ(green["energy"]["joules"], plain["energy"]["joules"]) << "CO2e changes no energy";
  EXPECT_NEAR(green["energy"]["co2e_kg"].get<double>(), green["energy"]["kwh"].get<double>() * 0.38,
              0.001);
  EXPECT_NEAR(green["energy"]["idle_co2e_kg"].get<double>(),
              green["energy"]["idle_kwh"].get<double>() * 0.38, 0.001);
  for (const json& w : green["who"]) {
    EXPECT_NEAR(w["co2e_kg"].get<double>(), w["energy_joules"].get<double>() / 3.6e6 * 0.38, 0.001)
        << w["key"];
  }
  RunResult text = RunProgram(
      {CgovBinary(), "report", "--db", db, "--since", "30d", "--grid-intensity", "380"}, {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(fmt::format("{:.0f} kWh · idle", green["energy"]["kwh"].get<double>())),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(fmt::format("CO2e {:.1f} kg at 380 g/kWh",
                                      green["energy"]["co2e_kg"].get<double>())),
            std::string::npos)
      << text.out;
  for (const char* bad : {"nan", "-1", "2001", "1e400", "380g", "", "inf"}) {
    RunResult r = RunProgram({CgovBinary(), "report", "--db", db, "--grid-intensity", bad}, {});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--grid-intensity"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "no partial report for " << bad;
  }
}

// Issue 62: --energy-price prices the energy as its own figure (the window's, its idle part,
// each holder's), exact from the ledger's millijoules, and moves no GPU-time dollar; none is
// assumed, and a bad price is a usage error with no output.
TEST(HistoryE2E, TheEnergysCostIsItsOwnFigureAtThePriceGiven) {
  const std::string db = SharedDemoDb({"--duration", "7d", "--interval", "60s"});
  const json plain = ReportJson({"--db", db, "--since", "30d"});
  EXPECT_TRUE(plain["energy"]["cost_usd"].is_null()) << "no price is assumed";
  EXPECT_TRUE(plain["energy"]["price_usd_per_kwh"].is_null());
  const json priced = ReportJson({"--db", db, "--since", "30d", "--energy-price", "0.125"});
  const json& e = priced["energy"];
  EXPECT_EQ(e["price_usd_per_kwh"], 0.125);
  // The joules are exact to the mJ: their cost at $0.125 a kWh, to the cent.
  auto cents_of = [](const json& joules) {
    return std::llround(joules.get<double>() * 1000 * 0.125 / 3.6e9 * 1e6 / 1e4);
  };
  EXPECT_EQ(std::llround(e["cost_usd"].get<double>() * 100), cents_of(e["joules"]));
  EXPECT_EQ(std::llround(e["idle_cost_usd"].get<double>() * 100), cents_of(e["idle_joules"]));
  EXPECT_GT(e["cost_usd"].get<double>(), 10) << "a week of 8 H100s";
  double who_usd = 0;
  for (const json& w : priced["who"]) {
    EXPECT_EQ(std::llround(w["energy_cost_usd"].get<double>() * 100), cents_of(w["energy_joules"]))
        << w["key"];
    who_usd += w["energy_cost_usd"].get<double>();
  }
  const double unattributed_usd =
      priced["unattributed"]["energy_joules"].get<double>() / 3.6e6 * 0.125;
  EXPECT_NEAR(who_usd + unattributed_usd, e["cost_usd"].get<double>(),
              0.01 * (2 + priced["who"].size()));
  EXPECT_EQ(priced["cost"], plain["cost"]) << "the GPU-time dollars do not move";
  EXPECT_EQ(priced["savings"], plain["savings"]);
  RunResult text = RunProgram(
      {CgovBinary(), "report", "--db", db, "--since", "30d", "--energy-price", "0.125"}, {});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(
      text.out.find(fmt::format("Electricity ${:.2f} at $0.125/kWh (--energy-price), of which idle "
                                "${:.2f}: beside the GPU-time dollars",
                                e["cost_usd"].get<double>(), e["idle_cost_usd"].get<double>())),
      std::string::npos)
      << text.out;
  // Who's table (declared once, issue 59) has each holder's energy cost in every format.
  EXPECT_NE(text.out.find("Energy $"), std::string::npos) << text.out;
  RunResult html = RunProgram({CgovBinary(), "report", "--db", db, "--since", "30d",
                               "--energy-price", "0.125", "--format", "html"},
                              {});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_NE(html.out.find(">Energy $</button></th>"), std::string::npos);
  EXPECT_NE(html.out.find("data-json=\"/who/0/energy_cost_usd\""), std::string::npos);
  for (const char* bad : {"nan", "-0.1", "10.01", "0.1234567", "12c", "", "inf", "1e3"}) {
    RunResult r = RunProgram({CgovBinary(), "report", "--db", db, "--energy-price", bad}, {});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--energy-price"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "no partial report for " << bad;
  }
}

TEST(HistoryE2E, TheDemoDescribesOnlyTheGpusItMade) {
  TempDir dir;
  RunResult five = RunProgram({CgovBinary(), "demo", "--db", dir / "5.db", "--gpus", "5",
                               "--duration", "1h", "--interval", "10m"},
                              {});
  ASSERT_EQ(five.exit_code, 0) << five.err;
  EXPECT_NE(five.err.find("GPUs 0-3: alice's DDP pre-training"), std::string::npos) << five.err;
  EXPECT_NE(five.err.find("; GPU 4: bob's notebook"), std::string::npos) << five.err;
  for (const char* absent : {"GPU 5", "GPU 6", "GPU 7", "dave", "erin", "Xorg"}) {
    EXPECT_EQ(five.err.find(absent), std::string::npos) << absent << ": " << five.err;
  }
  RunResult ten = RunProgram({CgovBinary(), "demo", "--db", dir / "10.db", "--gpus", "10",
                              "--duration", "1h", "--interval", "10m"},
                             {});
  ASSERT_EQ(ten.exit_code, 0) << ten.err;
  EXPECT_NE(ten.err.find("GPUs 0-3, 8-9: alice's"), std::string::npos) << ten.err;
  EXPECT_NE(ten.err.find("GPU 7: free"), std::string::npos) << ten.err;
}

// Issue 57, 12: `--tz +05:00` was refused while `-03:00` was accepted (the offset was read on
// 1970-01-01, where east of UTC is before the epoch). Either way the heatmap is UTC's, shifted.
TEST(HistoryE2E, AnyFixedOffsetShiftsTheHeatmap) {
  const std::string db = SharedDemoDb({"--duration", "7d", "--interval", "10m"});
  auto heatmap = [&](const std::string& tz) {
    RunResult r = RunProgram(
        {CgovBinary(), "report", "--db", db, "--since", "30d", "--tz", tz, "--format", "json"}, {});
    EXPECT_EQ(r.exit_code, 0) << tz << ": " << r.err;
    return r.exit_code == 0 ? json::parse(r.out)["heatmap_util_pct"] : json();
  };
  const json utc = heatmap("UTC");
  for (const auto& [tz, hours] :
       std::vector<std::pair<std::string, int>>{{"+05:00", 5}, {"-03:00", -3}, {"+14:00", 14}}) {
    const json shifted = heatmap(tz);
    ASSERT_EQ(shifted.size(), 7u) << tz;
    for (int slot = 0; slot < 7 * 24; ++slot) {
      const int from = ((slot - hours) % 168 + 168) % 168;  // the UTC hour of week it shows
      EXPECT_EQ(shifted[slot / 24][slot % 24], utc[from / 24][from % 24]) << tz << " " << slot;
    }
  }
}

// --plan's flags are checked as they are read.
TEST(HistoryE2E, ThePlansFlagsAreChecked) {
  const std::string db = SharedDemoDb({"--duration", "7d", "--interval", "60s"});
  ASSERT_NE(db, "");
  const std::vector<std::vector<std::string>> bad = {
      {"--plan", "--plan-headroom", "80"},       {"--plan", "--plan-headroom", "x"},
      {"--plan", "--plan-compute-ceiling", "5"}, {"--plan", "--plan-compute-ceiling", "101"},
      {"--plan", "--plan-compute-over", "-1"},   {"--plan", "--plan-compute-over", "nan"}};
  for (const std::vector<std::string>& extra : bad) {
    std::vector<std::string> argv = {CgovBinary(), "report", "--db", db};
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunResult r = RunProgram(argv, {});
    EXPECT_EQ(r.exit_code, 2) << extra[1] << " " << extra[2] << r.err;
    EXPECT_NE(r.err.find(extra[1]), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "no partial report";
  }
  // Stricter options keep more GPUs: a 0 % compute-over share refuses any packing that ever
  // passed the ceiling, a full headroom of 50 % packs less.
  json loose = ReportJson({"--db", db, "--since", "7d", "--plan"});
  json strict = ReportJson(
      {"--db", db, "--since", "7d", "--plan", "--plan-headroom", "50", "--plan-compute-over", "0"});
  EXPECT_GE(strict["plan"]["gpus_planned"].get<int>(), loose["plan"]["gpus_planned"].get<int>());
  EXPECT_EQ(strict["plan"]["options"]["memory_headroom_pct"], 50);
  EXPECT_LT(loose["plan"]["gpus_planned"].get<int>(), loose["plan"]["gpus_now"].get<int>())
      << "the demo week's unused GPU 7 is freed" << loose["plan"].dump(1).substr(0, 3000);
}

TEST(HistoryE2E, BadInputGetsAClearErrorAndNoOutput) {
  TempDir dir;
  RunResult missing = RunProgram({CgovBinary(), "report", "--db", dir / "none.db"}, {});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such database"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "none.db")) << "a report creates nothing";
  RunResult format =
      RunProgram({CgovBinary(), "report", "--db", dir / "none.db", "--format", "xml"}, {});
  EXPECT_EQ(format.exit_code, 2) << format.err;
  RunResult tz =
      RunProgram({CgovBinary(), "report", "--db", dir / "none.db", "--tz", "Mars/Base"}, {});
  EXPECT_EQ(tz.exit_code, 2);
  EXPECT_NE(tz.err.find("Mars/Base"), std::string::npos);
  RunResult foreign = RunProgram(
      {CgovBinary(), "import", "gpu-usage-audit", Scenario("h100x8"), "--db", dir / "h.db"}, {});
  EXPECT_EQ(foreign.exit_code, 1);
  EXPECT_NE(foreign.err.find("h100x8.json"), std::string::npos) << foreign.err;
  RunResult interval =
      RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--interval", "10ms"}, {});
  EXPECT_EQ(interval.exit_code, 2);
}

}  // namespace
}  // namespace cgov::e2e
