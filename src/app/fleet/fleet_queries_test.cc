// The fleet report's PromQL as text: pure functions, checked without a server.
#include "app/fleet/fleet_queries.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

TEST(FleetQueries, TheRecordingRulesAreNamedAsTheRuleFileNamesThem) {
  EXPECT_EQ(RuleOf("cgov_gpu_phase_seconds_total"), "cgov:gpu_phase_seconds:increase1h");
  EXPECT_EQ(RuleOf("cgov_gpu_phase_seconds_total", /*fleet=*/true),
            "cgov:fleet_gpu_phase_seconds:increase1h");
  EXPECT_EQ(OwnerRuleOf("cgov_identity_held_seconds_total"), "cgov:owner_held_seconds:increase1h");
  EXPECT_EQ(DailyRuleOf("cgov_identity_held_seconds_total"), "cgov:owner_held_seconds:increase1d");
  EXPECT_EQ(DailyRuleOf("cgov_ticks_total"), "cgov:ticks:increase1d");
  EXPECT_STREQ(GpuCounter(GpuCounterKind::kBusy), "cgov_gpu_busy_seconds_total");
  EXPECT_EQ(RuleOf(GpuCounter(GpuCounterKind::kPattern)), "cgov:gpu_pattern_seconds:increase1h");
  EXPECT_EQ(DailyRuleOf(GpuCounter(GpuCounterKind::kSwings)), "cgov:gpu_swings:increase1d");
}

// A host name is the user's: its regex metacharacters, quotes and backslashes are escaped.
TEST(FleetQueries, HostsAreEscapedIntoOneAlternation) {
  EXPECT_EQ(OnHosts("m", {"a.b", "c"}), R"(m{Hostname=~"a\\.b|c"})");
  EXPECT_EQ(OnHosts("m", {"q\"x"}), R"(m{Hostname=~"q\"x"})");
  // A backslash: doubled for the regex, each of those doubled for the string.
  EXPECT_EQ(OnHosts("m", {"b\\s"}), R"(m{Hostname=~"b\\\\s"})");
}

// The difference of the scraped values, never extrapolated; increase() only where the series
// reset (a daemon restarted) in the range.
TEST(FleetQueries, AnIncreaseIsTheScrapedDifferenceUnlessTheCounterReset) {
  EXPECT_EQ(Increase("c", "Hostname", 3'600'000),
            "sum by (Hostname) ((last_over_time(c[3600000ms]) - (c offset 3600000ms or "
            "last_over_time(c[3600000ms]) * 0)) and (resets(c[3600000ms]) == 0) or "
            "increase(c[3600000ms]))");
  EXPECT_EQ(GpuIncrease(GpuCounterKind::kPhase, 1000),
            Increase("cgov_gpu_phase_seconds_total", kGpuCounterLabels, 1000));
}

// Issue 59 (item 4): every query the fleet report asks is written here, once.
TEST(FleetQueries, TheReportsOtherQueriesAreWrittenHere) {
  EXPECT_EQ(Restarts(60'000), "sum by (Hostname) (resets(cgov_ticks_total[60000ms])) > 0");
  EXPECT_EQ(LastValues("Hostname", "cgov_ticks_total", "1h"),
            "sum by (Hostname) (last_over_time(cgov_ticks_total[1h]))");
  EXPECT_EQ(RuleSum("Hostname", "cgov:ticks:increase1h", 5'400'000),
            "sum by (Hostname) (sum_over_time(cgov:ticks:increase1h[5400000ms])) > 0");
  EXPECT_EQ(RuleHour("r"), "last_over_time(r[30m])");
  EXPECT_EQ(RuleHour("r", true), "sum by (phase) (last_over_time(r[30m]))");
  EXPECT_EQ(GpuMean("m", 1000), "avg by (Hostname, UUID, GPU_I_ID) (avg_over_time(m[1000ms]))");
  EXPECT_EQ(InstanceIds(1000),
            "max by (Hostname, instance_id) (last_over_time("
            "cgov_build_info{instance_id!=\"\"}[1000ms]))");
  EXPECT_EQ(Prices("p", 1000),
            "max by (Hostname, UUID, GPU_I_ID, source) (last_over_time(p[1000ms]))");
  EXPECT_EQ(OpenCostPrices(1000), "max by (node) (last_over_time(node_gpu_hourly_cost[1000ms]))");
  const std::string renamed = RenamedLabels(1000);
  EXPECT_EQ(renamed.rfind("group by (Hostname, job) (last_over_time(cgov_honor_labels_check{"
                          "exported_namespace!=\"\"}[1000ms])) or ",
                          0),
            0u)
      << renamed;
  EXPECT_NE(renamed.find("cgov_identity_held_seconds_total{exported_container!=\"\"}[1000ms]"),
            std::string::npos)
      << renamed;
  EXPECT_EQ(MarkerSamples(kEvaluations, 7'200'000),
            "cgov:hourly_rules:evaluation_time_seconds[7200000ms]");
  EXPECT_EQ(AboveZero("sum by (Hostname) (x)"), "sum by (Hostname) (x) > 0");
  EXPECT_EQ(PhaseCountersNow(), "count(cgov_gpu_phase_seconds_total)");
  EXPECT_EQ(PhaseCountersWithinAYear(), "count(last_over_time(cgov_gpu_phase_seconds_total[52w]))");
}

}  // namespace
}  // namespace cgov
