// Issue 57, "a generated-box invariant test": seeded boxes — 1 to 8 GPUs at mixed prices, 0 to 4
// compute processes a GPU (one user twice on a GPU, pids reused by another user, allocated pods),
// a restart of the recorder, each idle-cost policy — run through the history aggregator and the
// summary every history view renders, and the figures read back against the ledger's rules:
// parts sum to totals to the cent, each GPU-second in one phase, idle-held time held once,
// savings never above the wasted dollars, one key one figure in Who and Showback, energy adding
// up as time does (GPUs, phases, Who, idle-held held once). The seed of a
// failing box is printed; CGOV_LEDGER_BOXES raises the count for a longer run.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>

#include "analysis/history_aggregator.h"
#include "analysis/history_summary.h"
#include "generated_box.h"

namespace cgov {
namespace {

using test_support::Box;
using test_support::Generate;

int64_t CentsOf(MicroUsd v) { return (v + kMicroPerCent / 2) / kMicroPerCent; }

void CheckBox(uint64_t seed, const Box& box, const IdleCostPolicy& policy, HistoryBy by) {
  SCOPED_TRACE("seed " + std::to_string(seed) + ", --idle-cost " + policy.Name() + ", --by " +
               HistoryByName(by));
  HistoryOptions o;
  o.by = by;
  o.idle_cost = policy;
  o.idle_held_min_ms = 0;  // every idle-held session is an action: the list is checked whole
  Result<HistorySummary> r = SummarizeHistory(box.in, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const HistorySummary& s = *r;
  // Each GPU-second in one phase; the phases add up to all of the time.
  int64_t phases = 0;
  for (int64_t ms : s.phase_ms) phases += ms;
  EXPECT_EQ(phases, box.gpu_ms);
  double shares = 0;
  for (double p : s.phase_share_pct) shares += p;
  EXPECT_NEAR(shares, 100.0, 1e-9);
  ASSERT_TRUE(s.cost.priced);
  // Money: the phases' dollars, the GPUs' rows, Who with the unattributed part, the idle days
  // and Showback's lines all add up to the total, to the cent.
  EXPECT_EQ(std::accumulate(s.cost.phase_cost.begin(), s.cost.phase_cost.end(), MicroUsd{0}),
            s.cost.total);
  MicroUsd gpus = 0;
  for (const HistoryGpuRow& g : s.gpus) gpus += g.cost;
  EXPECT_EQ(gpus, s.cost.total);
  MicroUsd who = s.unattributed_cost;
  for (const WhoRow& w : s.who) who += w.cost;
  EXPECT_EQ(who, s.cost.total);
  MicroUsd idle_days = 0;
  for (const IdleDay& d : s.idle_by_day) idle_days += d.idle_cost;
  EXPECT_EQ(idle_days, s.idle_cost);
  EXPECT_EQ(s.idle_cost, s.cost.phase_cost[static_cast<size_t>(Phase::kTrulyIdle)] +
                             s.cost.phase_cost[static_cast<size_t>(Phase::kIdleHeld)]);
  const Showback& b = s.showback;
  int64_t lines = b.idle_cents + b.unmatched_cents;
  for (const ShowbackRow& row : b.rows) lines += row.cents;
  EXPECT_EQ(lines, b.billed_total_cents);
  EXPECT_EQ(b.billed_total_cents, CentsOf(s.cost.total));
  // One key, one figure: Who's cents are Showback's under the default policy.
  if (policy.kind == IdleCostPolicy::Kind::kUnallocated) {
    for (const WhoRow& w : s.who) {
      const std::string key = w.key.empty() ? "(unknown)" : w.key;
      for (const ShowbackRow& row : b.rows) {
        if (row.key == key) {
          EXPECT_EQ(w.cost, row.cents * kMicroPerCent) << key;
        }
      }
    }
  }
  // Idle-held time held once: the sessions' shares add up to the idle-held phase (the window
  // holds all of the data), each key's actions to its Who row.
  int64_t held_shares = 0;
  for (const SessionRecord& x : box.in.sessions) held_shares += x.idle_held_share_ms;
  EXPECT_EQ(held_shares, s.phase_ms[static_cast<size_t>(Phase::kIdleHeld)]);
  EXPECT_LE(s.idle_held.in_actions_ms, s.idle_held.total_ms);
  EXPECT_EQ(s.idle_held.in_bursts_ms + s.idle_held.steady_ms, s.idle_held.total_ms);
  if (by == HistoryBy::kUser) {
    std::map<std::string, MicroUsd> actions;
    for (const ActionRow& a : s.actions) actions[a.user] += a.idle_held_cost;
    for (const WhoRow& w : s.who) {
      // Who prices its rows' time once; the actions each session's: apart by rounding only.
      EXPECT_NEAR(static_cast<double>(actions[w.key]), static_cast<double>(w.idle_held_cost),
                  static_cast<double>(s.actions.size() + 1))
          << w.key;
    }
  }
  // Savings never above the wasted dollars, each GPU's levers not above its own (exact
  // micro-dollars: the waste line shows cents).
  ASSERT_EQ(s.usage.gpus.size(), s.gpus.size());
  double waste = 0;
  std::map<unsigned, double> gpu_waste;
  for (size_t g = 0; g < s.gpus.size(); ++g) {
    int64_t x100 = 0;
    for (int64_t w : s.usage.gpus[g].waste_ms_x100) x100 += w;
    gpu_waste[static_cast<unsigned>(g)] =
        static_cast<double>(CostOf(*s.gpus[g].price.per_gpu_hour, x100)) / 100;
    waste += gpu_waste[static_cast<unsigned>(g)];
  }
  for (const GpuSavings& row : s.savings.gpus) {
    EXPECT_LE(row.Contribution() * static_cast<double>(s.cost.exact_total), gpu_waste[row.gpu] + 1)
        << "GPU " << row.gpu << "'s levers claim more than its waste";
  }
  EXPECT_LE(s.savings.utilization_fraction * static_cast<double>(s.cost.exact_total),
            waste + static_cast<double>(s.gpus.size()))
      << "utilization levers claim more than the waste";
  EXPECT_NEAR(waste, static_cast<double>(s.cost.waste), 5 * kMicroPerCent / 2 + 1.0)
      << "the waste line is the exact waste in cents";
  if (s.savings.combined_usd) {
    EXPECT_LE(*s.savings.combined_usd, s.cost.total);
  }
  EXPECT_LE(s.savings.combined_fraction, 1.0);
  // Energy (issue 62): the GPUs' add up to the box's integral, the phases and the unknown part
  // to the whole, Who's shares and the unattributed part to it too, and idle-held energy is
  // held once.
  const EnergyBlock& e = s.energy;
  EXPECT_EQ(e.total_mj, box.energy_mj);
  int64_t gpu_energy = 0;
  for (const HistoryGpuRow& g : s.gpus) gpu_energy += g.totals.usage.EnergyMj();
  EXPECT_EQ(gpu_energy, e.total_mj);
  EXPECT_EQ(std::accumulate(e.phase_mj.begin(), e.phase_mj.end(), e.unknown_phase_mj), e.total_mj);
  EXPECT_EQ(e.idle_mj, e.phase_mj[static_cast<size_t>(Phase::kTrulyIdle)] +
                           e.phase_mj[static_cast<size_t>(Phase::kIdleHeld)]);
  int64_t who_energy = e.unattributed_mj, who_held_energy = 0;
  for (const WhoRow& w : s.who) {
    who_energy += w.energy_mj;
    who_held_energy += w.idle_held_energy_mj;
  }
  EXPECT_EQ(who_energy, e.total_mj);
  EXPECT_EQ(e.unattributed_mj, box.unheld_energy_mj) << "energy no one held is no one's";
  EXPECT_EQ(who_held_energy, e.phase_mj[static_cast<size_t>(Phase::kIdleHeld)]);
}

TEST(LedgerProperties, EveryViewOfAGeneratedBoxAddsUpToTheCent) {
  uint64_t boxes = 200;
  if (const char* n = std::getenv("CGOV_LEDGER_BOXES")) boxes = std::strtoull(n, nullptr, 10);
  uint64_t first = 20261128;  // CGOV_LEDGER_SEED: another run of boxes
  if (const char* seed = std::getenv("CGOV_LEDGER_SEED")) first = std::strtoull(seed, nullptr, 10);
  std::printf("ledger boxes: seeds %llu to %llu\n", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + boxes - 1));
  IdleCostPolicy owner;
  owner.kind = IdleCostPolicy::Kind::kOwner;
  owner.key = "team";
  owner.value = "platform";
  IdleCostPolicy proportional;
  proportional.kind = IdleCostPolicy::Kind::kProportional;
  for (uint64_t seed = first; seed < first + boxes; ++seed) {
    const Box box = Generate(seed);
    const IdleCostPolicy policies[] = {IdleCostPolicy{}, proportional, owner};
    const IdleCostPolicy& policy = policies[seed % 3];
    CheckBox(seed, box, policy, HistoryBy::kUser);
    CheckBox(seed, box, policy, seed % 2 ? HistoryBy::kProject : HistoryBy::kTeam);
    if (HasFailure()) break;  // the first failing box is the one to read
  }
}

}  // namespace
}  // namespace cgov
