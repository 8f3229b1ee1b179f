// A generated box for the ledger's property tests (issue 57): seeded, 1 to 8 GPUs at mixed
// prices, 0 to 4 compute holders a GPU (one user twice on a GPU, a pid reused by another user,
// pods the GPU is allocated to), one or two runs of the recorder with a pause between, each
// GPU busy, idle with holders, bursty, random or unused. Its ticks as the recorder took them and
// the history input the aggregator made of them (src/analysis/ledger_property_test.cc,
// src/export/export_test.cc).
#ifndef CGOV_TESTS_SUPPORT_GENERATED_BOX_H_
#define CGOV_TESTS_SUPPORT_GENERATED_BOX_H_

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/history_aggregator.h"
#include "analysis/history_summary.h"
#include "core/time_format.h"

namespace cgov::test_support {

struct Box {
  HistoryInput in;
  int64_t gpu_ms = 0;     // every GPU's sampled time, as the aggregator's rule credits it
  int64_t energy_mj = 0;  // every GPU's energy: power x its sample's time, EnergyOf's rounding
  int64_t unheld_energy_mj = 0;  // of which while no process or pod held the GPU
  struct Tick {
    RunRecord run;
    int64_t ts_ms = 0;
    StoredTick tick;
  };
  std::vector<Tick> ticks;  // as the recorder took them, for a replay (/metrics)
  int64_t end_ms = 0;       // where the data ends
};

// One generated box. Ticks every `interval` ms in one run, then (half the boxes) a second run of
// the recorder after a pause; the last tick of each run stands for one interval.
inline Box Generate(uint64_t seed) {
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
        const uint64_t util = m == 0             ? 97
                              : m == 1 || m == 4 ? 0
                              : m == 2           ? (k % 6 < 3 ? 95 : 3)
                                                 : rng() % 101;
        sg.set(StoredGpuField::kUtilPct, util);
        sg.set(StoredGpuField::kMemUsedMib, hs.empty() ? 0 : 20'000);
        if (rng() % 10 != 0) {  // a power reading, 30 W to 700 W, most ticks
          const uint64_t power_dw = 300 + rng() % 6701;
          sg.set(StoredGpuField::kPowerDw, power_dw);
          const int64_t energy = EnergyOf(static_cast<uint32_t>(power_dw * 100), interval);
          box.energy_mj += energy;
          if (hs.empty()) box.unheld_energy_mj += energy;
        }
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
      box.ticks.push_back({rec, ts, tick});
      box.gpu_ms += static_cast<int64_t>(gpus) * interval;
    }
    ts += interval * pick(3, 30);  // the recorder restarts after a pause (a gap, not filled)
  }
  agg.Finish(ts);
  box.end_ms = ts;
  in.since_ms = start / kHourMs * kHourMs;
  in.until_ms = ts;
  in.hours = agg.TakeCompleteHours();
  in.sessions = agg.AllSessions();
  in.data_end_ms = ts;
  in.interval_ms = interval;
  in.hostname = "box";
  return box;
}

}  // namespace cgov::test_support

#endif  // CGOV_TESTS_SUPPORT_GENERATED_BOX_H_
