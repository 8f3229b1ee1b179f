// `cgov report --billing`: a priced demo week joined to hand-written AWS CUR, GCP and Azure
// extracts (tests/fixtures/billing, written from each provider's documented columns). Every
// billed dollar lands on a row, idle or unmatched, to the cent, under each idle policy.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

class BillingE2E : public ::testing::Test {
 protected:
  // One simulated week (host demo-box, 8 GPUs), written once for every test that reads it.
  // 10 s ticks: the same week and GPU-hours as the default 1 s, a tenth of the time to write.
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    week_ = new std::string(SharedDemoDb({"--start", "2026-11-16", "--interval", "10s"}));
    ASSERT_NE(*week_, "");
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
    delete week_;
    week_ = nullptr;
  }

  static json Showback(const std::string& bill, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {CgovBinary(),    "report",
                                     "--db",          *week_,
                                     "--format",      "json",
                                     "--billing",     Fixture("billing/" + bill),
                                     "--billing-map", Fixture("billing/demo-week-map.csv")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunResult r = RunProgram(argv, {{"CGOV_PRICE_CATALOG", ""}}, 60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (r.exit_code != 0) return json();
    const json report = json::parse(r.out);
    EXPECT_EQ(SchemaErrors("report.schema.json", report), "");
    return report["showback"];
  }

  // sum(rows.usd) + idle_usd + unmatched_usd == billed_total_usd, to the cent.
  static void ExpectReconciles(const json& s, int64_t billed_cents) {
    ASSERT_TRUE(s.is_object());
    int64_t sum = Cents(s["idle_usd"]) + Cents(s["unmatched_usd"]);
    for (const json& row : s["rows"]) sum += Cents(row["usd"]);
    EXPECT_EQ(sum, Cents(s["billed_total_usd"])) << s.dump(1);
    EXPECT_EQ(Cents(s["billed_total_usd"]), billed_cents) << s.dump(1);
    EXPECT_EQ(s["estimate"], false);
  }

  static TempDir* dir_;
  static std::string* week_;
};

TempDir* BillingE2E::dir_ = nullptr;
std::string* BillingE2E::week_ = nullptr;

TEST_F(BillingE2E, AnAwsCurExtractReconcilesToTheCentUnderEachIdlePolicy) {
  // 24 hours of p5.48xlarge at $55.04, half an hour ($27.52), a $100 credit, an EBS volume
  // ($0.0416), two instances cgov never saw ($1.6096 + $27.44705) and tax ($132.8765):
  // $1,410.45475, billed as $1,410.45.
  const json plain = Showback("demo-week-cur.csv");
  ExpectReconciles(plain, 141045);
  EXPECT_EQ(plain["idle_cost_policy"], "unallocated");
  EXPECT_EQ(plain["lines"], 31);
  EXPECT_EQ(plain["matched_lines"], 26) << "the box's 24 hours, its half hour and its credit";
  EXPECT_EQ(Cents(plain["unmatched_usd"]), 16197) << "EBS + strangers + tax";
  EXPECT_GT(Cents(plain["idle_usd"]), 0) << "GPU 7 stood idle all day";
  ASSERT_FALSE(plain["rows"].empty());
  EXPECT_EQ(plain["rows"][0]["key"], "alice") << "her DDP job held 4 GPUs";
  EXPECT_NEAR(plain["rows"][0]["gpu_hours"].get<double>(), 124.0, 1.0);
  bool never_saw = false;
  for (const json& n : plain["notes"]) {
    never_saw = never_saw || n.get<std::string>().find("i-0stranger0000000002: no host cgov saw") !=
                                 std::string::npos;
  }
  EXPECT_TRUE(never_saw) << plain["notes"].dump(1);

  const json spread = Showback("demo-week-cur.csv", {"--idle-cost", "proportional"});
  ExpectReconciles(spread, 141045);
  EXPECT_EQ(Cents(spread["idle_usd"]), 0);
  EXPECT_EQ(spread["unmatched_usd"], plain["unmatched_usd"]) << "only idle moves";

  const json owned = Showback("demo-week-cur.csv", {"--idle-cost", "owner:team=platform"});
  ExpectReconciles(owned, 141045);
  EXPECT_EQ(Cents(owned["idle_usd"]), 0);
  bool platform = false;
  for (const json& row : owned["rows"]) {
    if (row["key"] == "team=platform") {
      platform = true;
      EXPECT_EQ(Cents(row["usd"]), Cents(plain["idle_usd"]));
    }
  }
  EXPECT_TRUE(platform) << owned.dump(1);

  // By team: alice's and carol's time under their CGOV_TEAM, the idle line unchanged.
  const json team = Showback("demo-week-cur.csv", {"--by", "team"});
  ExpectReconciles(team, 141045);
  EXPECT_EQ(team["by"], "team");
  EXPECT_EQ(team["idle_usd"], plain["idle_usd"]);
}

TEST_F(BillingE2E, GcpAndAzureExportsReconcileToo) {
  // GCP: six hours at $88.2541 on demo-box, an L4 notebook cgov never saw, storage.
  for (const char* policy : {"unallocated", "proportional", "owner:team=platform"}) {
    const json gcp = Showback("demo-week-gcp.csv", {"--idle-cost", policy});
    ExpectReconciles(gcp, 53142);  // 6 x 88.2541 + 0.5599 + 1.3333 = 531.4178
    EXPECT_EQ(gcp["matched_lines"], 6) << policy;
    EXPECT_EQ(Cents(gcp["unmatched_usd"]), 189) << policy;
    // Azure: two days of ND96isr H100 v5 at $2,359.68 (the VM named as the host), a web VM.
    const json azure = Showback("demo-week-azure.csv", {"--idle-cost", policy});
    ExpectReconciles(azure, 472397);  // 2 x 2359.68 + 4.608
    EXPECT_EQ(azure["matched_lines"], 2) << policy;
    EXPECT_EQ(Cents(azure["unmatched_usd"]), 461) << policy;
  }
}

TEST_F(BillingE2E, TextCsvAndEstimate) {
  RunResult text = RunProgram(
      {CgovBinary(), "report", "--db", *week_, "--billing", Fixture("billing/demo-week-cur.csv"),
       "--billing-map", Fixture("billing/demo-week-map.csv")},
      {}, 60);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Showback (from the bill: aws-cur"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("total (billed)"), std::string::npos);
  EXPECT_NE(text.out.find("$1,410.45"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("2026-11-18T00:00Z → 2026-11-19T00:30Z"), std::string::npos)
      << "without --since the window is the bill's:\n"
      << text.out.substr(0, 300);

  RunResult csv = RunProgram(
      {CgovBinary(), "report", "--db", *week_, "--billing", Fixture("billing/demo-week-cur.csv"),
       "--billing-map", Fixture("billing/demo-week-map.csv"), "--format", "csv"},
      {}, 60);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  ASSERT_EQ(csv.out.rfind("kind,user,gpu_hours,share_pct,usd\n", 0), 0u) << csv.out;
  int64_t rows = 0, total = 0;
  size_t at = csv.out.find('\n') + 1;
  while (at < csv.out.size()) {
    const size_t end = csv.out.find('\n', at);
    const std::string line = csv.out.substr(at, end - at);
    const int64_t cents = std::llround(std::stod(line.substr(line.rfind(',') + 1)) * 100);
    if (line.starts_with("total_billed,")) {
      total += cents;
    } else {
      rows += cents;
    }
    at = end + 1;
  }
  EXPECT_EQ(rows, total) << "the usd column adds up to the billed total:\n" << csv.out;
  EXPECT_EQ(total, 141045);

  // No bill: the same table from the resolved prices, labelled an estimate.
  RunResult estimate =
      RunProgram({CgovBinary(), "report", "--db", *week_, "--since", "7d", "--format", "json"},
                 {{"CGOV_PRICE_CATALOG", ""}}, 60);
  ASSERT_EQ(estimate.exit_code, 0) << estimate.err;
  const json report = json::parse(estimate.out);
  const json& s = report["showback"];
  EXPECT_EQ(s["estimate"], true);
  int64_t sum = Cents(s["idle_usd"]) + Cents(s["unmatched_usd"]);
  for (const json& row : s["rows"]) sum += Cents(row["usd"]);
  EXPECT_EQ(sum, Cents(s["billed_total_usd"]));
  EXPECT_EQ(Cents(s["billed_total_usd"]), Cents(report["cost"]["total_usd"]));
}

TEST_F(BillingE2E, BadBillsAndFlagsAreClearErrors) {
  TempDir dir;
  WriteFile(dir / "bad.csv",
            "host,start,end,cost_usd\ndemo-box,2026-11-18T10:00Z,"
            "2026-11-18T11:00Z,12,5\ndemo-box,2026-11-18T11:00Z,x,1\n");
  RunResult bad =
      RunProgram({CgovBinary(), "report", "--db", *week_, "--billing", dir / "bad.csv"}, {}, 60);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find(dir / "bad.csv" + ":3: end: not a time: 'x'"), std::string::npos)
      << bad.err;
  EXPECT_TRUE(bad.out.empty()) << "no partial report";
  RunResult policy =
      RunProgram({CgovBinary(), "report", "--db", *week_, "--idle-cost", "someone"}, {}, 60);
  EXPECT_EQ(policy.exit_code, 2);
  EXPECT_NE(policy.err.find("--idle-cost someone: expected unallocated, proportional or "
                            "owner:KEY=VALUE"),
            std::string::npos)
      << policy.err;
  RunResult format = RunProgram({CgovBinary(), "report", "--db", *week_, "--billing",
                                 dir / "bad.csv", "--billing-format", "oracle"},
                                {}, 60);
  EXPECT_EQ(format.exit_code, 2) << format.err;
  RunResult missing =
      RunProgram({CgovBinary(), "report", "--db", *week_, "--billing", dir / "none.csv"}, {}, 60);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.csv"), std::string::npos) << missing.err;
}

// The most memory `argv` held (ru_maxrss, KiB) and its exit status, its output thrown away.
std::pair<long, int> MaxRssKib(const std::vector<std::string>& argv) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  return {usage.ru_maxrss, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
}

// Issue 46 item 5: a gzip bomb was decompressed whole before it was refused (a 4 MB file peaked
// at 3.15 GB), and every --billing run allocated 1 GiB first. Now the bill is read a record at
// a time as it decompresses: 1.3 GiB of blank lines (80 gzip members, 5.6 MB) is refused at the
// 1 GiB cap, and 1 GiB of one endless field at its first MiB, each in a few MB of memory.
TEST_F(BillingE2E, AGzipBombIsRefusedInTheMemoryOfItsFile) {
  TempDir dir;
  for (const auto& [name, byte] : {std::pair{"lines", '\n'}, std::pair{"field", 'a'}}) {
    const std::string member = dir / "member.gz";
    ASSERT_EQ(std::system(fmt::format("head -c 16M /dev/zero | tr '\\0' '\\{:03o}' | gzip -1 > {}",
                                      static_cast<int>(byte), member)
                              .c_str()),
              0);
    const std::string one = ReadFile(member);
    std::ofstream bomb(dir / name, std::ios::binary);
    for (int i = 0; i < 80; ++i) bomb << one;  // 1.25 GiB once decompressed
    bomb.close();
    const auto [rss_kib, exit_code] = MaxRssKib(
        {CgovBinary(), "report", "--db", *week_, "--billing", dir / name, "--since", "1h"});
    EXPECT_EQ(exit_code, 1) << name;
    EXPECT_LT(rss_kib, 200 << 10) << name << ": a bomb is refused in the memory of its file";
    RecordProperty(std::string("max_rss_kib_") + name, static_cast<int>(rss_kib));
  }
  RunResult r =
      RunProgram({CgovBinary(), "report", "--db", *week_, "--billing", dir / "lines"}, {}, 60);
  EXPECT_NE(r.err.find(dir / "lines" + ": more than 1024 MiB once decompressed"), std::string::npos)
      << r.err;
  r = RunProgram({CgovBinary(), "report", "--db", *week_, "--billing", dir / "field"}, {}, 60);
  EXPECT_NE(r.err.find(dir / "field" + ":1: a record longer than 1024 KiB"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace cgov::e2e
