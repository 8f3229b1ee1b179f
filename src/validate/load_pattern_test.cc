#include "validate/load_pattern.h"

#include <gtest/gtest.h>

namespace cgov::validate {
namespace {

constexpr uint64_t kHold = 2048ull << 20;

TEST(ParsePattern, KnowsEveryDefaultPatternAndItsExpectations) {
  struct Case {
    const char* name;
    bool context;
    double util;
    Phase phase;
  };
  const Case cases[] = {
      {"idle", false, 0, Phase::kTrulyIdle},       {"held", true, 0, Phase::kIdleHeld},
      {"duty30", true, 30, Phase::kUnderutilized}, {"duty60", true, 60, Phase::kUnderutilized},
      {"duty80", true, 80, Phase::kProductive},    {"duty95", true, 95, Phase::kComputeBound},
      {"bursty", true, 40, Phase::kComputeBound},  {"full", true, 100, Phase::kComputeBound}};
  for (const Case& c : cases) {
    Result<LoadPattern> p = ParsePattern(c.name, kHold);
    ASSERT_TRUE(p.ok()) << c.name << ": " << p.status().message();
    EXPECT_EQ(p->name, c.name);
    EXPECT_EQ(p->context, c.context) << c.name;
    EXPECT_DOUBLE_EQ(p->expected_util_pct, c.util) << c.name;
    EXPECT_EQ(p->expected_phase, c.phase) << c.name;
    EXPECT_EQ(p->hold_bytes, c.context ? kHold : 0) << c.name;
    EXPECT_GT(p->expected_phase_min_share_pct, 0) << c.name;
  }
  for (const std::string& name : DefaultPatternNames()) {
    EXPECT_TRUE(ParsePattern(name, kHold).ok()) << name;
  }
}

TEST(ParsePattern, RejectsWhatItCannotPlay) {
  for (const char* bad : {"", "busy", "duty", "duty4", "duty96", "duty3x", "duty-10", "IDLE"}) {
    Result<LoadPattern> p = ParsePattern(bad, kHold);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_NE(p.status().message().find("idle, held"), std::string::npos) << p.status().message();
  }
}

TEST(Schedule, FillsTheDurationExactlyCycleAfterCycle) {
  struct Case {
    const char* pattern;
    int64_t duration_ms;
    std::vector<Segment> want;
  };
  auto seg = [](bool busy, int64_t ms) { return Segment{busy, ms}; };
  const Case cases[] = {
      {"duty30",
       250,
       {seg(true, 30), seg(false, 70), seg(true, 30), seg(false, 70), seg(true, 30),
        seg(false, 20)}},
      {"duty30", 20, {seg(true, 20)}},
      {"bursty",
       12000,
       {seg(true, 2000), seg(false, 3000), seg(true, 2000), seg(false, 3000), seg(true, 2000)}},
      {"full", 2500, {seg(true, 2500)}},  // merged: one long busy stretch
      {"idle", 1500, {seg(false, 1500)}},
      {"held", 0, {}},
  };
  for (const Case& c : cases) {
    Result<LoadPattern> p = ParsePattern(c.pattern, kHold);
    ASSERT_TRUE(p.ok());
    std::vector<Segment> got = Schedule(*p, c.duration_ms);
    ASSERT_EQ(got.size(), c.want.size()) << c.pattern << " " << c.duration_ms;
    int64_t total = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].busy, c.want[i].busy) << c.pattern << " segment " << i;
      EXPECT_EQ(got[i].ms, c.want[i].ms) << c.pattern << " segment " << i;
      total += got[i].ms;
    }
    EXPECT_EQ(total, std::max<int64_t>(0, c.duration_ms)) << c.pattern;
  }
}

TEST(Schedule, BusyShareOfWholeCyclesIsTheExpectedUtilization) {
  for (const char* name : {"duty5", "duty30", "duty60", "duty95", "bursty", "full", "idle"}) {
    Result<LoadPattern> p = ParsePattern(name, kHold);
    ASSERT_TRUE(p.ok());
    EXPECT_NEAR(BusyPct(Schedule(*p, 60'000)), p->expected_util_pct, 1e-9) << name;
  }
}

}  // namespace
}  // namespace cgov::validate
