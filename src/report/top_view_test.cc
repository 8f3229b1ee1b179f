#include "report/top_view.h"

#include <gtest/gtest.h>

#include "core/text.h"

#include <nlohmann/json.hpp>
#include <sstream>

namespace cgov {
namespace {

TopFrame TwoGpus() {
  TopFrame f;
  f.host = "box";
  f.at_ms = 1'795'000'000'000;
  f.day_start_ms = 1'794'960'000'000;
  f.priced = true;
  f.cost_per_hour = 5'000'000;
  f.waste_per_hour = 2'500'000;
  f.idle_share_pct = 50;
  f.idle_ms_today = 7'200'000;
  f.idle_cost_today = 5'000'000;
  TopGpu busy;
  busy.index = 0;
  busy.label = "0";
  busy.phase = Phase::kProductive;
  busy.util_pct = 80;
  busy.util_history = {0, 50, 100, std::nullopt, 80};
  busy.price_per_hour = 2'500'000;
  busy.holders.push_back({41000, "alice", "llm", "ml/train-0",
                          "python train.py "
                          "--a-very-long-argument-list-that-will-not-fit-in-eighty-columns",
                          70000});
  TopGpu idle = busy;
  idle.index = 1;
  idle.label = "1";
  idle.phase = Phase::kIdleHeld;
  idle.util_pct = 1;
  idle.holders = {{42000, "bob", "notebooks", "", "ipykernel", 8000}};
  f.gpus = {busy, idle};
  f.idle_held.push_back({"bob", "ipykernel", 42000, 1, "notebook", 3'600'000, 2'500'000,
                         "shut the kernel down when idle", ""});
  return f;
}

TEST(TopView, SparklineMapsZeroToHundredOntoEightBars) {
  EXPECT_EQ(Sparkline({0, 50, 100, std::nullopt, 99}), "▁▅█ █");
}

TEST(TopView, TextFitsTheWidthAndSortsAndFilters) {
  TopLayout layout;
  layout.width = 80;
  const std::string text = RenderTopText(TwoGpus(), layout);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(TextWidth(line), 80u) << line;
  }
  EXPECT_NE(text.find("now    $5.00/h for the GPUs, $2.50/h of it idle (50 %)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("today  2.00 idle GPU-hours, $5.00 wasted"), std::string::npos) << text;
  EXPECT_NE(text.find("Idle-held now: 1"), std::string::npos);
  EXPECT_NE(text.find("1h"), std::string::npos);  // idle for an hour
  // By waste: the idle GPU first.
  layout.sort = TopLayout::Sort::kWaste;
  const std::string by_waste = RenderTopText(TwoGpus(), layout);
  EXPECT_LT(by_waste.find("idle, memory held"), by_waste.find("productive"));
  // Filtered to bob: alice's GPU and lines are gone.
  layout.filter = "bob";
  const std::string bob = RenderTopText(TwoGpus(), layout);
  EXPECT_EQ(bob.find("alice"), std::string::npos) << bob;
  EXPECT_NE(bob.find("ipykernel"), std::string::npos);
  // Without process lines; in colour, idle-held is red.
  layout = TopLayout{};
  layout.processes = false;
  layout.style.color = true;
  const std::string plain = RenderTopText(TwoGpus(), layout);
  EXPECT_EQ(plain.find("└"), std::string::npos);
  EXPECT_NE(plain.find("\x1b[31m░ idle, memory held\x1b[0m"), std::string::npos) << plain;
}

// Issue 58, 4: `cgov top --width 80` printed 136-column lines with wide characters (bytes and
// code points counted, not columns).
TEST(TopView, WideCharactersAreMeasuredInColumns) {
  TopFrame f = TwoGpus();
  f.gpus[0].holders[0].user = "数据科学家团队成员";
  f.gpus[0].holders[0].command = "python 训练大型语言模型的脚本.py --数据集 全部数据 🚀🚀🚀🚀🚀🚀🚀🚀🚀";
  f.idle_held[0].command = "ｉｐｙｋｅｒｎｅｌ全角文字のノートブックをずっと開いたままにしている";
  TopLayout layout;
  layout.width = 80;
  const std::string text = RenderTopText(f, layout);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(DisplayWidth(line), 80u) << line;
  }
  EXPECT_EQ(DisplayWidth("数据"), 4u);
  EXPECT_EQ(DisplayWidth("e\u0301"), 1u);  // a combining accent takes no column
  EXPECT_EQ(DisplayWidth("🚀a"), 3u);
}

TEST(TopView, JsonCarriesEveryFigure) {
  const nlohmann::json j = nlohmann::json::parse(RenderTopJson(TwoGpus()));
  EXPECT_EQ(j["schema"], "cgov.top");
  EXPECT_EQ(j["now"]["cost_per_hour_usd"], 5.0);
  EXPECT_EQ(j["now"]["idle_cost_per_hour_usd"], 2.5);
  EXPECT_EQ(j["now"]["idle_share_pct"], 50.0);
  EXPECT_EQ(j["today"]["idle_gpu_seconds"], 7200.0);
  EXPECT_EQ(j["today"]["idle_cost_usd"], 5.0);
  EXPECT_EQ(j["gpus"][1]["phase"], "idle_held");
  EXPECT_TRUE(j["gpus"][0]["util_history_pct"][3].is_null());
  EXPECT_EQ(j["gpus"][0]["holders"][0]["where"], "ml/train-0");
  EXPECT_EQ(j["idle_held_now"][0]["idle_seconds"], 3600.0);
  EXPECT_EQ(j["idle_held_now"][0]["kind"], "notebook");
  EXPECT_TRUE(j["idle_held_now"][0]["policy"].is_null());
}

TEST(TopView, APolicyVerdictGetsItsOwnColumn) {
  TopLayout layout;
  layout.width = 160;
  TopFrame f = TwoGpus();
  EXPECT_EQ(RenderTopText(f, layout).find("policy"), std::string::npos) << "none: no column";
  f.idle_held[0].policy = "notebooks in 3h";
  const std::string text = RenderTopText(f, layout);
  const size_t header = text.find("idle for");
  ASSERT_NE(header, std::string::npos);
  EXPECT_LT(text.find("today", header), text.find("policy", header));
  EXPECT_LT(text.find("policy", header), text.find("advice", header));
  EXPECT_NE(text.find("notebooks in 3h"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(RenderTopJson(f))["idle_held_now"][0]["policy"],
            "notebooks in 3h");
}

// Issue 62: the watts drawn now and the idle GPUs' part of them; a GPU without a reading adds
// nothing, and a fleet (nodes' power summed) has no idle part.
TEST(TopView, ThePowerDrawnNowAndTheIdleGpusPartOfIt) {
  TopFrame f = TwoGpus();
  EXPECT_FALSE(f.PowerNowW()) << "no GPU reports power";
  EXPECT_EQ(RenderTopText(f, TopLayout{}).find("drawn now"), std::string::npos);
  f.gpus[0].power_w = 612.5;
  f.gpus[1].power_w = 71.5;
  TopGpu unread = f.gpus[1];
  unread.index = 2;
  unread.power_w.reset();
  f.gpus.push_back(unread);
  EXPECT_DOUBLE_EQ(*f.PowerNowW(), 684);
  EXPECT_DOUBLE_EQ(*f.IdlePowerNowW(), 71.5);
  const std::string text = RenderTopText(f, TopLayout{});
  EXPECT_NE(text.find("power  684 W drawn now, 72 W of it by idle GPUs"), std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(RenderTopJson(f));
  EXPECT_EQ(j["now"]["power_w"], 684.0);
  EXPECT_EQ(j["now"]["idle_power_w"], 71.5);
  TopFrame fleet;
  fleet.source = "prometheus";
  fleet.nodes.push_back(TopNode{});
  fleet.nodes.back().power_w = 2000;
  EXPECT_DOUBLE_EQ(*fleet.PowerNowW(), 2000);
  EXPECT_FALSE(fleet.IdlePowerNowW());
  EXPECT_NE(RenderTopText(fleet, TopLayout{}).find("power  2000 W drawn now\n"), std::string::npos);
}

}  // namespace
}  // namespace cgov
