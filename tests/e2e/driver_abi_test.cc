// End-to-end: the real cgov binary against fake drivers that play the ABI of real driver series
// (tests/fake_nvml/abi_table.cc): 535.54.03's 32-byte process entries, 470's v1-only memory,
// MPS clients, and containerised processes seen through the host's /proc.
#include <signal.h>

#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

std::vector<json> ReadLines(const std::string& path) {
  std::vector<json> lines;
  std::istringstream in(ReadFile(path));
  for (std::string line; std::getline(in, line);) {
    lines.push_back(json::parse(line));
    EXPECT_EQ(SchemaErrors("samples.schema.json", lines.back()), "") << path;
  }
  return lines;
}

RunResult RunOn(const std::string& variant, const std::string& scenario, const std::string& out,
                const std::vector<std::string>& job) {
  std::vector<std::string> argv = {CgovBinary(), "run",        "--out",           out, "--interval",
                                   "200ms",      "--nvml-lib", FakeNvml(variant), "--"};
  argv.insert(argv.end(), job.begin(), job.end());
  return RunProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario(scenario)}, {"CGOV_TAGS", ""}});
}

// Regression: 535.43.02-535.86.x write 32-byte _v3 entries; read as 24-byte ones every process
// after the first was garbage and 25+ overran the buffer (the sanitizer build sees any overrun).
TEST(DriverAbiE2E, Driver535_54With30ProcessesReportsEveryPidAndByteExactly) {
  TempDir dir;
  RunResult r = RunOn("r535_54", "r535_54_many", dir / "run", {"/bin/sleep", "1.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<json> lines = ReadLines(dir / "run/samples.jsonl");
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0]["nvml"]["driver_version"], "535.54.03") << lines[0].dump();
  // A core that counted no time since the previous tick (two ticks within one jiffy: the job's
  // last sample right after a periodic one, on a loaded machine) is null, as the schema says
  // (CI once failed this test on such a line).
  json no_reading = lines.back();
  no_reading["host"]["cpu_core_pct"] = json::array({nullptr, 12.5});
  EXPECT_EQ(SchemaErrors("samples.schema.json", no_reading), "");
  size_t ticks_with_processes = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const json& procs = lines[i]["gpus"][0]["processes"];
    if (!procs.is_array() || procs.empty()) continue;  // before the first slow read
    ++ticks_with_processes;
    ASSERT_EQ(procs.size(), 30u) << procs.dump();
    for (int k = 0; k < 30; ++k) {
      EXPECT_EQ(procs[k]["pid"], 5000 + k) << "tick " << i;
      EXPECT_EQ(procs[k]["used_memory_bytes"], uint64_t(100 + k) << 20) << "tick " << i;
      EXPECT_EQ(procs[k]["compute"], true);
    }
  }
  EXPECT_GE(ticks_with_processes, 2u);
  json summary = json::parse(ReadFile(dir / "run/summary.json"));
  for (const json& w : summary["warnings"]) {
    EXPECT_EQ(w.get<std::string>().find("NVML:"), std::string::npos) << w;
  }
}

TEST(DriverAbiE2E, Driver470IdleGpuWithReservedMemoryIsTrulyIdleAndHoldsNothing) {
  TempDir dir;
  RunResult r = RunOn("r470", "r470_idle", dir / "run", {"/bin/sleep", "1.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = json::parse(ReadFile(dir / "run/summary.json"));
  EXPECT_EQ(s["phases"]["truly_idle"]["share_pct"], 100.0) << s["phases"].dump();
  // v1's `used` counts the driver's 500 MiB: 1.2 % of this GPU if it were not taken out.
  EXPECT_EQ(s["gpus"][0]["metrics"]["gpu_mem_pct"]["max"], 0.0) << s["gpus"][0].dump();
  EXPECT_EQ(TableRow(r.err, "| GPU Mem %"), "| GPU Mem % | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |") << r.err;
}

TEST(DriverAbiE2E, DoctorNamesTheProcessListAbiAndWarnsWhenTheDriverDisagrees) {
  RunResult r = RunProgram({CgovBinary(), "doctor", "--json", "--nvml-lib", FakeNvml("r535_54")},
                           {{"CGOV_FAKE_NVML_SCENARIO", Scenario("r535_54_many")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(SchemaErrors("doctor.schema.json", doc), "");
  EXPECT_EQ(doc["nvml"]["process_lists"]["compute"]["symbol"],
            "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(doc["nvml"]["process_lists"]["compute"]["entry_bytes"], 32);
  EXPECT_EQ(doc["nvml"]["abi_warnings"], json::array());
  EXPECT_EQ(doc["gpus"][0]["memory_reserved_bytes"], 512ull << 20);

  // A driver that writes 32-byte entries where its version says 24: read right, and said.
  TempDir dir;
  std::string scenario = ReadFile(Scenario("r535_54_many"));
  const std::string driver = R"("driver_version": "535.54.03")";
  ASSERT_NE(scenario.find(driver), std::string::npos);
  scenario.replace(scenario.find(driver), driver.size(), R"("driver_version": "550.54.15")");
  scenario.insert(scenario.find('{') + 1, R"("v3_process_entry_bytes": 32, )");
  WriteFile(dir / "odd.json", scenario);
  r = RunProgram({CgovBinary(), "doctor", "--nvml-lib", FakeNvml("full")},
                 {{"CGOV_FAKE_NVML_SCENARIO", dir / "odd.json"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("WARNING        nvmlDeviceGetComputeRunningProcesses_v3 wrote 32-byte "
                       "process entries where 24 were expected"),
            std::string::npos)
      << r.out;
}

json Report(const std::string& db, const std::string& by) {
  RunResult r = RunProgram(
      {CgovBinary(), "report", "--db", db, "--format", "json", "--by", by, "--idle-held-min", "1s"},
      {});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  if (r.exit_code != 0) return json::object();
  json report = json::parse(r.out);
  EXPECT_EQ(SchemaErrors("report.schema.json", report), "");
  return report;
}

// MPS clients are only in the MPS lists; the containerised ones are seen by their host pids
// through the host's /proc (fixture: NSpid "44001 17"), with their users and projects.
TEST(DriverAbiE2E, MpsClientsInContainersShowUpWithTheirUsersAndProjects) {
  TempDir dir;
  const std::string db = dir / "h.db";
  // Every tick committed as it is taken, so the test can watch them arrive.
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", db, "--interval", "1s", "--commit-every", "0s",
                    "--nvml-lib", FakeNvml("full"), "--host-root", Fixture("proc/mps-container")},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("mps_container")}});
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 3; }, 15));
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  RunResult stopped = WaitProgram(daemon, 15);
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  json by_user = Report(db, "user");
  std::map<std::string, json> who;
  for (const json& w : by_user["who"]) who[w["key"].get<std::string>()] = w;
  ASSERT_TRUE(who.count("alice") && who.count("carol")) << by_user["who"].dump(1);
  EXPECT_GT(who["alice"]["held_seconds"].get<double>(), 0);
  EXPECT_EQ(who["alice"]["idle_held_seconds"], 0.0);
  EXPECT_GT(who["carol"]["idle_held_seconds"].get<double>(), 0);
  EXPECT_EQ(who["carol"]["idle_held_seconds"], who["carol"]["held_seconds"]);
  std::set<int> session_pids;
  for (const json& s : by_user["idle_held_sessions"]["sessions"]) {
    session_pids.insert(s["pid"].get<int>());
  }
  EXPECT_TRUE(session_pids.count(44002)) << by_user["idle_held_sessions"].dump(1);

  json by_project = Report(db, "project");
  std::map<std::string, json> projects;
  for (const json& w : by_project["who"]) projects[w["key"].get<std::string>()] = w;
  EXPECT_EQ(projects["vision"]["users"], json::array({"alice"})) << by_project["who"].dump(1);
  EXPECT_EQ(projects["speech"]["users"], json::array({"carol"}));
}

}  // namespace
}  // namespace cgov::e2e
