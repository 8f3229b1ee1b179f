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

}  // namespace
}  // namespace cgov
