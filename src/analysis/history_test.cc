#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "analysis/history_aggregator.h"
#include "analysis/history_rollup.h"
#include "analysis/history_summary.h"
#include "core/time_format.h"

namespace cgov {
namespace {

constexpr int64_t kH = kHourMs;
constexpr size_t kIdleHeld = static_cast<size_t>(Phase::kIdleHeld);
constexpr size_t kTrulyIdle = static_cast<size_t>(Phase::kTrulyIdle);
constexpr size_t kProductive = static_cast<size_t>(Phase::kProductive);

struct Proc {
  uint32_t pid;
  uint32_t identity;
  uint32_t mib;
  bool graphics = false;
  std::optional<uint32_t> sm_util = std::nullopt;  // NVML's per-process SM utilization
};

// One GPU (id 1) at `util` with these processes.
StoredTick Tick(uint64_t util, std::vector<Proc> procs) {
  StoredTick t;
  StoredGpu g;
  g.gpu_id = 1;
  g.processes_known = true;
  g.set(StoredGpuField::kUtilPct, util);
  g.set(StoredGpuField::kPowerDw, 1000);
  t.gpus.push_back(g);
  for (const Proc& p : procs) {
    StoredProcess sp;
    sp.pid = p.pid;
    sp.identity_id = p.identity;
    sp.command_id = 1;
    sp.compute = !p.graphics;
    sp.graphics = p.graphics;
    sp.mem_used_mib = p.mib;
    sp.sm_util_pct = p.sm_util;
    t.processes.push_back(sp);
  }
  return t;
}

HourBucket Merged(const std::vector<HourBucket>& hours) {
  HourBucket all;
  for (const HourBucket& b : hours) MergeInto(b, &all);
  return all;
}

TEST(HistoryAggregator, HandComputedTimeline) {
  // Ticks every 1 s: 3 productive with alice, 2 idle-held by bob, a 10 s gap (capped at 2 s),
  // then 1 truly idle with only Xorg, closed at the end after one interval.
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 10 * kH;
  for (int i = 0; i < 3; ++i, ts += 1000) a.Add(ts, run, Tick(80, {{100, 1, 70000}}));
  a.Add(ts, run, Tick(2, {{200, 2, 8000}}));
  ts += 1000;
  a.Add(ts, run, Tick(2, {{200, 2, 8000}}));
  ts += 10'000;
  a.Add(ts, run, Tick(0, {{300, 3, 128, true}}));
  a.Finish(ts + 60'000);
  const HourBucket all = Merged(a.TakeCompleteHours());
  const GpuHour& g = all.gpus.at(1);
  EXPECT_EQ(g.usage.phase_ms[kProductive], 3000);
  EXPECT_EQ(g.usage.phase_ms[kIdleHeld], 1000 + 2000) << "the tick before the gap stands for 2 s";
  EXPECT_EQ(g.usage.phase_ms[kTrulyIdle], 1000) << "the last tick stands for one interval";
  EXPECT_EQ(g.usage.graphics_only_ms, 1000);
  EXPECT_EQ(g.gap_ms, 8000);
  EXPECT_EQ(g.samples, 6);
  EXPECT_EQ(g.power_dw_ms, 1000 * 7000);
  EXPECT_EQ(all.identities.at({1, 1}).attributed_ms[kProductive], 3000);
  EXPECT_EQ(all.identities.at({2, 1}).idle_held_ms, 3000);
  EXPECT_EQ(all.identities.at({3, 1}).held_ms, 1000) << "Xorg held it";
  EXPECT_EQ(all.identities.at({3, 1}).AttributedMs(), 0) << "graphics is not charged";
}

TEST(HistoryAggregator, SharedGpuTimeIsSplitWithoutLosingAMillisecond) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  a.Add(0, run, Tick(50, {{1, 1, 100}, {2, 2, 100}, {3, 3, 100}}));
  a.Finish(1000);
  const HourBucket all = Merged(a.TakeCompleteHours());
  int64_t sum = 0;
  for (uint32_t id : {1u, 2u, 3u}) {
    EXPECT_EQ(all.identities.at({id, 1}).held_ms, 1000) << "each holder held all of it";
    sum += all.identities.at({id, 1}).AttributedMs();
  }
  EXPECT_EQ(sum, 1000);
}

// Issue 47: a busy GPU shared by two processes at 90 % and 10 % SM is charged 90/10, not 50/50;
// idle-held time and time without per-process readings stay even; each holder still held it all.
TEST(HistoryAggregator, ABusySharedGpuIsSplitByPerProcessUtilization) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  std::vector<TickCredit> credits;
  a.set_credit_sink([&](const TickCredit& c) { credits.push_back(c); });
  // 3 s busy with readings, 1 s busy without one for pid 2, 2 s idle-held with readings (0 %).
  int64_t ts = 0;
  for (int i = 0; i < 3; ++i, ts += 1000) {
    a.Add(ts, run, Tick(100, {{1, 1, 100, false, 90}, {2, 2, 100, false, 10}}));
  }
  a.Add(ts, run, Tick(100, {{1, 1, 100, false, 90}, {2, 2, 100}}));
  ts += 1000;
  for (int i = 0; i < 2; ++i, ts += 1000) {
    a.Add(ts, run, Tick(0, {{1, 1, 100, false, 0}, {2, 2, 100, false, 0}}));
  }
  a.Finish(ts);
  const HourBucket all = Merged(a.TakeCompleteHours());
  const IdentityHour& alice = all.identities.at({1, 1});
  const IdentityHour& bob = all.identities.at({2, 1});
  const size_t busy = static_cast<size_t>(Phase::kComputeBound);
  EXPECT_EQ(alice.attributed_ms[busy], 3 * 900 + 500);
  EXPECT_EQ(bob.attributed_ms[busy], 3 * 100 + 500);
  EXPECT_EQ(alice.attributed_ms[kIdleHeld], 1000);
  EXPECT_EQ(bob.attributed_ms[kIdleHeld], 1000);
  EXPECT_EQ(alice.held_ms, 6000);
  EXPECT_EQ(bob.held_ms, 6000);
  EXPECT_EQ(alice.shared_by_util_ms + bob.shared_by_util_ms, 3000);
  EXPECT_EQ(alice.shared_evenly_ms + bob.shared_evenly_ms, 3000);
  ASSERT_EQ(credits.size(), 6u);
  EXPECT_EQ(credits[0].identities[0].split, SplitRule::kByUtilization);
  EXPECT_EQ(credits[0].identities[0].attributed_ms, 900);
  EXPECT_EQ(credits[3].identities[0].split, SplitRule::kEvenly);
  EXPECT_EQ(credits[4].identities[1].split, SplitRule::kEvenly);
  // The rollup keeps how it was split; a version 1 row (before this) reads it as 0.
  std::string encoded;
  EncodeIdentityHour(alice, &encoded);
  IdentityHour back;
  ASSERT_TRUE(DecodeIdentityHour(encoded, "row", &back).ok());
  EXPECT_EQ(back.shared_by_util_ms, alice.shared_by_util_ms);
  EXPECT_EQ(back.shared_evenly_ms, alice.shared_evenly_ms);
  std::string v1(1, '\1');  // version 1: samples, held, idle-held, the phases, unknown
  for (int64_t v : {alice.samples, alice.held_ms, alice.idle_held_ms}) PutVarint(v, &v1);
  for (int64_t v : alice.attributed_ms) PutVarint(v, &v1);
  PutVarint(alice.attributed_unknown_ms, &v1);
  IdentityHour old;
  ASSERT_TRUE(DecodeIdentityHour(v1, "row", &old).ok()) << "a version 1 row still decodes";
  EXPECT_EQ(old.shared_by_util_ms, 0);
  EXPECT_EQ(old.attributed_ms, alice.attributed_ms);
}

// A GPU the kubelet allocated to a pod: idle with no memory held it is idle-held, charged to the
// allocated container; busy, the container shares it with the processes on it. The container's
// session (pid kAllocationSessionPid | identity) runs while the allocation does.
TEST(HistoryAggregator, AnAllocatedGpuIsHeldByItsContainer) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  std::vector<TickCredit> credits;
  a.set_credit_sink([&](const TickCredit& c) { credits.push_back(c); });
  StoredTick idle = Tick(0, {{300, 3, 128, true}});  // only Xorg on it
  idle.allocations = {{0, 7}};
  a.Add(0, run, idle);
  a.Add(1000, run, idle);
  StoredTick busy = Tick(80, {{100, 1, 70000}});
  busy.allocations = {{0, 7}};
  a.Add(2000, run, busy);
  a.Add(3000, run, Tick(0, {}));  // the pod is gone
  a.Finish(4000);
  const HourBucket all = Merged(a.TakeCompleteHours());
  const GpuHour& g = all.gpus.at(1);
  EXPECT_EQ(g.usage.phase_ms[kIdleHeld], 2000) << "allocated, idle, nothing in memory";
  EXPECT_EQ(g.usage.phase_ms[kTrulyIdle], 1000) << "no longer allocated";
  EXPECT_EQ(g.usage.phase_ms[kProductive], 1000);
  const IdentityHour& pod = all.identities.at({7, 1});
  EXPECT_EQ(pod.held_ms, 3000);
  EXPECT_EQ(pod.idle_held_ms, 2000);
  EXPECT_EQ(pod.attributed_ms[kIdleHeld], 2000);
  EXPECT_EQ(pod.attributed_ms[kProductive], 500) << "shared with the process on it";
  EXPECT_EQ(all.identities.at({1, 1}).attributed_ms[kProductive], 500);
  EXPECT_EQ(all.identities.at({3, 1}).AttributedMs(), 0) << "Xorg still draws only";
  const std::vector<SessionRecord> sessions = a.AllSessions();
  ASSERT_EQ(sessions.size(), 2u);
  const SessionRecord& held = sessions[0].allocation() ? sessions[0] : sessions[1];
  EXPECT_EQ(held.pid, kAllocationSessionPid | 7);
  EXPECT_EQ(held.identity_id, 7u);
  EXPECT_EQ(held.held_ms, 3000);
  EXPECT_EQ(held.idle_held_ms, 2000);
  EXPECT_EQ(held.idle_streak_max_ms, 2000);
  EXPECT_FALSE(held.open) << "the allocation ended at 3000";
  EXPECT_EQ(held.end_ms, 3000);
  ASSERT_EQ(credits.size(), 4u);
  ASSERT_EQ(credits[0].identities.size(), 2u);
  EXPECT_EQ(credits[0].identities[1].identity_id, 7u);
  EXPECT_EQ(credits[0].identities[1].idle_held_ms, 1000);
  EXPECT_EQ(credits[0].gpus[0].phase, Phase::kIdleHeld);
}

TEST(HistoryAggregator, HoursCompleteOnlyWhenALaterHourStartsAndSplitAtTheTickStart) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  a.Add(kH - 1000, run, Tick(95, {}));
  EXPECT_TRUE(a.TakeCompleteHours().empty());
  a.Add(kH, run, Tick(95, {}));
  std::vector<HourBucket> done = a.TakeCompleteHours();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].hour, 0);
  EXPECT_EQ(done[0].gpus.at(1).usage.HeldMs(), 1000);
  EXPECT_EQ(a.complete_before_ms(), kH);
}

TEST(HistoryAggregator, SessionsTrackTheLongestUnbrokenIdleHeldStretch) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  auto add = [&](uint64_t util, int n) {
    for (int i = 0; i < n; ++i, ts += 1000) a.Add(ts, run, Tick(util, {{42, 5, 20000}}));
  };
  add(2, 3);                    // 3 s idle-held
  add(60, 2);                   // work breaks the streak
  add(1, 5);                    // 5 s idle-held: the longest
  a.Add(ts, run, Tick(0, {}));  // the process is gone
  a.Finish(ts + 1000);
  std::vector<SessionRecord> sessions = a.TakeChangedSessions();
  ASSERT_EQ(sessions.size(), 1u);
  const SessionRecord& s = sessions[0];
  EXPECT_FALSE(s.open);
  EXPECT_EQ(s.held_ms, 10'000);
  EXPECT_EQ(s.idle_held_ms, 8000);
  EXPECT_EQ(s.idle_streak_max_ms, 5000);
  EXPECT_EQ(s.idle_streak_max_start_ms, 5000);
  EXPECT_EQ(s.mem_max_mib, 20000u);
}

TEST(HistoryAggregator, ARestartedRunEndsTheLastTickAfterOneInterval) {
  HistoryAggregator a;
  a.Add(0, {1, 0, 30'000, "t", "h"}, Tick(95, {}));
  a.Add(3'600'00, {2, 0, 30'000, "t", "h"}, Tick(95, {}));  // six minutes later, a new run
  a.Finish(3'600'00 + 30'000);
  EXPECT_EQ(Merged(a.TakeCompleteHours()).gpus.at(1).usage.HeldMs(), 60'000);
}

TEST(HistoryAggregator, TickCreditsAddUpToTheRollups) {
  // The live /metrics counters are sums of credits: they must equal the rollups, phase by phase
  // and identity by identity, across hour ends, gaps, shared GPUs and unknown utilization.
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  std::array<int64_t, kPhaseCount + 1> gpu_ms{};
  int64_t util_x100 = 0;
  std::map<uint32_t, std::array<int64_t, 3>> ids;  // held, idle-held, attributed
  a.set_credit_sink([&](const TickCredit& c) {
    for (const TickCredit::Gpu& g : c.gpus) {
      gpu_ms[g.phase ? static_cast<size_t>(*g.phase) : kPhaseCount] += g.duration_ms;
      util_x100 += g.util_ms_x100;
    }
    for (const TickCredit::Identity& i : c.identities) {
      ids[i.identity_id][0] += i.held_ms;
      ids[i.identity_id][1] += i.idle_held_ms;
      ids[i.identity_id][2] += i.attributed_ms;
    }
  });
  uint64_t seed = 7;
  auto next = [&seed](uint64_t n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (seed >> 33) % n;
  };
  int64_t ts = 10 * kH - 50'000;
  for (int i = 0; i < 400; ++i) {
    std::vector<Proc> procs;
    if (next(3) > 0) procs.push_back({100, 1, static_cast<uint32_t>(next(3) * 5000)});
    if (next(2) > 0) procs.push_back({200, 2, 8000});
    if (next(5) == 0) procs.push_back({300, 3, 128, true});
    StoredTick t = Tick(next(101), procs);
    if (next(10) == 0) t.gpus[0].set(StoredGpuField::kUtilPct, std::nullopt);
    a.Add(ts, run, t);
    ts += next(8) == 0 ? 5000 : 1000;  // some gaps, capped at 2 s
  }
  a.Finish(ts);
  const HourBucket all = Merged(a.TakeCompleteHours());
  const GpuUsage& u = all.gpus.at(1).usage;
  for (size_t p = 0; p < kPhaseCount; ++p) EXPECT_EQ(gpu_ms[p], u.phase_ms[p]) << p;
  EXPECT_EQ(gpu_ms[kPhaseCount], u.unknown_ms);
  EXPECT_EQ(util_x100, u.util_ms_x100);
  for (uint32_t id = 1; id <= 3; ++id) {
    const IdentityHour& ih = all.identities.at({id, 1});
    EXPECT_EQ(ids[id][0], ih.held_ms) << id;
    EXPECT_EQ(ids[id][1], ih.idle_held_ms) << id;
    EXPECT_EQ(ids[id][2], ih.AttributedMs()) << id;
  }
  EXPECT_GT(ids[1][1], 0) << "the random timeline has idle-held time";
}

// The session rules, stated as plainly as possible: a map from (GPU, pid) to its open session,
// a lookup per hold. The aggregator merges sorted lists instead (issue 64); on generated ticks
// (processes coming and going, pids reused by another identity or program, gaps in the data,
// idle and busy GPUs, shared GPUs, allocations, a pid listed twice) both must give the same
// sessions.
struct SessionModel {
  using Key = std::pair<uint32_t, uint32_t>;  // (GPU, pid)
  std::map<Key, SessionRecord> open;
  std::vector<SessionRecord> closed;
  std::set<std::tuple<uint32_t, uint32_t, int64_t>> changed;  // since the last take

  void Close(std::map<Key, SessionRecord>::iterator it) {
    it->second.open = false;
    closed.push_back(it->second);
    changed.insert({it->second.gpu_id, it->second.pid, it->second.start_ms});
    open.erase(it);
  }
  // One committed tick of GPU `gpu`: its holds in the tick's order, each {pid, identity,
  // command, MiB}, and the holders' idle-held shares by identity.
  void Commit(int64_t ts, int64_t duration, uint32_t gpu, bool idle_held,
              const std::vector<std::array<uint32_t, 4>>& holds,
              const std::map<uint32_t, int64_t>& share_by_identity) {
    std::map<uint32_t, int64_t> count, seen;
    for (const auto& h : holds) ++count[h[1]];
    std::vector<uint32_t> present;
    for (const auto& [pid, identity, command, mib] : holds) {
      present.push_back(pid);
      auto it = open.find({gpu, pid});
      if (it != open.end() &&
          (ts - it->second.end_ms > 2000 || it->second.identity_id != identity ||
           it->second.command_id != command)) {
        Close(it);
        it = open.end();
      }
      if (it == open.end()) {
        SessionRecord s;
        s.gpu_id = gpu;
        s.pid = pid;
        s.start_ms = ts;
        s.identity_id = identity;
        s.command_id = command;
        it = open.emplace(Key{gpu, pid}, s).first;
      }
      SessionRecord& s = it->second;
      s.end_ms = ts + duration;
      s.held_ms += duration;
      if (idle_held) {
        const int64_t share =
            share_by_identity.count(identity) ? share_by_identity.at(identity) : 0;
        const int64_t n = count[identity], k = seen[identity]++;
        s.idle_held_ms += duration;
        s.idle_held_share_ms += share / n + (k < share % n ? 1 : 0);
        s.idle_streak_ms += duration;
        if (s.idle_streak_ms > s.idle_streak_max_ms) {
          s.idle_streak_max_ms = s.idle_streak_ms;
          s.idle_streak_max_start_ms = s.end_ms - s.idle_streak_ms;
        }
      } else {
        s.idle_streak_ms = 0;
      }
      s.mem_max_mib = std::max(s.mem_max_mib, mib);
      changed.insert({gpu, pid, s.start_ms});
    }
    for (auto it = open.lower_bound({gpu, 0}); it != open.end() && it->first.first == gpu;) {
      auto here = it++;
      if (std::find(present.begin(), present.end(), here->first.second) == present.end()) {
        Close(here);
      }
    }
  }
};

auto SessionFields(const SessionRecord& s) {
  return std::tuple(s.gpu_id, s.pid, s.start_ms, s.end_ms, s.identity_id, s.command_id, s.held_ms,
                    s.idle_held_ms, s.idle_held_share_ms, s.mem_max_mib, s.idle_streak_ms,
                    s.idle_streak_max_ms, s.idle_streak_max_start_ms, s.open);
}

// The first of `runs` seeds for a property test: `default_seed`, or the one `env_var` names to
// try others; the range is printed so that a failure can be run again.
uint64_t FirstSeed(const char* what, const char* env_var, uint64_t default_seed, uint64_t runs) {
  uint64_t first = default_seed;
  if (const char* seed = std::getenv(env_var)) first = std::strtoull(seed, nullptr, 10);
  std::printf("%s: seeds %llu to %llu (%s: others)\n", what, static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + runs - 1), env_var);
  return first;
}

std::vector<decltype(SessionFields(SessionRecord{}))> Sorted(const std::vector<SessionRecord>& v) {
  std::vector<decltype(SessionFields(SessionRecord{}))> out;
  for (const SessionRecord& s : v) out.push_back(SessionFields(s));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(HistoryAggregator, SessionsFollowTheirRulesOnGeneratedTicks) {
  const uint64_t first = FirstSeed("session ticks", "CGOV_SESSION_SEED", 20261128, 200);
  for (uint64_t seed = first; seed < first + 200; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
    const RunRecord run{1, 0, 1000, "t", "h"};
    const bool takes = seed % 2 == 0;  // half the boxes take changed sessions now and then
    HistoryAggregator a;
    SessionModel model;
    // Open when the writer started (its GPU not in these ticks): never changed, never taken.
    SessionRecord seeded;
    seeded.gpu_id = 99;
    seeded.pid = 4242;
    seeded.start_ms = -5000;
    seeded.end_ms = -1000;
    seeded.held_ms = 4000;
    a.SeedSessions({seeded});
    model.open[{99, 4242}] = seeded;
    std::map<int64_t, StoredTick> added;
    a.set_credit_sink([&](const TickCredit& credit) {
      const StoredTick& tick = added.at(credit.ts_ms);
      for (size_t g = 0; g < tick.gpus.size(); ++g) {
        const uint32_t gpu = tick.gpus[g].gpu_id;
        std::vector<std::array<uint32_t, 4>> holds;
        for (const StoredProcess& p : tick.processes) {
          if (p.gpu_pos == g && p.compute) {
            holds.push_back({p.pid, p.identity_id, p.command_id, p.mem_used_mib.value_or(0)});
          }
        }
        for (const StoredAllocation& al : tick.allocations) {
          if (al.gpu_pos == g)
            holds.push_back({kAllocationSessionPid | al.identity_id, al.identity_id, 0, 0});
        }
        std::map<uint32_t, int64_t> shares;
        for (const TickCredit::Identity& ic : credit.identities) {
          if (ic.gpu_id == gpu) shares[ic.identity_id] += ic.attributed_ms;
        }
        const TickCredit::Gpu& gc = credit.gpus[g];
        model.Commit(credit.ts_ms, gc.duration_ms, gpu, gc.phase == Phase::kIdleHeld, holds,
                     shares);
      }
    });
    int64_t ts = 0;
    const int ticks = 20 + static_cast<int>(pick(60));
    for (int t = 0; t < ticks; ++t) {
      StoredTick tick;
      for (uint32_t g = 0; g < 2; ++g) {
        StoredGpu gpu;
        gpu.gpu_id = 7 + g;
        gpu.processes_known = true;
        gpu.set(StoredGpuField::kUtilPct, pick(3) == 0 ? 90 : pick(3));
        tick.gpus.push_back(gpu);
      }
      const size_t n = pick(7);
      for (size_t k = 0; k < n; ++k) {
        StoredProcess p;
        p.gpu_pos = pick(2);
        p.pid = 100 + pick(8);  // few pids: reuse by another identity or program is common
        // A pid is listed once a GPU a tick by NvmlSource; a hand-made or imported tick may list
        // one twice (even as another identity): now and then, kept.
        if (std::any_of(
                tick.processes.begin(), tick.processes.end(),
                [&](const StoredProcess& q) { return q.gpu_pos == p.gpu_pos && q.pid == p.pid; }) &&
            pick(4) != 0) {
          continue;
        }
        p.identity_id = 1 + pick(3);
        p.command_id = 1 + pick(2);
        p.compute = pick(5) != 0;
        p.graphics = !p.compute;
        p.mem_used_mib = 1000 + pick(3000);
        if (pick(3) == 0) p.sm_util_pct = pick(100);
        tick.processes.push_back(p);
      }
      if (pick(4) == 0) tick.allocations.push_back({pick(2), 9});
      added[ts] = tick;
      a.Add(ts, run, tick);
      ts += pick(10) == 0 ? 5000 : 1000;  // now and then a gap
      if (takes && pick(5) == 0) {
        std::set<std::tuple<uint32_t, uint32_t, int64_t>> keys;
        for (const SessionRecord& s : a.TakeChangedSessions())
          keys.insert({s.gpu_id, s.pid, s.start_ms});
        ASSERT_EQ(keys, model.changed) << "seed " << seed << " tick " << t;
        model.changed.clear();
      }
    }
    a.Finish(ts);
    std::vector<SessionRecord> expected = model.closed;
    for (const auto& [key, s] : model.open) expected.push_back(s);
    if (!takes) {
      ASSERT_EQ(Sorted(a.AllSessions()), Sorted(expected)) << "seed " << seed;
    } else {
      // What is open, or closed since the last take: each one as the model has it.
      const auto all = Sorted(expected);
      for (const SessionRecord& s : a.AllSessions()) {
        EXPECT_TRUE(std::binary_search(all.begin(), all.end(), SessionFields(s)))
            << "seed " << seed << ": GPU " << s.gpu_id << " pid " << s.pid << " from "
            << s.start_ms;
      }
      std::set<std::tuple<uint32_t, uint32_t, int64_t>> keys;
      for (const SessionRecord& s : a.TakeChangedSessions())
        keys.insert({s.gpu_id, s.pid, s.start_ms});
      EXPECT_EQ(keys, model.changed) << "seed " << seed;
    }
  }
}

// TickByGpu (issue 64) shortens each GPU's scan to its own entries when the tick lists them by
// gpu_pos, as the daemon's do, and looks at the whole lists when it does not: the credit is the
// same either way, entry for entry.
TEST(HistoryAggregator, ATicksCreditDoesNotDependOnTheOrderOfItsLists) {
  const uint64_t first = FirstSeed("ticks by GPU", "CGOV_BY_GPU_SEED", 20261130, 300);
  for (uint64_t seed = first; seed < first + 300; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t n) { return static_cast<uint32_t>(rng() % n); };
    StoredTick tick;
    const uint32_t gpus = 1 + pick(5);
    for (uint32_t g = 0; g < gpus; ++g) {
      StoredGpu gpu;
      gpu.gpu_id = 10 + g;
      gpu.processes_known = pick(6) != 0;
      gpu.set(StoredGpuField::kUtilPct, pick(3) == 0 ? 0 : pick(100));
      gpu.set(StoredGpuField::kPowerDw, 500 + pick(5000));
      tick.gpus.push_back(gpu);
    }
    for (uint32_t k = 0, n = pick(12); k < n; ++k) {
      StoredProcess p;
      p.gpu_pos = pick(gpus);
      p.pid = 100 + pick(20);
      p.identity_id = 1 + pick(4);
      p.compute = pick(5) != 0;
      p.graphics = !p.compute;
      p.mem_used_mib = 100 + pick(8000);
      if (pick(2) == 0) p.sm_util_pct = pick(100);
      tick.processes.push_back(p);
    }
    for (uint32_t k = 0, n = pick(3); k < n; ++k) tick.allocations.push_back({pick(gpus), 5 + k});
    StoredTick ordered = tick;
    std::stable_sort(ordered.processes.begin(), ordered.processes.end(),
                     [](const StoredProcess& a, const StoredProcess& b) {
                       return std::tie(a.gpu_pos, a.pid) < std::tie(b.gpu_pos, b.pid);
                     });
    std::stable_sort(
        ordered.allocations.begin(), ordered.allocations.end(),
        [](const StoredAllocation& a, const StoredAllocation& b) { return a.gpu_pos < b.gpu_pos; });
    // The view: exactly each GPU's entries of an ordered tick; the whole lists otherwise.
    TickByGpu by_gpu;
    by_gpu.Index(ordered);
    for (uint32_t g = 0; g < gpus; ++g) {
      for (const StoredProcess& p : by_gpu.Processes(g)) ASSERT_EQ(p.gpu_pos, g) << seed;
      for (const StoredAllocation& a : by_gpu.Allocations(g)) ASSERT_EQ(a.gpu_pos, g) << seed;
    }
    size_t seen = 0;
    for (uint32_t g = 0; g < gpus; ++g) seen += by_gpu.Processes(g).size();
    ASSERT_EQ(seen, ordered.processes.size()) << "seed " << seed;
    StoredTick shuffled = ordered;
    std::shuffle(shuffled.processes.begin(), shuffled.processes.end(), rng);
    std::shuffle(shuffled.allocations.begin(), shuffled.allocations.end(), rng);
    const bool in_order = std::is_sorted(
        shuffled.processes.begin(), shuffled.processes.end(),
        [](const StoredProcess& a, const StoredProcess& b) { return a.gpu_pos < b.gpu_pos; });
    by_gpu.Index(shuffled);
    if (!in_order) {
      EXPECT_EQ(by_gpu.Processes(0).size(), shuffled.processes.size()) << seed;
    }

    // The per-GPU readers on the view read what they read on the whole tick.
    for (const StoredTick* t : {&ordered, &shuffled}) {
      by_gpu.Index(*t);
      for (uint32_t g = 0; g < gpus; ++g) {
        const GpuPoint whole = StoredGpuPoint(*t, g), viewed = StoredGpuPoint(*t, by_gpu, g);
        EXPECT_EQ(
            std::tie(whole.allocated, whole.compute_memory_bytes, whole.graphics_only_memory_bytes),
            std::tie(viewed.allocated, viewed.compute_memory_bytes,
                     viewed.graphics_only_memory_bytes))
            << "seed " << seed << " GPU " << g;
        std::vector<TickHolder> x, y;
        EXPECT_EQ(SplitGpuTime(*t, g, true, 1000, &x), SplitGpuTime(by_gpu, g, true, 1000, &y));
        ASSERT_EQ(x.size(), y.size()) << "seed " << seed;
        for (size_t k = 0; k < x.size(); ++k) {
          EXPECT_EQ(std::tie(x[k].identity_id, x[k].share_ms, x[k].sessions),
                    std::tie(y[k].identity_id, y[k].share_ms, y[k].sessions))
              << "seed " << seed;
        }
      }
    }

    const auto credit_of = [&](const StoredTick& t) {
      GpuRunStates states;
      std::vector<TickHolder> holders;
      TickCredit credit;
      CreditOf(t, 1000 * static_cast<int64_t>(seed % 7), 1000, PhaseThresholds{}, &states, &holders,
               &credit);
      return credit;
    };
    const TickCredit a = credit_of(ordered), b = credit_of(shuffled);
    ASSERT_EQ(a.gpus.size(), b.gpus.size());
    for (size_t g = 0; g < a.gpus.size(); ++g) {
      EXPECT_EQ(a.gpus[g].phase, b.gpus[g].phase) << "seed " << seed;
      EXPECT_EQ(a.gpus[g].usage.EnergyMj(), b.gpus[g].usage.EnergyMj()) << "seed " << seed;
    }
    ASSERT_EQ(a.identities.size(), b.identities.size()) << "seed " << seed;
    for (size_t k = 0; k < a.identities.size(); ++k) {
      const TickCredit::Identity &x = a.identities[k], &y = b.identities[k];
      EXPECT_EQ(std::tie(x.identity_id, x.gpu_id, x.held_ms, x.idle_held_ms, x.attributed_ms,
                         x.energy_mj),
                std::tie(y.identity_id, y.gpu_id, y.held_ms, y.idle_held_ms, y.attributed_ms,
                         y.energy_mj))
          << "seed " << seed << " entry " << k;
      EXPECT_EQ(x.split, y.split) << "seed " << seed;
    }
  }
}

TEST(HistoryRollup, EncodingRoundTripsAndMergesAdd) {
  GpuHour h;
  h.usage.phase_ms = {1, 2, 3, 4, 5};
  h.usage.transitions = 7;
  h.usage.memory_max_pct = 87.25;
  h.power_dw_ms = 123456789;
  std::string data;
  EncodeGpuHour(h, &data);
  GpuHour back;
  ASSERT_TRUE(DecodeGpuHour(data, "r", &back).ok());
  EXPECT_EQ(back.usage.phase_ms, h.usage.phase_ms);
  EXPECT_EQ(back.usage.transitions, 7);
  EXPECT_DOUBLE_EQ(*back.usage.memory_max_pct, 87.25);
  EXPECT_EQ(back.power_dw_ms, h.power_dw_ms);
  EXPECT_FALSE(DecodeGpuHour(data.substr(0, data.size() - 1), "r", &back).ok());
  MergeInto(h, &back);
  EXPECT_EQ(back.usage.phase_ms[4], 10);
}

TEST(HistoryRollup, Version2CarriesGpmAndVersion1RowsStillDecode) {
  GpuHour h;
  h.usage.phase_ms = {1, 2, 3, 4, 5};
  h.usage.gpm_ms = 3000;
  h.usage.sm_active_ms_x100 = 3000 * 42;
  h.usage.bound_tensor_ms = 1000;
  h.usage.bound_tensor_active_ms_x100 = 1000 * 7;
  std::string data;
  EncodeGpuHour(h, &data);
  EXPECT_EQ(data[0], 4) << "version byte";
  GpuHour back;
  ASSERT_TRUE(DecodeGpuHour(data, "r", &back).ok());
  EXPECT_EQ(back.usage.gpm_ms, 3000);
  EXPECT_EQ(back.usage.sm_active_ms_x100, 3000 * 42);
  EXPECT_EQ(back.usage.bound_tensor_active_ms_x100, 7000);
  // A row a schema-1 cgov wrote: version 1, 27 fields, transitions, peak memory.
  std::string v1(1, '\x01');
  for (int i = 0; i < 27; ++i) PutVarint(i == 4 ? 99 : 0, &v1);  // phase_ms[4] = 99
  PutVarint(3, &v1);
  PutVarint(0, &v1);
  ASSERT_TRUE(DecodeGpuHour(v1, "v1", &back).ok());
  EXPECT_EQ(back.usage.phase_ms[4], 99);
  EXPECT_EQ(back.usage.transitions, 3);
  EXPECT_EQ(back.usage.gpm_ms, 0) << "absent before version 2";
  std::string v9 = data;
  v9[0] = 9;
  EXPECT_FALSE(DecodeGpuHour(v9, "r", &back).ok()) << "a newer encoding is refused";
}

TEST(HistoryRollup, Version3CarriesUtilizationBandsAndVersion2RowsStillDecode) {
  EXPECT_EQ(UtilBand(0), 0u);
  EXPECT_EQ(UtilBand(9.9), 0u);
  EXPECT_EQ(UtilBand(10), 1u);
  EXPECT_EQ(UtilBand(89), 8u);
  EXPECT_EQ(UtilBand(90), 9u);
  EXPECT_EQ(UtilBand(100), 9u);
  GpuHour h;
  h.usage.gpm_ms = 5;
  h.util_band_ms = {1, 0, 0, 0, 0, 0, 0, 0, 0, 9000};
  std::string data;
  EncodeGpuHour(h, &data);
  GpuHour back;
  ASSERT_TRUE(DecodeGpuHour(data, "r", &back).ok());
  EXPECT_EQ(back.util_band_ms, h.util_band_ms);
  MergeInto(h, &back);
  EXPECT_EQ(back.util_band_ms[9], 18000);
  // A row of version 2: 35 fields (the GPM sums last), transitions, peak memory.
  std::string v2(1, '\x02');
  for (int i = 0; i < 35; ++i) PutVarint(i == 27 ? 77 : 0, &v2);  // gpm_ms = 77
  PutVarint(0, &v2);
  PutVarint(0, &v2);
  ASSERT_TRUE(DecodeGpuHour(v2, "v2", &back).ok());
  EXPECT_EQ(back.usage.gpm_ms, 77);
  EXPECT_EQ(back.util_band_ms, (std::array<int64_t, kUtilBands>{})) << "absent before version 3";
}

TEST(HistoryAggregator, EveryTickWithAUtilizationIsCountedInItsBand) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  for (int i = 0; i < 100; ++i, ts += 1000) a.Add(ts, run, Tick(i < 30 ? 95 : 5, {}));
  a.Finish(ts);
  GpuHour total;
  for (const HourBucket& b : a.TakeCompleteHours()) {
    for (const auto& [id, g] : b.gpus) MergeInto(g, &total);
  }
  EXPECT_EQ(total.util_band_ms[9], 30'000);
  EXPECT_EQ(total.util_band_ms[0], 70'000);
  int64_t phases = 0;
  for (int64_t ms : total.usage.phase_ms) phases += ms;
  EXPECT_EQ(phases, 100'000) << "the bands cover the same time as the phases";
}

HistoryInput TwoUsersOneGpu() {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  for (int i = 0; i < 3600; ++i, ts += 1000) {
    a.Add(ts, run, Tick(i < 1800 ? 80 : 0, {{10, 1, 70000}, {11, 2, 1000}}));
  }
  a.Finish(ts);
  HistoryInput in;
  in.since_ms = 0;
  in.until_ms = ts;
  in.gpus = {{1, "GPU-x", 0, "NVIDIA H100 80GB HBM3", 81559, "", "", {}}};
  in.identities[1].user = "alice";
  in.identities[1].project = "llm";
  in.identities[2].user = "bob";
  in.identities[2].project = "llm";
  in.hours = a.TakeCompleteHours();
  in.sessions = a.AllSessions();
  in.data_end_ms = ts;
  return in;
}

// The fleet report's identity counters do not say which GPU of a host the time was on: with
// identity_costs, Who reads the dollars the daemon priced the time at (here as if the time were
// on a $10 GPU beside the $2 one it is filed under), unless the report prices on its own.
TEST(HistorySummary, WhoReadsTheDollarsTheSourcePricedWhenItSaysSo) {
  HistoryInput in = TwoUsersOneGpu();
  ResolvedPrice daemon;
  daemon.per_gpu_hour = 2 * kMicroPerUsd;
  daemon.source = "the daemon";
  in.gpu_prices[1] = daemon;
  for (HourBucket& b : in.hours) {
    for (auto& [key, h] : b.identities) {
      h.cost = CostOf(10 * kMicroPerUsd, h.AttributedMs());
    }
  }
  HistoryOptions o;
  auto by_gpu = SummarizeHistory(in, o);
  ASSERT_TRUE(by_gpu.ok());
  ASSERT_EQ(by_gpu->who.size(), 2u);
  EXPECT_EQ(by_gpu->who[0].cost, kMicroPerUsd) << "half the hour at its GPU's $2";
  in.identity_costs = true;
  auto by_source = SummarizeHistory(in, o);
  ASSERT_TRUE(by_source.ok());
  EXPECT_EQ(by_source->who[0].cost, 5 * kMicroPerUsd) << "the dollars it was credited with";
  EXPECT_EQ(by_source->who[0].idle_held_cost, 25 * kMicroPerUsd / 10);
  o.price.price_per_gpu_hour = 4 * kMicroPerUsd;
  auto repriced = SummarizeHistory(in, o);
  ASSERT_TRUE(repriced.ok());
  EXPECT_EQ(repriced->who[0].cost, 2 * kMicroPerUsd) << "the report's own price wins";
}

TEST(HistorySummary, WhoSplitsCostAndActionsNeedTheThreshold) {
  HistoryOptions o;
  o.price.price_per_gpu_hour = 10 * kMicroPerUsd;
  o.idle_held_min_ms = 30 * 60 * 1000;
  auto s = SummarizeHistory(TwoUsersOneGpu(), o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->cost.total, 10 * kMicroPerUsd);
  ASSERT_EQ(s->who.size(), 2u);
  EXPECT_EQ(s->who[0].cost + s->who[1].cost, s->cost.total) << "no double billing";
  EXPECT_EQ(s->who[0].held_ms, 3600 * 1000);
  EXPECT_DOUBLE_EQ(s->who[0].share_pct, 50);
  EXPECT_EQ(s->who[0].idle_held_cost, 25 * kMicroPerUsd / 10);
  ASSERT_EQ(s->actions.size(), 2u) << "both held 30 min unbroken idle";
  EXPECT_TRUE(s->actions[0].ongoing);
  // Each holder's action claims its share of the idle-held half hour, as Who does: not the
  // whole of it twice (before: $5.00 each, $10.00 for $5.00 of idle-held GPU-time).
  EXPECT_EQ(s->actions[0].idle_held_cost, 25 * kMicroPerUsd / 10);
  EXPECT_EQ(s->actions[0].session.idle_held_ms, 1800 * 1000) << "each held it the whole time";
  EXPECT_NE(s->actions[0].advice.find("nvidia-smi -i 0"), std::string::npos);
  o.idle_held_min_ms = 31 * 60 * 1000;
  EXPECT_TRUE(SummarizeHistory(TwoUsersOneGpu(), o)->actions.empty());
  // Grouped into habits (one per holder here), each with advice for its kind of holder.
  ASSERT_EQ(s->habits.size(), 2u);
  EXPECT_EQ(s->habits[0].sessions, 1);
  EXPECT_TRUE(s->habits[0].ongoing);
  HistoryInput in = TwoUsersOneGpu();
  in.identities[1].slurm_job = "4242";
  in.identities[2].pod = "0b5c1d2e-pod";
  o.idle_held_min_ms = 30 * 60 * 1000;
  auto batch = SummarizeHistory(in, o);
  ASSERT_EQ(batch->habits.size(), 2u);
  for (const HabitRow& h : batch->habits) {
    if (h.user == "alice") {
      EXPECT_EQ(h.kind, "Slurm job");
      EXPECT_NE(h.advice.find("Slurm job 4242"), std::string::npos) << h.advice;
    } else {
      EXPECT_EQ(h.kind, "Kubernetes pod");
      EXPECT_NE(h.advice.find("activeDeadlineSeconds"), std::string::npos) << h.advice;
    }
  }
  o.idle_held_min_ms = 31 * 60 * 1000;
  o.by = HistoryBy::kProject;
  auto by_project = SummarizeHistory(TwoUsersOneGpu(), o);
  ASSERT_EQ(by_project->who.size(), 1u);
  EXPECT_EQ(by_project->who[0].users, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_DOUBLE_EQ(by_project->who[0].share_pct, 100);
}

// Issue 57, item 3: two processes of one user holding one idle GPU (beside another user's) hold
// it once. Each session's share of the idle-held time: the GPU's split evenly between the users,
// a user's split evenly between its processes; the shares add up to the GPU's idle-held phase,
// each user's actions to its Who row, and the reconciliation's action-list hours to no more than
// the phase (before: alice's two sessions claimed 2 h of a 1 h idle GPU).
TEST(HistorySummary, TwoProcessesOfOneUserOnOneGpuHoldItsIdleTimeOnce) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  for (int i = 0; i < 3600; ++i, ts += 1000) {
    a.Add(ts, run, Tick(0, {{10, 1, 30000}, {12, 1, 30000}, {11, 2, 1000}}));
  }
  a.Finish(ts + 1);  // one millisecond more: 3,600,001 ms does not divide by 4
  HistoryInput in;
  in.since_ms = 0;
  in.until_ms = ts + 1;
  in.gpus = {{1, "GPU-x", 0, "NVIDIA H100 80GB HBM3", 81559, "", "", {}}};
  in.identities[1].user = "alice";
  in.identities[2].user = "bob";
  in.hours = a.TakeCompleteHours();
  in.sessions = a.AllSessions();
  in.data_end_ms = ts + 1;
  ASSERT_EQ(in.sessions.size(), 3u);
  int64_t shares = 0;
  for (const SessionRecord& x : in.sessions) {
    EXPECT_EQ(x.idle_held_ms, 3'600'000) << "each process held the idle GPU all the time";
    shares += x.idle_held_share_ms;
    EXPECT_EQ(x.idle_held_share_ms, x.identity_id == 2 ? 1'800'000 : 900'000) << x.pid;
  }
  EXPECT_EQ(shares, 3'600'000) << "the sessions of one GPU add up to its idle-held time";
  HistoryOptions o;
  o.price.price_per_gpu_hour = 3'600'000;  // a micro-dollar a millisecond: exact
  o.idle_held_min_ms = 30 * 60 * 1000;
  auto s = SummarizeHistory(in, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->actions.size(), 3u);
  std::map<std::string, MicroUsd> by_user;
  for (const ActionRow& r : s->actions) by_user[r.user] += r.idle_held_cost;
  for (const WhoRow& w : s->who) {
    EXPECT_EQ(by_user[w.key], w.idle_held_cost) << w.key;
  }
  EXPECT_EQ(by_user["alice"] + by_user["bob"], s->cost.total) << "the hour was all idle-held";
  EXPECT_EQ(s->idle_held.in_actions_ms, s->idle_held.total_ms);
  int64_t habit_ms = 0;
  for (const HabitRow& h : s->habits) habit_ms += h.idle_held_ms;
  EXPECT_EQ(habit_ms, s->idle_held.total_ms);
}

// A pod the kubelet allocated the GPU to, idle for the hour with nothing running: an action
// naming the pod (no pid), with the advice to scale it down or delete it.
TEST(HistorySummary, AnIdleAllocatedPodIsAnActionWithoutAPid) {
  const RunRecord run{1, 0, 1000, "t", "h"};
  HistoryAggregator a;
  int64_t ts = 0;
  for (int i = 0; i < 3600; ++i, ts += 1000) {
    StoredTick t = Tick(0, {});
    t.allocations = {{0, 5}};
    a.Add(ts, run, t);
  }
  a.Finish(ts);
  HistoryInput in;
  in.since_ms = 0;
  in.until_ms = ts;
  in.gpus = {{1, "GPU-x", 0, "NVIDIA H100 80GB HBM3", 81559, "", "", {}}};
  in.identities[5].pod = "44444444-uid";
  in.identities[5].kube_namespace = "notebooks";
  in.identities[5].kube_pod_name = "reserved-0";
  in.hours = a.TakeCompleteHours();
  in.sessions = a.AllSessions();
  in.data_end_ms = ts;
  HistoryOptions o;
  o.price.price_per_gpu_hour = 10 * kMicroPerUsd;
  auto s = SummarizeHistory(in, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->actions.size(), 1u);
  const ActionRow& action = s->actions[0];
  EXPECT_TRUE(action.session.allocation());
  EXPECT_EQ(action.command, "(allocated to notebooks/reserved-0)");
  EXPECT_EQ(action.idle_held_cost, 10 * kMicroPerUsd) << "the whole hour";
  EXPECT_TRUE(action.ongoing);
  EXPECT_NE(action.advice.find("still allocated: the pod notebooks/reserved-0 holds GPU 0"),
            std::string::npos)
      << action.advice;
  EXPECT_NE(action.advice.find("kubectl delete pod -n notebooks reserved-0"), std::string::npos);
  EXPECT_EQ(action.advice.find("kill"), std::string::npos) << "no process to end";
  ASSERT_EQ(s->habits.size(), 1u);
  EXPECT_EQ(s->habits[0].kind, "allocated pod");
  EXPECT_EQ(s->habits[0].pod_name, "notebooks/reserved-0");
  EXPECT_NE(s->habits[0].advice.find("Now: `kubectl delete pod -n notebooks reserved-0`"),
            std::string::npos)
      << s->habits[0].advice;
}

TEST(HistorySummary, HeatmapSlotsAreWeekdayAndHourInUtcByDefault) {
  HistoryInput in = TwoUsersOneGpu();  // hour 0 of 1970-01-01, a Thursday
  auto s = SummarizeHistory(in, {});
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->heatmap[3][0].has_value());
  EXPECT_DOUBLE_EQ(*s->heatmap[3][0], 40);
  EXPECT_FALSE(s->heatmap[0][0].has_value());
}

}  // namespace
}  // namespace cgov
