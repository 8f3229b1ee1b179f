#include "app/top/fleet_top_source.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

PromSeries Series(std::vector<std::pair<std::string, std::string>> labels, double value) {
  PromSeries s;
  for (const auto& [k, v] : labels) s.AddLabel(k, v);
  s.points.push_back({1e9, value});
  return s;
}

TEST(FleetTopNow, EachGpusPhaseIsTheOneItsCountersGrewMostInAndIdlePricesAreWaste) {
  auto gpu = [](std::string host, std::string index, std::string phase, double rate) {
    return Series(
        {{"Hostname", host}, {"UUID", "GPU-" + host + index}, {"gpu", index}, {"phase", phase}},
        rate);
  };
  std::vector<std::vector<PromSeries>> answers(FleetNowQueries().size());
  // a/1 (listed first, GPU 1) was idle-held for most of the interval; a/0 productive; b/0's
  // counters did not grow but for "unknown": no phase.
  answers[0] = {gpu("a", "1", "idle_held", 0.8), gpu("a", "1", "productive", 0.2),
                gpu("a", "0", "productive", 1), gpu("b", "0", "unknown", 1)};
  answers[1] = {Series({{"Hostname", "a"}, {"UUID", "GPU-a0"}, {"gpu", "0"}}, 0.9),
                Series({{"Hostname", "a"}, {"UUID", "GPU-a1"}, {"gpu", "1"}}, 0.1)};
  answers[2] = {Series({{"Hostname", "a"}, {"UUID", "GPU-a0"}, {"gpu", "0"}}, 300),
                Series({{"Hostname", "a"}, {"UUID", "GPU-a1"}, {"gpu", "1"}}, 60)};
  answers[3] = {Series({{"Hostname", "a"}, {"UUID", "GPU-a0"}, {"gpu", "0"}}, 2.5),
                Series({{"Hostname", "a"}, {"UUID", "GPU-a1"}, {"gpu", "1"}}, 2.5),
                Series({{"Hostname", "b"}, {"UUID", "GPU-b0"}, {"gpu", "0"}}, 1)};
  answers[4] = {Series({{"Hostname", "a"}}, 1.5), Series({{"Hostname", "b"}}, 40)};
  answers[5] = {Series({{"Hostname", "a"}, {"user", "bob"}}, 1),
                Series({{"Hostname", "b"}, {"user", "bob"}}, 0.5),
                Series({{"Hostname", "b"}, {"user", "carol"}}, 1)};
  TopFrame f;
  f.source = "prometheus";
  TopNode from_day;
  from_day.host = "a";
  from_day.idle_ms_today = 7'200'000;
  f.nodes.push_back(from_day);
  TopWaster bob;
  bob.user = "bob";
  bob.idle_held_ms_today = 3'600'000;
  f.wasters.push_back(bob);
  FillFleetNow(answers, &f);
  ASSERT_EQ(f.nodes.size(), 2u);
  const TopNode& a = f.nodes[0];
  EXPECT_EQ(a.host, "a");
  ASSERT_EQ(a.phases.size(), 2u);
  EXPECT_EQ(a.phases[0], Phase::kProductive);
  EXPECT_EQ(a.phases[1], Phase::kIdleHeld);
  EXPECT_NEAR(*a.mean_util_pct, 50, 1e-9);
  EXPECT_NEAR(*a.power_w, 360, 1e-9);
  EXPECT_EQ(a.cost_per_hour, 5'000'000);
  EXPECT_EQ(a.waste_per_hour, 2'500'000);
  EXPECT_EQ(a.idle_ms_today, 7'200'000) << "the day's figure is kept";
  EXPECT_EQ(*a.sample_age_s, 1.5);
  const TopNode& b = f.nodes[1];
  ASSERT_EQ(b.phases.size(), 1u);
  EXPECT_FALSE(b.phases[0].has_value());
  EXPECT_EQ(b.waste_per_hour, 0) << "no phase, no waste";
  EXPECT_EQ(f.cost_per_hour, 6'000'000);
  EXPECT_EQ(f.waste_per_hour, 2'500'000);
  EXPECT_NEAR(f.idle_share_pct, 100.0 * 2.5 / 6, 1e-9);
  ASSERT_EQ(f.wasters.size(), 2u);
  EXPECT_EQ(f.wasters[0].user, "bob");
  EXPECT_NEAR(f.wasters[0].idle_held_gpus_now, 1.5, 1e-9);
  EXPECT_EQ(f.wasters[0].hosts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.wasters[1].user, "carol") << "idle-held now, not yet in the day's figures";
  // The terminal's rows.
  TopLayout layout;
  layout.width = 100;
  const std::string text = RenderTopText(f, layout);
  EXPECT_NE(text.find("2 node(s) · 3 GPU(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("▓░"), std::string::npos) << text;
  EXPECT_NE(text.find("Top wasters today: 2"), std::string::npos) << text;
}

}  // namespace
}  // namespace cgov
