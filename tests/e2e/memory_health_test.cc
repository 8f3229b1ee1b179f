// Memory health end to end: the fake driver plays an A100 with a row remap pending, an H100
// whose remapping failed, a V100 with retired pages pending a reboot and a healthy A100. Each
// state reaches doctor, summary.json and its finding, /metrics (dcgm-exporter's names), the
// history database and `cgov report`.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

TEST(MemoryHealthE2E, DoctorAndRunSayWhichGpusNeedAResetOrATicket) {
  RunResult doctor = RunProgram({CgovBinary(), "doctor", "--nvml-lib", FakeNvml("full")},
                                {{"CGOV_FAKE_NVML_SCENARIO", Scenario("memory_health")}});
  EXPECT_NE(doctor.out.find("WARNING memory: 0 row(s) remapped (correctable), 512 "
                            "(uncorrectable); a remapping FAILED"),
            std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("memory:      3 row(s) remapped (correctable), 0 (uncorrectable)"),
            std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("3 item(s) above need attention"), std::string::npos) << doctor.out;

  TempDir dir;
  // 3 s: the memory health comes with the first process-list read, which under ASan on a
  // loaded 2-core CI machine took longer than a 1 s job (CI of 2026-11-27).
  RunResult r =
      RunProgram({CgovBinary(), "run", "--out", dir / "run", "--interval", "200ms", "--nvml-lib",
                  FakeNvml("full"), "--", "/bin/sleep", "3"},
                 {{"CGOV_FAKE_NVML_SCENARIO", Scenario("memory_health")}, {"CGOV_TAGS", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = json::parse(ReadFile(dir / "run/summary.json"));
  EXPECT_EQ(s["gpus"][0]["memory_health"]["remap_pending"], true);
  EXPECT_EQ(s["gpus"][1]["memory_health"]["remap_failure"], true);
  EXPECT_EQ(s["gpus"][2]["memory_health"]["kind"], "retired_pages");
  EXPECT_EQ(s["gpus"][2]["memory_health"]["retired_pages_dbe"], 1);
  EXPECT_EQ(s["gpus"][3]["memory_health"]["needs_action"], false);
  const json* f = FindingById(s["findings"], "gpu_memory_health");
  ASSERT_NE(f, nullptr) << s["findings"].dump(1);
  EXPECT_EQ((*f)["severity"], "critical");
  EXPECT_EQ((*f)["evidence"]["gpus"], json({0, 1, 2}));
  const std::string text = (*f)["recommendation"];
  EXPECT_NE(text.find("GPU 1: a row remapping failed"), std::string::npos) << text;
  EXPECT_NE(text.find("hardware ticket"), std::string::npos) << text;
  EXPECT_NE(text.find("nvidia-smi -r"), std::string::npos) << text;
  for (const json& other : s["findings"]) {  // critical findings come first
    if (other["id"] == "gpu_memory_health") break;
    EXPECT_EQ(other["severity"], "critical") << other["id"];
  }
}

TEST(MemoryHealthE2E, DaemonServesRecordsAndReportsIt) {
  TempDir dir;
  const std::string db = dir / "h.db";
  const int port = FreePort();
  ScrapedDaemon daemon =
      ScrapeDaemon(db, "memory_health", port, {"--metrics-names", "dcgm"}, TicksTaken(port, 3));
  ASSERT_TRUE(daemon.ready) << daemon.stopped.err;
  const std::string& metrics = daemon.metrics;
  const RunResult& stopped = daemon.stopped;
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("GPU 1: memory needs attention"), std::string::npos) << stopped.err;
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM gpu_event WHERE kind = 'memory_health'"), 4)
      << "one state per GPU, recorded once (it did not change)";
  for (const char* line :
       {"DCGM_FI_DEV_ROW_REMAP_PENDING{gpu=\"0\"", "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"1\"",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS{gpu=\"1\"", "DCGM_FI_DEV_RETIRED_DBE{gpu=\"2\"",
        "DCGM_FI_DEV_RETIRED_PENDING{gpu=\"2\"", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS{gpu=\"3\"",
        // and under cgov's own names (served with or without --metrics-names dcgm)
        "cgov_gpu_row_remap_pending{gpu=\"0\"", "cgov_gpu_remapped_rows_uncorrectable{gpu=\"1\"",
        "cgov_gpu_retired_pages_dbe{gpu=\"2\"", "cgov_gpu_remapped_rows_correctable{gpu=\"3\""}) {
    const size_t at = metrics.find(line);
    ASSERT_NE(at, std::string::npos) << line << "\n" << metrics;
    const std::string sample = metrics.substr(at, metrics.find('\n', at) - at);
    const double value = std::stod(sample.substr(sample.rfind(' ') + 1));
    const std::string name(line);
    const double want = name.find("UNCORRECTABLE") != std::string::npos ||
                                name.find("uncorrectable") != std::string::npos
                            ? 512
                        : name.find("CORRECTABLE") != std::string::npos ||
                                name.find("correctable") != std::string::npos
                            ? 3
                            : 1;
    EXPECT_EQ(value, want) << sample;
  }
  EXPECT_EQ(metrics.find("DCGM_FI_DEV_RETIRED_SBE{gpu=\"0\""), std::string::npos)
      << "an A100 remaps rows: no retired-page series";
  EXPECT_EQ(metrics.find("cgov_gpu_retired_pages_sbe{gpu=\"0\""), std::string::npos);
  RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--format", "json"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  json j = json::parse(report.out);
  const json* f = FindingById(j["findings"], "gpu_memory_health");
  ASSERT_NE(f, nullptr) << j["findings"].dump(1);
  EXPECT_EQ((*f)["evidence"]["gpu_names"], json({"0", "1", "2"}));
}

}  // namespace
}  // namespace cgov::e2e
