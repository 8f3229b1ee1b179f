// The fleet loader on the PromQuery seam (tests/fakes/fake_prom_query.h): what it asks and what
// it says when the store has nothing or fails, without a server. The loader's arithmetic over
// real answers is fleet_load_test.cc's (through the HTTP client) and the e2e tests' (a real
// Prometheus).
#include <gtest/gtest.h>

#include <cmath>

#include "app/fleet/fleet_load.h"
#include "core/time_format.h"
#include "fakes/fake_prom_query.h"
#include "os/clock.h"
#include "os/env.h"

namespace cgov {
namespace {

const int64_t kFrom = *ParseTimestampMs("2026-11-16T10:30:00Z");
const int64_t kTo = *ParseTimestampMs("2026-11-16T11:00:00Z");

bool Asked(const FakePromQuery& fake, const std::string& expr) {
  for (const PromRequest& r : fake.requests()) {
    if (r.expr == expr) return true;
  }
  return false;
}

TEST(FleetLoadOnAFake, AStoreWithoutCgovMetricsSaysWhatToCheck) {
  FakePromQuery fake([](const PromRequest&) { return std::vector<PromSeries>(); });
  Result<HistoryInput> in = LoadFleet(fake, kFrom, kTo, {.rules = RecordingRules::kOff});
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), StatusCode::kNotFound);
  EXPECT_NE(in.status().message().find("--prometheus fake://prometheus: no cgov metrics"),
            std::string::npos)
      << in.status().message();
  EXPECT_TRUE(Asked(fake, "count(cgov_gpu_phase_seconds_total)"));
}

TEST(FleetLoadOnAFake, MetricsOutsideTheWindowAskForAWiderOne) {
  FakePromQuery fake([](const PromRequest& r) {
    std::vector<PromSeries> out;
    if (r.expr.starts_with("count(last_over_time(")) out.push_back(Series({}, {{0, 8}}));
    return Result<std::vector<PromSeries>>(out);
  });
  Result<HistoryInput> in = LoadFleet(fake, kFrom, kTo, {.rules = RecordingRules::kOff});
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("not in this window; widen --since"), std::string::npos)
      << in.status().message();
}

// The largest value a store's answer may carry (1e15: larger ones are no measurement) in a
// pattern of ms x percent and in the swings: bounded where they are added, never an overflow
// (the sanitizer tree checks the conversions).
TEST(FleetLoadOnAFake, TheLargestPatternAndSwingValuesStayBounded) {
  const double from_s = static_cast<double>(kFrom) / 1000, to_s = static_cast<double>(kTo) / 1000;
  FakePromQuery fake([&](const PromRequest& r) {
    std::vector<PromSeries> out;
    const std::vector<std::pair<std::string, std::string>> gpu = {
        {"Hostname", "n1"}, {"UUID", "GPU-0"}, {"gpu", "0"}};
    auto with = [&](const char* name, const char* value) {
      auto labels = gpu;
      labels.emplace_back(name, value);
      return labels;
    };
    if (r.expr.starts_with("count(")) out.push_back(Series({}, {{0, 8}}));
    if (r.expr.find("(last_over_time(cgov_gpu_phase_seconds_total") != std::string::npos) {
      out.push_back(Series(with("phase", "productive"), {{from_s, 0}, {to_s, 1800}}));
    }
    if (r.expr.find("(last_over_time(cgov_gpu_pattern_seconds_total") != std::string::npos) {
      out.push_back(Series(with("pattern", "sm_active"), {{from_s, 0}, {to_s, 1e15}}));
    }
    if (r.expr.find("(last_over_time(cgov_gpu_swings_total") != std::string::npos) {
      out.push_back(Series(gpu, {{from_s, 0}, {to_s, 1e15}}));
    }
    // Energy by phase, in joules: a store's largest value (1e15 J) is bounded at 1 TJ a series.
    if (r.expr.find("(last_over_time(cgov_gpu_phase_energy_joules_total") != std::string::npos) {
      out.push_back(Series(with("phase", "productive"), {{from_s, 0}, {to_s, 1e15}}));
      out.push_back(Series(with("phase", "truly_idle"), {{from_s, 0}, {to_s, 1e15}}));
    }
    return Result<std::vector<PromSeries>>(out);
  });
  Result<HistoryInput> in = LoadFleet(fake, kFrom, kTo, {.rules = RecordingRules::kOff});
  ASSERT_TRUE(in.ok()) << in.status().message();
  int64_t sm_active = 0, energy_mj = 0;
  int swings = 0;
  for (const HourBucket& b : in->hours) {
    for (const auto& [id, g] : b.gpus) {
      sm_active += g.usage.sm_active_ms_x100;
      swings += g.usage.transitions;
      energy_mj += g.usage.EnergyMj();
    }
  }
  EXPECT_EQ(energy_mj, 2 * int64_t{1'000'000'000'000'000}) << "1 TJ a series, no overflow";
  EXPECT_EQ(sm_active, int64_t{100'000'000'000'000'000});  // 1e12 s x 1e5: the bound
  EXPECT_EQ(swings, 1'000'000'000);
}

// The first failure ends the batch: nothing after it is asked, and its words reach the user.
TEST(FleetLoadOnAFake, TheStoresFirstErrorEndsTheLoadAndNothingAfterItIsAsked) {
  FakePromQuery fake([](const PromRequest&) -> Result<std::vector<PromSeries>> {
    return Unavailable("query timed out in expression evaluation");
  });
  Result<HistoryInput> in = LoadFleet(fake, kFrom, kTo, {.rules = RecordingRules::kOff});
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("query timed out"), std::string::npos);
  EXPECT_EQ(fake.requests().size(), 1u);
}

// Issue 50: VictoriaMetrics leaves out the points of a range query within its latency offset
// (30 s) of now. A window ending now has its end read by instant queries (sent with nocache=1,
// which VictoriaMetrics answers for the time they name), and no range query reaches into the
// last 5 minutes; the same window an hour ago is read in range queries.
TEST(FleetLoadOnAFake, TimesNearNowAreNeverReadInARangeQuery) {
  const int64_t now = Env::Default()->WallMs();
  for (const int64_t until : {now, now - 3'600'000}) {
    FakePromQuery fake([](const PromRequest&) { return std::vector<PromSeries>(); });
    (void)LoadFleet(fake, until - 20 * 60'000, until, {.rules = RecordingRules::kOff});
    int ranges = 0, instants_at_until = 0;
    for (const PromRequest& r : fake.requests()) {
      if (r.step_s > 0) {
        ++ranges;
        EXPECT_LE(r.end_s * 1000, static_cast<double>(now - 5 * 60'000)) << r.expr;
      } else if (std::llround(r.time_s * 1000) == until) {
        ++instants_at_until;
      }
    }
    if (until == now) {
      // Its end by instant queries (an hour boundary inside it, older than 5 minutes, may still
      // be read in a range with the window's start).
      EXPECT_GT(instants_at_until, 0);
    } else {
      EXPECT_GT(ranges, 0) << "an hour ago: both ends in one range query";
    }
  }
}

}  // namespace
}  // namespace cgov
