// NVML GPM end to end: the fake driver plays two H100s at 100 % utilization.gpu whose SMs are 30 %
// active and whose tensor pipes idle; the metrics reach samples.jsonl, summary.json, the report's
// per-GPU table and findings, the history database, /metrics and `cgov report`.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

TEST(GpmE2E, RunCarriesGpmIntoSamplesSummaryTableAndFindings) {
  TempDir dir;
  RunResult r = RunProgram({CgovBinary(), "run", "--out", dir / "run", "--interval", "200ms",
                            "--nvml-lib", FakeNvml("full"), "--", "/bin/sleep", "3"},
                           {{"CGOV_FAKE_NVML_SCENARIO", Scenario("gpm_h100")}, {"CGOV_TAGS", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json s = json::parse(ReadFile(dir / "run/summary.json"));
  EXPECT_EQ(s["gpus"][0]["metrics"]["sm_active_pct"]["mean"], 30.0) << s["gpus"][0].dump();
  EXPECT_EQ(s["gpus"][0]["metrics"]["tensor_active_pct"]["mean"], 2.0);
  const json* low = FindingById(s["findings"], "low_sm_activity");
  ASSERT_NE(low, nullptr) << s["findings"].dump(1);
  EXPECT_EQ((*low)["observed"]["value"], 30.0);
  const json* precision = FindingById(s["findings"], "compute_bound_precision");
  ASSERT_NE(precision, nullptr) << s["findings"].dump(1);
  EXPECT_NE(
      (*precision)["recommendation"].get<std::string>().find("Tensor-pipe activity was 2.0 %"),
      std::string::npos);
  EXPECT_EQ(TableRow(r.err, "| SM Active %").rfind("| SM Active % | 30.0 |", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("| SM Active % Mean | Tensor % Mean |"), std::string::npos) << r.err;
  const json last = LastSample(dir / "run/samples.jsonl");
  EXPECT_EQ(last["gpus"][0]["gpm"]["sm_active_pct"], 30.0) << last.dump();
  EXPECT_EQ(last["gpus"][0]["gpm"]["pcie_rx_mib_s"], 800.0);
}

TEST(GpmE2E, DaemonStoresAndServesGpmAndTheReportShowsIt) {
  TempDir dir;
  const std::string db = dir / "h.db";
  const int port = FreePort();
  ScrapedDaemon daemon = ScrapeDaemon(db, "gpm_h100", port, {}, TicksTaken(port, 4));
  ASSERT_TRUE(daemon.ready) << daemon.stopped.err;
  ASSERT_EQ(daemon.stopped.exit_code, 0) << daemon.stopped.err;
  const std::string& metrics = daemon.metrics;
  EXPECT_NE(metrics.find("# TYPE cgov_gpu_sm_active_ratio gauge"), std::string::npos) << metrics;
  for (const char* series : {"cgov_gpu_sm_active_ratio{", "cgov_gpu_tensor_active_ratio{",
                             "cgov_gpu_pcie_receive_bytes_per_second{"}) {
    const size_t at = metrics.find(series);
    ASSERT_NE(at, std::string::npos) << series;
    const std::string line = metrics.substr(at, metrics.find('\n', at) - at);
    const double value = std::stod(line.substr(line.rfind(' ') + 1));
    const double want = std::string(series).find("sm_active") != std::string::npos ? 0.3
                        : std::string(series).find("tensor") != std::string::npos  ? 0.02
                                                                                  : 800.0 * 1048576;
    EXPECT_NEAR(value, want, want * 1e-9) << line;
  }
  RunResult report = RunProgram({CgovBinary(), "report", "--db", db, "--format", "json"}, {});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  json r = json::parse(report.out);
  EXPECT_EQ(r["gpus"][0]["mean_sm_active_pct"], 30.0) << r["gpus"][0].dump();
  EXPECT_EQ(r["gpus"][0]["mean_tensor_active_pct"], 2.0);
  EXPECT_NE(FindingById(r["findings"], "low_sm_activity"), nullptr) << r["findings"].dump(1);
  RunResult text = RunProgram({CgovBinary(), "report", "--db", db}, {});
  EXPECT_NE(text.out.find("SM active"), std::string::npos) << text.out;
  // Issue 59: the per-GPU table is declared once: the HTML shows the text's columns, in its
  // order, each figure tied to the JSON.
  RunResult html = RunProgram({CgovBinary(), "report", "--db", db, "--format", "html"}, {});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  const size_t table = html.out.find("<caption>Per GPU: shares of its time");
  ASSERT_NE(table, std::string::npos);
  size_t at = table;
  for (const char* header : {"GPU", "Model", "Truly idle %", "Bound %", "Util %", "SM active %",
                             "Tensor %", "Mem used MiB", "Power W", "Cost"}) {
    EXPECT_NE(text.out.find(header), std::string::npos) << header << " in the text";
    const size_t next = html.out.find(std::string(">") + header + "</button></th>", at);
    EXPECT_NE(next, std::string::npos) << header << " in the HTML, in the text's order";
    if (next != std::string::npos) at = next;
  }
  EXPECT_NE(html.out.find("data-json=\"/gpus/0/mean_sm_active_pct\">30.0<"), std::string::npos);
}

}  // namespace
}  // namespace cgov::e2e
