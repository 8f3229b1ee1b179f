// Xid critical errors end to end: the fake driver raises Xid 79 on one GPU, which is then lost;
// `cgov run` counts it in samples.jsonl and reports a critical finding; `cgov daemon` logs it,
// keeps it in the history and serves it on /metrics; `cgov report` finds it in the history.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"
#include "store/history_store.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

TEST(XidE2E, RunCountsTheXidOfALostGpuAndReportsACriticalFinding) {
  TempDir dir;
  RunResult r = RunProgram({CgovBinary(), "run", "--out", dir / "run", "--interval", "200ms",
                            "--nvml-lib", FakeNvml("full"), "--", "/bin/sleep", "3"},
                           {{"CGOV_FAKE_NVML_SCENARIO", Scenario("xid")}, {"CGOV_TAGS", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = json::parse(ReadFile(dir / "run/summary.json"));
  const json* f = FindingById(s["findings"], "xid_errors");
  ASSERT_NE(f, nullptr) << s["findings"].dump(1);
  EXPECT_EQ((*f)["severity"], "critical");
  EXPECT_EQ((*f)["observed"]["value"], 1.0);
  EXPECT_NE((*f)["recommendation"].get<std::string>().find("fallen off the bus"),
            std::string::npos);
  EXPECT_NE(r.err.find("Xid error(s) on GPU 1"), std::string::npos) << r.err;
  const json last = LastSample(dir / "run/samples.jsonl");
  EXPECT_EQ(last["gpus"][1]["lost"], true);
  EXPECT_EQ(last["gpus"][1]["xid_errors"], 1);
  EXPECT_EQ(last["gpus"][1]["last_xid"], 79);
  EXPECT_EQ(last["gpus"][0]["xid_errors"], 0);
}

TEST(XidE2E, DaemonLogsStoresAndServesTheXidAndTheReportFindsIt) {
  TempDir dir;
  const std::string db = dir / "h.db";
  const int port = FreePort();
  ScrapedDaemon daemon = ScrapeDaemon(db, "xid", port, {}, [&] {
    return QueryDb(db, "SELECT count(*) FROM gpu_event WHERE kind = 'xid'") >= 1;
  });
  ASSERT_TRUE(daemon.ready) << daemon.stopped.err;
  const std::string& metrics = daemon.metrics;
  const RunResult& stopped = daemon.stopped;
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("GPU 1: Xid 79 reported by the driver"), std::string::npos)
      << stopped.err;
  EXPECT_EQ(QueryDb(db, "SELECT code FROM gpu_event WHERE kind = 'xid'"), 79);
  EXPECT_EQ(QueryDb(db, "PRAGMA user_version"), kHistorySchemaVersion);
  EXPECT_NE(metrics.find("# TYPE cgov_gpu_last_xid gauge"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("cgov_gpu_last_xid{gpu=\"1\""), std::string::npos)
      << "a lost GPU's Xid is served" << metrics;
  EXPECT_NE(metrics.find("cgov_gpu_xid_errors_total{gpu=\"1\""), std::string::npos) << metrics;

  RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--format", "json"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  json r = json::parse(report.out);
  const json* f = FindingById(r["findings"], "xid_errors");
  ASSERT_NE(f, nullptr) << r["findings"].dump(1);
  EXPECT_EQ((*f)["observed"]["value"], 1.0);
  EXPECT_NE((*f)["title"].get<std::string>().find("GPU 1"), std::string::npos) << (*f)["title"];
}

}  // namespace
}  // namespace cgov::e2e
