// `cgov prices`: the catalog as a user sees it, and what a GPU name resolves to.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

TEST(PricesE2E, ListsTheCatalogAndResolvesGpuNames) {
  RunResult r = RunProgram({CgovBinary(), "prices", "--gpu", "NVIDIA L4", "--gpu", "NVIDIA L40S"},
                           {{"CGOV_PRICE_CATALOG", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Price catalog: built in (data/prices.json)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p5.48xlarge"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  NVIDIA L4: $0.8048/GPU-hour (catalog list price: NVIDIA L4"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  NVIDIA L40S: price unknown: no catalog entry"), std::string::npos)
      << "the L4 entry does not price an L40S:\n" << r.out;

  RunResult j = RunProgram({CgovBinary(), "prices", "--format", "json", "--gpu", "Tesla T4"}, {});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json doc = json::parse(j.out);
  ASSERT_FALSE(doc["gpu_models"].empty());
  for (const json& m : doc["gpu_models"]) {
    EXPECT_TRUE(m.contains("as_of") && m.contains("source")) << m.dump();
  }
  ASSERT_EQ(doc["resolved"].size(), 1u);
  EXPECT_EQ(doc["resolved"][0]["gpu"], "Tesla T4");
  EXPECT_DOUBLE_EQ(doc["resolved"][0]["usd_per_gpu_hour"].get<double>(), 0.526);
}

TEST(PricesE2E, ABadCatalogOrFormatIsAClearError) {
  TempDir dir;
  WriteFile(dir / "bad.json", "{\"schema_version\": 1,");
  RunResult bad = RunProgram({CgovBinary(), "prices", "--price-catalog", dir / "bad.json"}, {});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--price-catalog: " + (dir / "bad.json") + ": not valid JSON"),
            std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << "no partial listing";
  RunResult format = RunProgram({CgovBinary(), "prices", "--format", "yaml"}, {});
  EXPECT_EQ(format.exit_code, 2) << format.err;
}

}  // namespace
}  // namespace cgov::e2e
