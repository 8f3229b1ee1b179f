// `cgov prices`: the catalog as a user sees it, and what a GPU name resolves to.
#include <signal.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

TEST(PricesE2E, ListsTheCatalogAndResolvesGpuNames) {
  RunResult r = RunProgram({CgovBinary(), "prices", "--gpu", "NVIDIA L4", "--gpu", "NVIDIA L40S",
                            "--gpu", "NVIDIA A100-SXM4-80GB", "--gpu", "NVIDIA V100"},
                           {{"CGOV_PRICE_CATALOG", ""}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Price catalog: built in (data/prices.json)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p5.48xlarge us-east-1"), std::string::npos) << r.out;
  // Each model's reference with its range and how many providers it is the median of.
  // Spot: GCP's discount (its $6.571 spot against its own $10.9791) on the $5.435 reference.
  EXPECT_NE(r.out.find("  H100 SXM 80GB      $5.4350 $2.69–$12.29          6   $3.2529  "),
            std::string::npos)
      << r.out;
  // Regression (issue 43, 2): the answer comes first, the catalog after it.
  EXPECT_EQ(r.out.rfind("Resolved\n  NVIDIA L4: $0.8048/GPU-hour", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  NVIDIA L4: $0.8048/GPU-hour (catalog list price: L4 24GB, aws g6.xlarge"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  NVIDIA L40S: $1.1700/GPU-hour (reference price: L40S 48GB, median of 2 "
                       "providers'"),
            std::string::npos)
      << "the L4 entry does not price an L40S:\n"
      << r.out;
  EXPECT_NE(r.out.find("  NVIDIA A100-SXM4-80GB: $2.7900/GPU-hour (reference price: A100 SXM 80GB"),
            std::string::npos)
      << "not the 40GB price:\n"
      << r.out;
  EXPECT_NE(r.out.find("  NVIDIA V100: price unknown: the catalog has no on-demand price for V100"),
            std::string::npos)
      << r.out;

  RunResult j = RunProgram({CgovBinary(), "prices", "--format", "json", "--gpu", "Tesla T4"}, {});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json doc = json::parse(j.out);
  ASSERT_FALSE(doc["gpu_models"].empty());
  for (const json& m : doc["gpu_models"]) {
    for (const json& o : m["offers"]) {
      EXPECT_TRUE(o.contains("as_of") && o.contains("source") && o.contains("provider"))
          << o.dump();
    }
  }
  ASSERT_EQ(doc["resolved"].size(), 1u);
  EXPECT_EQ(doc["resolved"][0]["gpu"], "Tesla T4");
  EXPECT_DOUBLE_EQ(doc["resolved"][0]["usd_per_gpu_hour"].get<double>(), 0.526);
  const json& h100 = doc["gpu_models"][2];
  EXPECT_EQ(h100["label"], "H100 SXM 80GB");
  EXPECT_DOUBLE_EQ(h100["on_demand_reference"]["usd_per_gpu_hour"].get<double>(), 5.435);
  EXPECT_DOUBLE_EQ(h100["on_demand_reference"]["low_usd"].get<double>(), 2.69);
  EXPECT_DOUBLE_EQ(h100["on_demand_reference"]["high_usd"].get<double>(), 12.29);
  EXPECT_EQ(h100["on_demand_reference"]["providers"], 6);
}

// Regression (issue 43, 2): --spot gave $6.571 for an H100 whose on-demand reference is $5.435.
TEST(PricesE2E, ASpotPriceIsNeverAboveOnDemand) {
  RunResult on_demand =
      RunProgram({CgovBinary(), "prices", "--format", "json", "--gpu", "NVIDIA H100 80GB HBM3"},
                 {{"CGOV_PRICE_CATALOG", ""}});
  RunResult spot = RunProgram(
      {CgovBinary(), "prices", "--format", "json", "--spot", "--gpu", "NVIDIA H100 80GB HBM3"},
      {{"CGOV_PRICE_CATALOG", ""}});
  ASSERT_EQ(on_demand.exit_code, 0) << on_demand.err;
  ASSERT_EQ(spot.exit_code, 0) << spot.err;
  const double od = json::parse(on_demand.out)["resolved"][0]["usd_per_gpu_hour"].get<double>();
  const double sp = json::parse(spot.out)["resolved"][0]["usd_per_gpu_hour"].get<double>();
  EXPECT_DOUBLE_EQ(od, 5.435);
  EXPECT_NEAR(sp, 5.435 * 6.571 / 10.9791, 1e-6);
  const json catalog = json::parse(spot.out);  // (kept: a range over a temporary's member dangles)
  for (const json& m : catalog["gpu_models"]) {
    if (m["spot_reference"].is_null()) continue;
    EXPECT_LT(m["spot_reference"]["high_usd"].get<double>(),
              m["on_demand_reference"]["usd_per_gpu_hour"].get<double>())
        << m["label"];
  }
}

// Issue 57, 12: docs/prices.md showed an H100 spot price ($6.5710) the binary no longer printed
// ($3.2529). The docs' block is what `cgov prices` prints, byte for byte.
TEST(PricesE2E, TheDocsShowWhatTheBinaryPrints) {
  RunResult r = RunProgram({CgovBinary(), "prices"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string docs = ReadFile(DocsFile("prices.md"));
  const std::string head = "the same):\n\n```\n";
  const size_t start = docs.find(head);
  ASSERT_NE(start, std::string::npos) << "docs/prices.md lost its `cgov prices` block";
  const size_t from = start + head.size();
  EXPECT_EQ(docs.substr(from, docs.find("```", from) - from), r.out)
      << "regenerate docs/prices.md's block with `cgov prices`";
}

// Issue 57, 5: `report --db ... --spot` on a daemon's history silently kept the daemon's
// on-demand price. --spot prices the window at the catalog's spot price, and says so.
TEST(PricesE2E, SpotPricesADaemonsHistoryToo) {
  TempDir dir;
  const std::string db = dir / "h.db";
  Started daemon = StartProgram({CgovBinary(), "daemon", "--db", db, "--interval", "200ms",
                                 "--commit-every", "0s", "--nvml-lib", FakeNvml("full")},
                                {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8_fast")}});
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 3; }, 20));
  kill(daemon.pid, SIGTERM);
  ASSERT_EQ(WaitProgram(daemon, 15).exit_code, 0);
  auto report = [&](bool spot) {
    std::vector<std::string> argv = {CgovBinary(), "report", "--db",     db,
                                     "--since",    "1h",     "--format", "json"};
    if (spot) argv.push_back("--spot");
    RunResult r = RunProgram(argv, {});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  };
  const nlohmann::json on_demand = report(false), spot = report(true);
  const std::string source = spot["cost"]["price_source"];
  EXPECT_NE(source.find("spot"), std::string::npos) << source;
  EXPECT_EQ(on_demand["cost"]["price_source"].get<std::string>().find("spot"), std::string::npos);
  EXPECT_LT(spot["cost"]["total_micro_usd"].get<int64_t>(),
            on_demand["cost"]["total_micro_usd"].get<int64_t>());
}

TEST(PricesE2E, ABadCatalogOrFormatIsAClearError) {
  TempDir dir;
  WriteFile(dir / "bad.json", "{\"schema_version\": 1,");
  RunResult bad = RunProgram({CgovBinary(), "prices", "--price-catalog", dir / "bad.json"}, {});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--price-catalog: " + (dir / "bad.json") + ": not valid JSON"),
            std::string::npos)
      << bad.err;
  EXPECT_TRUE(bad.out.empty()) << "no partial listing";
  RunResult format = RunProgram({CgovBinary(), "prices", "--format", "yaml"}, {});
  EXPECT_EQ(format.exit_code, 2) << format.err;
}

}  // namespace
}  // namespace cgov::e2e
