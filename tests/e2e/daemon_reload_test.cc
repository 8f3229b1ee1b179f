// SIGHUP (issue 17): the daemon re-reads its price catalog, reopens its database and prices the
// GPUs again from then on, in /metrics and in the database; it does not die (it did: exit 129).
#include <signal.h>

#include <gtest/gtest.h>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string Catalog(double usd) {
  return "{\"schema_version\": 1, \"instance_types\": [], \"gpu_models\": [{\"model\": \"ours\", "
         "\"match\": [\"NVIDIA\"], \"on_demand_usd_per_gpu_hour\": " +
         std::to_string(usd) +
         ", \"spot_usd_per_gpu_hour\": null, \"source\": \"our contract\", \"as_of\": "
         "\"2026-11-01\"}]}";
}

std::string Metrics(int port) {
  return RunProgram(
             {"/usr/bin/curl", "-s", "http://127.0.0.1:" + std::to_string(port) + "/metrics"}, {})
      .out;
}

bool PriceIs(int port, const std::string& value) {
  const std::string m = Metrics(port);
  const size_t at = m.find("\ncgov_gpu_price_usd_per_hour{");
  if (at == std::string::npos) return false;
  const size_t end = m.find('\n', at + 1);
  return m.substr(at, end - at).ends_with(" " + value);
}

TEST(DaemonReloadE2E, SighupRereadsTheCatalogAndKeepsRunning) {
  TempDir dir;
  const std::string db = dir / "h.db", catalog = dir / "prices.json";
  const int port = FreePort();
  WriteFile(catalog, Catalog(1.0));
  Started daemon = StartProgram(
      {CgovBinary(), "daemon", "--db", db, "--interval", "1s", "--nvml-lib", FakeNvml("full"),
       "--listen", "127.0.0.1:" + std::to_string(port), "--price-catalog", catalog},
      {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor(TicksTaken(port, 2), 15));
  EXPECT_TRUE(WaitFor([&] { return PriceIs(port, "1"); }, 5)) << Metrics(port);

  WriteFile(catalog, Catalog(3.0));
  kill(daemon.pid, SIGHUP);
  EXPECT_TRUE(WaitFor([&] { return PriceIs(port, "3"); }, 10)) << Metrics(port);
  EXPECT_TRUE(WaitFor(
      [&] { return QueryDb(db, "SELECT count(DISTINCT micro_usd) FROM gpu_price") == 2; }, 5))
      << "the database prices the GPUs at $3 from the reload on";
  // A reload commits what the daemon took so far, and it goes on taking ticks.
  const int64_t ticks = QueryDb(db, "SELECT count(*) FROM tick");
  EXPECT_GE(ticks, 2);
  EXPECT_TRUE(WaitFor(TicksTaken(port, ticks + 2), 10)) << "still recording after SIGHUP";

  // A catalog that no longer parses: said, and the one in use kept.
  WriteFile(catalog, "{\"schema_version\": 1,");
  kill(daemon.pid, SIGHUP);
  EXPECT_TRUE(WaitFor(TicksTaken(port, ticks + 4), 10));
  EXPECT_TRUE(PriceIs(port, "3")) << Metrics(port);

  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 15);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  EXPECT_NE(stopped.err.find("SIGHUP: database reopened, price catalog " + catalog + " re-read"),
            std::string::npos)
      << stopped.err;
  EXPECT_NE(stopped.err.find("SIGHUP: keeping the price catalog in use: --price-catalog: " +
                             catalog + ": not valid JSON"),
            std::string::npos)
      << stopped.err;
  // Nothing taken was lost across the two reloads and the stop: every tick is in the database.
  const size_t at = stopped.err.find("stopped after ");
  ASSERT_NE(at, std::string::npos) << stopped.err;
  EXPECT_EQ(QueryDb(db, "SELECT count(*) FROM tick"), std::stoll(stopped.err.substr(at + 14)))
      << stopped.err;
}

}  // namespace
}  // namespace cgov::e2e
