#include "report/summary_read.h"
#include "app/run/run_digests.h"

#include <fstream>

#include <gtest/gtest.h>

#include "report/summary_json.h"

namespace cgov {
namespace {

RunSummary Summary() {
  RunSummary s;
  s.command = {"train"};
  s.exit_code = 0;
  s.duration_s = 60;
  s.tags = {{"project", "vision"}, {"branch", "main"}};
  s.cost.priced = true;
  s.cost.gpu_hours = 2;
  s.cost.effective_gpu_hours = 1.5;
  s.cost.waste_fraction = 0.25;
  s.cost.total = s.cost.exact_total = 4'000'000;
  s.cost.waste = 1'000'000;
  s.cost.work = 500;
  s.cost.unit = "samples";
  s.cost.per_unit_usd = 0.008;
  s.phase_share_pct = {10, 20, 30, 40, 0};
  Finding f;
  f.id = "unused_gpu";
  f.severity = Severity::kWarning;
  f.title = "Unused GPUs";
  s.findings.push_back(f);
  return s;
}

TEST(SummaryRead, ReadsWhatItWrote) {
  auto d = DigestFromSummaryJson(SummaryJson(Summary()), "s.json");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->tags.at("project"), "vision");
  EXPECT_EQ(d->exit_code, 0);
  EXPECT_DOUBLE_EQ(*d->total_usd, 4);
  EXPECT_EQ(d->total_micro_usd, 4'000'000) << "the exact total a comparison gates on";
  EXPECT_DOUBLE_EQ(d->waste_pct, 25);
  EXPECT_DOUBLE_EQ(*d->work, 500);
  EXPECT_EQ(d->unit, "samples");
  EXPECT_DOUBLE_EQ(*d->cost_per_unit_usd, 0.008);
  EXPECT_DOUBLE_EQ(d->phase_share_pct[3], 40);
  ASSERT_EQ(d->findings.size(), 1u);
  EXPECT_EQ(d->findings[0].severity, Severity::kWarning);
}

TEST(SummaryRead, ErrorsNameTheFileAndTheField) {
  nlohmann::json doc = SummaryJson(Summary());
  doc["cost"]["total_usd"] = "4";
  EXPECT_EQ(DigestFromSummaryJson(doc, "a/summary.json").status().message(),
            "a/summary.json: cost.total_usd: expected a number or null");
  doc = SummaryJson(Summary());
  doc["findings"][0]["severity"] = "severe";
  EXPECT_EQ(DigestFromSummaryJson(doc, "x").status().message(),
            "x: findings[0].severity: expected info, warning or critical");
  doc = SummaryJson(Summary());
  doc["schema_version"] = 2;
  EXPECT_NE(DigestFromSummaryJson(doc, "x").status().message().find("schema_version"),
            std::string::npos);
  doc = SummaryJson(Summary());
  doc["cost"]["total_usd"] = 1e300;  // would overflow the cents cgov runs sums
  EXPECT_EQ(DigestFromSummaryJson(doc, "x").status().message(),
            "x: cost.total_usd: expected a number between -1e12 and 1e12");
  EXPECT_EQ(DigestFromSummaryJson(nlohmann::json::array(), "x").status().message(),
            "x: (document): expected a JSON object (summary.json)");
}

TEST(SummaryRead, MalformedJsonNamesTheLine) {
  const std::string path = ::testing::TempDir() + "/cgov_summary_read_bad.json";
  std::ofstream(path) << "{\n  \"schema_version\": 1,\n  \"run\": {,\n}\n";
  auto d = ReadRunDigest(path);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message().rfind(path + ":3: not JSON", 0), 0u) << d.status().message();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cgov
