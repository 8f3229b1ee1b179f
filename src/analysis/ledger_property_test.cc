// Issue 57, "a generated-box invariant test": seeded boxes — 1 to 8 GPUs at mixed prices, 0 to 4
// compute processes a GPU (one user twice on a GPU, pids reused by another user, allocated pods),
// a restart of the recorder, each idle-cost policy — run through the history aggregator and the
// summary every history view renders, and the figures read back against the ledger's rules:
// parts sum to totals to the cent, each GPU-second in one phase, idle-held time held once,
// savings never above the wasted dollars, one key one figure in Who and Showback. The seed of a
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

namespace cgov {
namespace {

struct Box {
  HistoryInput in;
  int64_t gpu_ms = 0;  // every GPU's sampled time, as the aggregator's rule credits it
};

// One generated box. Ticks every `interval` ms in one run, then (half the boxes) a second run of
// the recorder after a pause; the last tick of each run stands for one interval.
Box Generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int lo, int hi) { return lo + static_cast<int>(rng() % (hi - lo + 1)); };
  Box box;
  HistoryInput& in = box.in;
  const int gpus = pick(1, 8);
  const int64_t interval = std::array<int64_t, 4>{1000, 10'000, 60'000, 7'000}[rng() % 4];
  const char* kModels[] = {"NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA A100-SXM4-80GB",
                           "Tesla T4"};
  for (int g = 0; g < gpus; ++g) {
    GpuRecord r;
    r.id = static_cast<uint32_t>(g + 1);
    r.uuid = "GPU-" + std::to_string(g);
    r.index = g;
    r.name = kModels[rng() % 4];
    r.mem_total_mib = 81'559;
    in.gpus.push_back(r);
    ResolvedPrice p;
    // Prices in whole micro-dollars from 8 cents to $40 an hour, most not dividing an hour's
    // milliseconds: each cell's cost rounds.
    p.per_gpu_hour = static_cast<MicroUsd>(80'000 + rng() % 40'000'000);
    p.source = "generated";
    in.gpu_prices[r.id] = p;
  }
  const char* kUsers[] = {"alice", "bob", "carol", "dave", "erin"};
  const char* kProjects[] = {"llm", "vision", "notebooks"};
  for (uint32_t id = 1; id <= 6; ++id) {
    IdentityRecord& r = in.identities[id];
    r.user = id == 6 ? "" : kUsers[id - 1];  // identity 6: unknown
    r.project = kProjects[id % 3];
    r.team = id % 2 ? "research" : "platform";
  }
  in.commands[1] = "python";
  in.commands[2] = "ipykernel_launcher";
  // Each GPU's behaviour: 0 busy, 1 idle with holders, 2 bursty, 3 random, 4 unused.
  std::vector<int> mode(static_cast<size_t>(gpus));
  for (int& m : mode) m = pick(0, 4);
  HistoryAggregator agg;
  const int64_t start = 1'700'000'000'000 + static_cast<int64_t>(rng() % 86'400) * 1000;
  int64_t ts = start;
  const int runs = pick(1, 2);
  uint32_t next_pid = 100;
  for (int run = 1; run <= runs; ++run) {
    const RunRecord rec{static_cast<uint32_t>(run), ts, interval, "daemon", "box"};
    const int ticks = pick(30, 240);
    // Holders per GPU for this run: identity, pid, command; changed now and then.
    std::vector<std::vector<std::tuple<uint32_t, uint32_t, uint32_t>>> holders(
        static_cast<size_t>(gpus));
    for (int k = 0; k < ticks; ++k, ts += interval) {
      StoredTick tick;
      for (int g = 0; g < gpus; ++g) {
        auto& hs = holders[static_cast<size_t>(g)];
        if (k == 0 || rng() % 25 == 0) {
          hs.clear();
          const int n = mode[static_cast<size_t>(g)] == 4 ? 0 : pick(0, 4);
          for (int p = 0; p < n; ++p) {
            // The same user a second time on this GPU, now and then.
            const uint32_t id = p > 0 && rng() % 3 == 0 ? std::get<0>(hs.front())
                                                         : static_cast<uint32_t>(pick(1, 6));
            // A pid reused: the same number, another user (the aggregator must close the old
            // session), one time in ten.
            const uint32_t pid = rng() % 10 == 0 ? 100 : next_pid++;
            hs.emplace_back(id, pid, static_cast<uint32_t>(pick(1, 2)));
          }
        }
        StoredGpu sg;
        sg.gpu_id = static_cast<uint32_t>(g + 1);
        sg.processes_known = true;
        const int m = mode[static_cast<size_t>(g)];
        const uint64_t util = m == 0   ? 97
                              : m == 1 || m == 4 ? 0
                              : m == 2 ? (k % 6 < 3 ? 95 : 3)
                                       : rng() % 101;
        sg.set(StoredGpuField::kUtilPct, util);
        sg.set(StoredGpuField::kMemUsedMib, hs.empty() ? 0 : 20'000);
        const size_t pos = tick.gpus.size();
        tick.gpus.push_back(sg);
        for (const auto& [id, pid, command] : hs) {
          if (pid % 7 == 3) {  // now and then a pod the GPU is allocated to, not a process
            StoredAllocation a;
            a.gpu_pos = static_cast<uint32_t>(pos);
            a.identity_id = id;
            tick.allocations.push_back(a);
            continue;
          }
          StoredProcess sp;
          sp.gpu_pos = static_cast<uint32_t>(pos);
          sp.pid = pid;
          sp.identity_id = id;
          sp.command_id = command;
          sp.compute = true;
          sp.mem_used_mib = 10'000;
          if (rng() % 2) sp.sm_util_pct = static_cast<uint32_t>(rng() % 101);
          tick.processes.push_back(sp);
        }
      }
      agg.Add(ts, rec, tick);
      box.gpu_ms += static_cast<int64_t>(gpus) * interval;
    }
    ts += interval * pick(3, 30);  // the recorder restarts after a pause (a gap, not filled)
  }
  agg.Finish(ts);
  in.since_ms = start / kHourMs * kHourMs;
  in.until_ms = ts;
  in.hours = agg.TakeCompleteHours();
  in.sessions = agg.AllSessions();
  in.data_end_ms = ts;
  in.interval_ms = interval;
  in.hostname = "box";
  return box;
}

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
    EXPECT_LE(row.Contribution() * static_cast<double>(s.cost.exact_total),
              gpu_waste[row.gpu] + 1)
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
}

TEST(LedgerProperties, EveryViewOfAGeneratedBoxAddsUpToTheCent) {
  uint64_t boxes = 200;
  if (const char* n = std::getenv("CGOV_LEDGER_BOXES")) boxes = std::strtoull(n, nullptr, 10);
  const uint64_t first = 20261128;
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
