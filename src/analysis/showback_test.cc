// Showback: each billed dollar lands on a row, idle or unmatched, exactly, under each policy.
#include "analysis/showback.h"

#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "fakes/test_time.h"

#include "core/time_format.h"

namespace cgov {
namespace {

// node-a: one GPU, every hour of 2026-11-16 10:00-12:00 fully sampled; alice holds half of its
// time, bob a quarter, nobody the rest. node-b: one GPU, alice the whole time.
HistoryInput TwoHosts() {
  HistoryInput in;
  in.hostname = "";
  in.since_ms = UtcMs("2026-11-16T10:00Z");
  in.until_ms = UtcMs("2026-11-16T12:00Z");
  in.gpus = {{1, "GPU-a", 0, "NVIDIA H100 80GB HBM3", 81559, "", "node-a", {}},
             {2, "GPU-b", 0, "NVIDIA L4", 23034, "", "node-b", {}}};
  IdentityRecord alice, bob;
  alice.user = "alice";
  alice.team = "ml";
  bob.user = "bob";
  in.identities = {{1, alice}, {2, bob}};
  const int64_t first = UtcMs("2026-11-16T10:00Z") / kHourMs;
  for (int64_t h = first; h < UtcMs("2026-11-16T12:00Z") / kHourMs; ++h) {
    HourBucket b;
    b.hour = h;
    for (uint32_t gpu : {1u, 2u}) {
      b.gpus[gpu].usage.phase_ms[static_cast<size_t>(Phase::kProductive)] = kHourMs;
    }
    b.identities[{1, 1}].attributed_ms[static_cast<size_t>(Phase::kProductive)] = kHourMs / 2;
    b.identities[{2, 1}].attributed_ms[static_cast<size_t>(Phase::kProductive)] = kHourMs / 4;
    b.identities[{1, 2}].attributed_ms[static_cast<size_t>(Phase::kProductive)] = kHourMs;
    in.hours.push_back(b);
  }
  return in;
}

Bill ABill() {
  Bill bill;
  bill.file = "cur.csv";
  bill.format = BillFormat::kAwsCur;
  auto add = [&](int line, std::string resource, const char* from, const char* to, int64_t micro) {
    bill.lines.push_back({line, std::move(resource), UtcMs(from), UtcMs(to), micro});
    bill.total_micro_usd += micro;
  };
  add(2, "i-0aaa", "2026-11-16T10:00Z", "2026-11-16T11:00Z", 10'000'000);  // node-a, an hour
  add(3, "i-0aaa", "2026-11-16T11:00Z", "2026-11-16T11:30Z", 3'000'001);   // a partial hour
  add(4, "node-b", "2026-11-16T10:00Z", "2026-11-16T12:00Z", 1'609'600);   // named as the host
  add(5, "i-0zzz", "2026-11-16T10:00Z", "2026-11-16T11:00Z", 7'770'000);   // a host never seen
  add(6, "", "2026-11-16T00:00Z", "2026-11-17T00:00Z", 1'250'000);         // tax
  add(7, "i-0aaa", "2026-11-15T10:00Z", "2026-11-15T11:00Z", 500'000);     // before the data
  return bill;
}

const ShowbackRow* Row(const Showback& s, const std::string& key) {
  for (const ShowbackRow& r : s.rows) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

void ExpectReconciles(const Showback& s, int64_t billed) {
  MicroUsd rows = 0;
  int64_t cents = 0;
  for (const ShowbackRow& r : s.rows) {
    rows += r.micro_usd;
    cents += r.cents;
  }
  EXPECT_EQ(rows + s.idle + s.unmatched, billed) << "every micro-dollar lands somewhere";
  EXPECT_EQ(s.billed_total, billed);
  EXPECT_EQ(cents + s.idle_cents + s.unmatched_cents, s.billed_total_cents) << "and every cent";
  EXPECT_EQ(s.billed_total_cents, (billed + 5'000) / 10'000);
}

TEST(Showback, ProratesEachBilledSpanOverTheGpuTimeInsideIt) {
  const Bill bill = ABill();
  const std::map<std::string, std::string> map = {{"i-0aaa", "node-a"}};
  Showback s = BillShowback(TwoHosts(), HistoryBy::kUser, bill, map, {});
  ExpectReconciles(s, bill.total_micro_usd);
  EXPECT_FALSE(s.estimate);
  EXPECT_EQ(s.lines, 6);
  EXPECT_EQ(s.matched_lines, 3);
  // node-a's $10 hour: alice 1/2, bob 1/4, idle 1/4; its half hour ($3.000001) the same shares
  // (one micro-dollar to the largest remainder); node-b's $1.6096 all alice's.
  ASSERT_NE(Row(s, "alice"), nullptr);
  EXPECT_EQ(Row(s, "alice")->micro_usd, 5'000'000 + 1'500'001 + 1'609'600);
  EXPECT_EQ(Row(s, "bob")->micro_usd, 2'500'000 + 750'000);
  EXPECT_EQ(s.idle, 2'500'000 + 750'000);
  EXPECT_EQ(s.unmatched, 7'770'000 + 1'250'000 + 500'000);
  EXPECT_EQ(Row(s, "alice")->attributed_ms, kHourMs / 2 + kHourMs / 4 + 2 * kHourMs);
  ASSERT_EQ(s.notes.size(), 3u);
  // In the file's order.
  EXPECT_NE(s.notes[0].find("resource i-0zzz: no host cgov saw"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[1].find("no resource id"), std::string::npos) << s.notes[1];
  EXPECT_NE(s.notes[2].find("host node-a: no GPU time recorded"), std::string::npos) << s.notes[2];
  EXPECT_EQ(s.rows.front().key, "alice") << "by dollars, descending";
}

TEST(Showback, IdlePoliciesMoveOnlyTheIdleLine) {
  const Bill bill = ABill();
  const std::map<std::string, std::string> map = {{"i-0aaa", "node-a"}};
  Showback plain = BillShowback(TwoHosts(), HistoryBy::kUser, bill, map, {});
  Showback spread =
      BillShowback(TwoHosts(), HistoryBy::kUser, bill, map, *ParseIdleCostPolicy("proportional"));
  ExpectReconciles(spread, bill.total_micro_usd);
  EXPECT_EQ(spread.idle, 0);
  EXPECT_EQ(spread.unmatched, plain.unmatched) << "unmatched is not idle";
  // Spread by GPU time: alice held 2.75 h, bob 0.375 h of the billed spans (22 : 3).
  const int64_t to_alice = Row(spread, "alice")->micro_usd - Row(plain, "alice")->micro_usd;
  const int64_t to_bob = Row(spread, "bob")->micro_usd - Row(plain, "bob")->micro_usd;
  EXPECT_EQ(to_alice + to_bob, plain.idle);
  EXPECT_EQ(to_alice, plain.idle * 22 / 25) << to_alice << " of " << plain.idle;

  Showback owned = BillShowback(TwoHosts(), HistoryBy::kUser, bill, map,
                                *ParseIdleCostPolicy("owner:team=platform"));
  ExpectReconciles(owned, bill.total_micro_usd);
  ASSERT_NE(Row(owned, "team=platform"), nullptr);
  EXPECT_EQ(Row(owned, "team=platform")->micro_usd, plain.idle);
  Showback by_team = BillShowback(TwoHosts(), HistoryBy::kTeam, bill, map,
                                  *ParseIdleCostPolicy("owner:team=platform"));
  ASSERT_NE(Row(by_team, "platform"), nullptr) << "--by team: the owner is a team row";
  EXPECT_NE(Row(by_team, "(unknown)"), nullptr) << "bob has no team";
  EXPECT_FALSE(ParseIdleCostPolicy("owner:team").ok());
  EXPECT_FALSE(ParseIdleCostPolicy("everyone").ok());
}

TEST(Showback, LargestRemainderIsExactForAnyWeights) {
  EXPECT_EQ(LargestRemainder(10, {1, 1, 1}), (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(LargestRemainder(-10, {1, 1, 1}), (std::vector<int64_t>{-4, -3, -3}));
  EXPECT_EQ(LargestRemainder(7, {0, 0}), (std::vector<int64_t>{0, 0}));
  std::mt19937_64 rng(11);
  for (int round = 0; round < 500; ++round) {
    const int64_t total = static_cast<int64_t>(rng() % 100'000'000'000) - 1'000'000'000;
    std::vector<int64_t> w(1 + rng() % 9);
    for (int64_t& x : w) x = static_cast<int64_t>(rng() % 300'000'000'000);  // ms of a year
    const std::vector<int64_t> parts = LargestRemainder(total, w);
    if (std::accumulate(w.begin(), w.end(), int64_t{0}) == 0) continue;
    EXPECT_EQ(std::accumulate(parts.begin(), parts.end(), int64_t{0}), total);
  }
}

TEST(Showback, EstimateFromResolvedPricesAddsUp) {
  HistorySummary s;
  s.by = HistoryBy::kUser;
  s.cost.priced = true;
  WhoRow a, b;
  a.key = "alice";
  a.cost = 1'234'567;
  a.attributed_ms[0] = 3000;
  b.key = "";
  b.cost = 765'432;
  b.attributed_ms[0] = 1000;
  s.who = {a, b};
  s.unattributed_cost = 1'000'001;
  Showback e = EstimateShowback(s, {});
  EXPECT_TRUE(e.estimate);
  ExpectReconciles(e, 1'234'567 + 765'432 + 1'000'001);
  EXPECT_NE(Row(e, "(unknown)"), nullptr);
  Showback p = EstimateShowback(s, *ParseIdleCostPolicy("proportional"));
  ExpectReconciles(p, 1'234'567 + 765'432 + 1'000'001);
  EXPECT_EQ(p.idle, 0);
}

}  // namespace
}  // namespace cgov

namespace cgov {
namespace {

// A window that ends inside an hour: that hour's data covers only the part in the window, and a
// span over that part takes all of it (not half of half).
TEST(Showback, AnHourCutByTheWindowIsNotScaledTwice) {
  HistoryInput in = TwoHosts();
  in.until_ms = UtcMs("2026-11-16T11:30Z");
  HourBucket& last = in.hours.back();  // 11:00-11:30 only: half of each figure
  for (auto& [id, g] : last.gpus) g.usage.phase_ms[static_cast<size_t>(Phase::kProductive)] /= 2;
  for (auto& [key, ih] : last.identities) {
    ih.attributed_ms[static_cast<size_t>(Phase::kProductive)] /= 2;
  }
  Bill bill;
  bill.file = "b.csv";
  bill.lines = {{2, "node-a", UtcMs("2026-11-16T11:00Z"), UtcMs("2026-11-16T11:30Z"), 4'000'000}};
  bill.total_micro_usd = 4'000'000;
  Showback s = BillShowback(in, HistoryBy::kUser, bill, {}, {});
  ASSERT_NE(Row(s, "alice"), nullptr);
  EXPECT_EQ(Row(s, "alice")->attributed_ms, kHourMs / 4) << "half of the half hour";
  EXPECT_EQ(Row(s, "alice")->micro_usd, 2'000'000);
  EXPECT_EQ(s.idle_ms, kHourMs / 8);
}

}  // namespace
}  // namespace cgov
