#include "analysis/history_aggregator.h"

#include <algorithm>
#include <span>

#include "core/time_format.h"

namespace cgov {
namespace {

constexpr uint64_t kMib = 1ull << 20;

int64_t HourOf(int64_t ts_ms) {
  return ts_ms >= 0 ? ts_ms / kHourMs : (ts_ms - kHourMs + 1) / kHourMs;
}

SampleHost HostOf(const StoredTick& tick) {
  SampleHost host;
  if (tick.cpu_pct_x10) host.cpu_pct = *tick.cpu_pct_x10 / 10.0;
  if (tick.iowait_pct_x10) host.iowait_pct = *tick.iowait_pct_x10 / 10.0;
  return host;
}

// The identities holding GPU `gpu_pos` in `tick`, sorted by id: whether each holds compute
// memory (or the GPU by allocation) and the SM utilization of its compute processes on it
// (unknown when one of them has none: an allocation, or a driver without per-process readings).
void CollectHolders(std::span<const StoredProcess> processes,
                    std::span<const StoredAllocation> allocations, size_t gpu_pos,
                    std::vector<TickHolder>* holders) {
  holders->clear();
  auto holder = [&](uint32_t id) -> TickHolder& {
    auto it = std::find_if(holders->begin(), holders->end(),
                           [&](const TickHolder& h) { return h.identity_id == id; });
    if (it != holders->end()) return *it;
    TickHolder& h = holders->emplace_back();
    h.identity_id = id;
    return h;
  };
  for (const StoredProcess& proc : processes) {
    if (proc.gpu_pos != gpu_pos) continue;
    TickHolder& h = holder(proc.identity_id);
    if (!proc.compute) continue;
    h.compute = true;
    ++h.sessions;
    h.sm_util += proc.sm_util_pct.value_or(0);
    h.util_known = h.util_known && proc.sm_util_pct.has_value();
  }
  // A container the GPU was allocated to holds it as a compute process would (its processes,
  // if it has any, are not on this GPU or not visible to cgov); its utilization is not known.
  for (const StoredAllocation& a : allocations) {
    if (a.gpu_pos != gpu_pos) continue;
    TickHolder& h = holder(a.identity_id);
    h.compute = true;
    ++h.sessions;
    h.util_known = false;
  }
  std::sort(holders->begin(), holders->end(),
            [](const TickHolder& a, const TickHolder& b) { return a.identity_id < b.identity_id; });
}

// Sets each compute holder's share of the tick's `duration_ms` (they add up to it exactly) and
// says how it was split. A busy GPU shared by compute holders whose SM utilization is known (and
// not all 0) is split in proportion to it; otherwise evenly (idle-held time always: nobody used
// the GPU more than another).
SplitRule SplitShares(bool busy, int64_t duration_ms, std::vector<TickHolder>* holders) {
  int64_t compute = 0, util_sum = 0;
  bool util_known = true;
  for (const TickHolder& h : *holders) {
    if (!h.compute) continue;
    ++compute;
    util_known = util_known && h.util_known;
    util_sum += h.sm_util;
  }
  if (compute == 0) return SplitRule::kAlone;
  const bool by_util = compute > 1 && busy && util_known && util_sum > 0;
  int64_t left = duration_ms, seen = 0;
  for (TickHolder& h : *holders) {
    if (!h.compute) continue;
    ++seen;
    h.share_ms = seen == compute ? left
                 : by_util       ? duration_ms * h.sm_util / util_sum
                                 : duration_ms / compute;
    left -= h.share_ms;
  }
  return compute == 1 ? SplitRule::kAlone
         : by_util    ? SplitRule::kByUtilization
                      : SplitRule::kEvenly;
}

// GpuRunState's rule: the estimate in `u` (one sample's, in its phase or unknown) corrected by
// the counter window that ends at this tick, if one does.
void CorrectEnergyByCounter(const StoredGpu& g, int64_t ts_ms, int64_t duration_ms,
                            std::optional<Phase> phase, GpuRunState* s, GpuUsage* u) {
  int64_t& energy = phase ? u->energy_mj[static_cast<size_t>(*phase)] : u->energy_unknown_mj;
  const int64_t estimate = energy;
  if (s->next_ts_ms >= 0 && ts_ms != s->next_ts_ms) s->counter_mj.reset();  // a gap
  s->next_ts_ms = ts_ms + duration_ms;
  int64_t correction = 0;
  if (const std::optional<uint64_t> reading = g.get(StoredGpuField::kEnergyMj)) {
    if (s->counter_mj && *reading >= *s->counter_mj) {
      // Bounded as a sample is (a database may be anyone's file).
      const auto measured =
          static_cast<int64_t>(std::min<uint64_t>(*reading - *s->counter_mj, kMaxSampleEnergyMj));
      correction = measured - s->since_counter_mj;
      u->energy_metered_ms += ts_ms - s->counter_ts_ms;
    }
    s->counter_mj = reading;
    s->counter_ts_ms = ts_ms;
    s->since_counter_mj = 0;
  }
  s->since_counter_mj = std::min(s->since_counter_mj + estimate, kMaxSampleEnergyMj);
  // A shortfall is taken from this tick's energy and the next ones', never below 0.
  const int64_t want = estimate + correction - s->owed_mj;
  energy = std::max<int64_t>(0, want);
  s->owed_mj = std::min<int64_t>(std::max<int64_t>(0, -want), kMaxSampleEnergyMj);
}

// StoredGpuPoint on the GPU's own entries (TickByGpu's, or the whole lists).
GpuPoint StoredPointOf(const StoredTick& tick, size_t gpu_pos,
                       std::span<const StoredProcess> processes,
                       std::span<const StoredAllocation> allocations) {
  GpuPoint p;
  const StoredGpu& g = tick.gpus[gpu_pos];
  if (g.lost) return p;
  if (auto util = g.get(StoredGpuField::kUtilPct)) p.util_pct = static_cast<double>(*util);
  p.clock_reasons = g.get(StoredGpuField::kClockReasons);
  if (auto sm = g.get(StoredGpuField::kSmActivePctX10)) p.sm_active_pct = *sm / 10.0;
  if (auto tensor = g.get(StoredGpuField::kTensorActivePctX10))
    p.tensor_active_pct = *tensor / 10.0;
  if (auto power = g.get(StoredGpuField::kPowerDw)) {
    p.power_mw = static_cast<uint32_t>(std::min<uint64_t>(*power, UINT32_MAX / 100) * 100);
  }
  p.allocated = std::any_of(allocations.begin(), allocations.end(),
                            [&](const StoredAllocation& a) { return a.gpu_pos == gpu_pos; });
  if (!g.processes_known) return p;
  uint64_t compute = 0;
  for (const StoredProcess& proc : processes) {
    if (proc.gpu_pos != gpu_pos) continue;
    const uint64_t used = uint64_t{proc.mem_used_mib.value_or(0)} * kMib;
    if (proc.compute) {
      compute += used;
    } else if (proc.graphics) {
      p.graphics_only_memory_bytes += used;
    }
  }
  p.compute_memory_bytes = compute;
  return p;
}

}  // namespace

SplitRule SplitGpuTime(const StoredTick& tick, size_t gpu_pos, bool busy, int64_t duration_ms,
                       std::vector<TickHolder>* holders) {
  CollectHolders(tick.processes, tick.allocations, gpu_pos, holders);
  return SplitShares(busy, duration_ms, holders);
}

GpuPoint StoredGpuPoint(const StoredTick& tick, size_t gpu_pos) {
  return StoredPointOf(tick, gpu_pos, tick.processes, tick.allocations);
}

SplitRule SplitGpuTime(const TickByGpu& by_gpu, size_t gpu_pos, bool busy, int64_t duration_ms,
                       std::vector<TickHolder>* holders) {
  CollectHolders(by_gpu.Processes(gpu_pos), by_gpu.Allocations(gpu_pos), gpu_pos, holders);
  return SplitShares(busy, duration_ms, holders);
}

GpuPoint StoredGpuPoint(const StoredTick& tick, const TickByGpu& by_gpu, size_t gpu_pos) {
  return StoredPointOf(tick, gpu_pos, by_gpu.Processes(gpu_pos), by_gpu.Allocations(gpu_pos));
}

namespace {

// Where each GPU's entries start in `list`, one past the last GPU's at the end; empty when the
// list is not in gpu_pos order or names a GPU the tick lacks.
template <typename Entry>
void GpuStartsOf(const std::vector<Entry>& list, size_t gpus, std::vector<uint32_t>* starts) {
  starts->assign(gpus + 1, 0);
  uint32_t last = 0;
  for (const Entry& e : list) {
    if (e.gpu_pos < last || e.gpu_pos >= gpus) {
      starts->clear();
      return;
    }
    last = e.gpu_pos;
    ++(*starts)[e.gpu_pos + 1];
  }
  for (size_t i = 1; i <= gpus; ++i) (*starts)[i] += (*starts)[i - 1];
}

template <typename Entry>
std::span<const Entry> GpuEntriesOf(const std::vector<Entry>& list,
                                    const std::vector<uint32_t>& starts, size_t gpu_pos) {
  if (starts.empty() || gpu_pos + 1 >= starts.size()) return list;
  return std::span<const Entry>(list).subspan(starts[gpu_pos],
                                              starts[gpu_pos + 1] - starts[gpu_pos]);
}

}  // namespace

void TickByGpu::Index(const StoredTick& tick) {
  tick_ = &tick;
  GpuStartsOf(tick.processes, tick.gpus.size(), &process_start_);
  GpuStartsOf(tick.allocations, tick.gpus.size(), &allocation_start_);
}

std::span<const StoredProcess> TickByGpu::Processes(size_t gpu_pos) const {
  return GpuEntriesOf(tick_->processes, process_start_, gpu_pos);
}

std::span<const StoredAllocation> TickByGpu::Allocations(size_t gpu_pos) const {
  return GpuEntriesOf(tick_->allocations, allocation_start_, gpu_pos);
}

HistoryAggregator::HistoryAggregator(PhaseThresholds phases) : phases_(phases) {}

void HistoryAggregator::SeedSessions(const std::vector<SessionRecord>& open) {
  for (const SessionRecord& s : open) {
    if (s.open) open_sessions_[s.gpu_id].push_back(OpenSession{s, false});
  }
  for (auto& [gpu_id, sessions] : open_sessions_) {
    std::sort(sessions.begin(), sessions.end(), [](const OpenSession& a, const OpenSession& b) {
      return a.record.pid < b.record.pid;
    });
  }
}

HourBucket& HistoryAggregator::Bucket(int64_t hour) {
  HourBucket& b = open_hours_[hour];
  b.hour = hour;
  return b;
}

void HistoryAggregator::Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick) {
  const int64_t hour = HourOf(ts_ms);
  if (pending_) {
    const int64_t elapsed = std::max<int64_t>(0, ts_ms - pending_->ts_ms);
    const bool run_ended = pending_->run.id != run.id;
    const int64_t cap = run_ended ? pending_->run.interval_ms : 2 * pending_->run.interval_ms;
    Commit(*pending_, std::min(elapsed, cap));
    if (elapsed > cap && !run_ended) {
      for (const StoredGpu& g : pending_->tick.gpus) {
        Bucket(HourOf(pending_->ts_ms)).gpus[g.gpu_id].gap_ms += elapsed - cap;
      }
    }
    // Swings are counted within a run: a new daemon starts its counters from nothing.
    if (run_ended) run_states_.clear();
  }
  CompleteHoursBefore(hour);
  // Assigned into, not replaced: the tick's vectors keep their capacity from tick to tick.
  // (Not emplace(): clang takes a nested struct with member initializers for one that cannot be
  // default-constructed there.)
  if (!pending_) pending_ = Pending{};
  pending_->ts_ms = ts_ms;
  pending_->run = run;
  pending_->tick = tick;
}

void HistoryAggregator::Finish(int64_t end_ms) {
  if (pending_) {
    const int64_t duration =
        std::clamp<int64_t>(end_ms - pending_->ts_ms, 0, pending_->run.interval_ms);
    Commit(*pending_, duration);
    complete_before_ms_ = std::max(complete_before_ms_, pending_->ts_ms + duration);
    pending_.reset();
  }
  CompleteHoursBefore(INT64_MAX);
}

void HistoryAggregator::CompleteHoursBefore(int64_t hour) {
  for (auto it = open_hours_.begin(); it != open_hours_.end() && it->first < hour;) {
    complete_.push_back(std::move(it->second));
    it = open_hours_.erase(it);
  }
  if (hour != INT64_MAX) complete_before_ms_ = std::max(complete_before_ms_, hour * kHourMs);
}

// Everything the tick is credited with comes from CreditOf's parts, GPU by GPU: the rollups are
// the sum of the credits /metrics counts.
void HistoryAggregator::Commit(const Pending& p, int64_t duration_ms) {
  HourBucket& bucket = Bucket(HourOf(p.ts_ms));
  const StoredTick& tick = p.tick;
  StartCredit(p.ts_ms, &credit_);
  by_gpu_.Index(tick);
  for (size_t i = 0; i < tick.gpus.size(); ++i) {
    const StoredGpu& g = tick.gpus[i];
    const size_t first_identity = credit_.identities.size();
    CreditGpu(tick, by_gpu_, i, duration_ms, phases_, &run_states_, &holders_, &credit_);
    const TickCredit::Gpu& gc = credit_.gpus.back();
    GpuHour& gh = bucket.gpus[g.gpu_id];
    gh.samples += 1;
    MergeInto(gc.usage, &gh.usage);
    if (auto mem = g.get(StoredGpuField::kMemUsedMib); mem && !g.lost) {
      gh.mem_used_mib_ms += static_cast<int64_t>(*mem) * duration_ms;
      gh.mem_known_ms += duration_ms;
    }
    if (auto power = g.get(StoredGpuField::kPowerDw); power && !g.lost) {
      gh.power_dw_ms += static_cast<int64_t>(*power) * duration_ms;
      gh.power_known_ms += duration_ms;
    }
    if (auto util = g.get(StoredGpuField::kUtilPct); util && !g.lost) {
      gh.util_band_ms[UtilBand(static_cast<double>(*util))] += duration_ms;
    }
    for (size_t k = first_identity; k < credit_.identities.size(); ++k) {
      const TickCredit::Identity& ic = credit_.identities[k];
      IdentityHour& ih = bucket.identities[{ic.identity_id, g.gpu_id}];
      ih.samples += 1;
      ih.held_ms += ic.held_ms;
      ih.idle_held_ms += ic.idle_held_ms;
      ih.energy_mj += ic.energy_mj;
      if (ic.idle_held_ms > 0) ih.idle_held_energy_mj += ic.energy_mj;
      if (ic.split == SplitRule::kByUtilization) ih.shared_by_util_ms += ic.attributed_ms;
      if (ic.split == SplitRule::kEvenly) ih.shared_evenly_ms += ic.attributed_ms;
      if (ic.phase) {
        ih.attributed_ms[static_cast<size_t>(*ic.phase)] += ic.attributed_ms;
      } else {
        ih.attributed_unknown_ms += ic.attributed_ms;
      }
    }
    if (g.processes_known) CommitSessions(p, i, gc.phase == Phase::kIdleHeld, duration_ms);
  }
  if (sink_) sink_(credit_);
}

// The tick's holds of GPU `gpu_pos` into holds_, in pid order, each with its idle-held share.
void HistoryAggregator::GatherHolds(size_t gpu_pos, bool idle_held) {
  // Idle-held: each identity's share of the time (holders_, as SplitGpuTime left it for this
  // GPU) goes evenly to its sessions here, the first ones (in the tick's order) a millisecond
  // more where it does not divide: the sessions of this tick add up to the GPU's idle-held time.
  auto idle_share = [&](uint32_t identity_id) -> int64_t {
    if (!idle_held) return 0;
    auto h = std::find_if(holders_.begin(), holders_.end(),
                          [&](const TickHolder& x) { return x.identity_id == identity_id; });
    if (h == holders_.end() || !h->compute) return 0;
    const int64_t n = std::max<int64_t>(1, h->sessions);
    const int64_t seen = h->sessions_seen++;
    return h->share_ms / n + (seen < h->share_ms % n ? 1 : 0);
  };
  // A compute process, or a container the GPU is allocated to (its session's pid is
  // kAllocationSessionPid | identity: one per container and GPU, never a real pid).
  holds_.clear();
  for (const StoredProcess& proc : by_gpu_.Processes(gpu_pos)) {
    if (proc.gpu_pos != gpu_pos || !proc.compute) continue;
    holds_.push_back({proc.pid, proc.identity_id, proc.command_id, proc.mem_used_mib.value_or(0),
                      idle_share(proc.identity_id)});
  }
  for (const StoredAllocation& a : by_gpu_.Allocations(gpu_pos)) {
    if (a.gpu_pos != gpu_pos) continue;
    holds_.push_back(
        {kAllocationSessionPid | a.identity_id, a.identity_id, 0, 0, idle_share(a.identity_id)});
  }
  // Already in pid order from a daemon's tick (each GPU's processes are listed so, then its
  // allocations, whose pids have the high bit): sorted (stably, so a pid listed twice keeps the
  // tick's order) only when not, as a hand-made or imported tick may be.
  const auto by_pid = [](const Hold& a, const Hold& b) { return a.pid < b.pid; };
  if (!std::is_sorted(holds_.begin(), holds_.end(), by_pid)) {
    std::stable_sort(holds_.begin(), holds_.end(), by_pid);
  }
}

void HistoryAggregator::CommitSessions(const Pending& p, size_t gpu_pos, bool idle_held,
                                       int64_t duration_ms) {
  const uint32_t gpu_id = p.tick.gpus[gpu_pos].gpu_id;
  const int64_t max_gap = 2 * p.run.interval_ms;
  GatherHolds(gpu_pos, idle_held);
  auto close = [&](OpenSession& s) {
    s.record.open = false;
    closed_sessions_.push_back(s.record);
  };
  auto open_new = [&](const Hold& h) -> OpenSession& {
    OpenSession& s = merged_.emplace_back();
    s.record.gpu_id = gpu_id;
    s.record.pid = h.pid;
    s.record.start_ms = p.ts_ms;
    s.record.identity_id = h.identity_id;
    s.record.command_id = h.command_id;
    return s;
  };
  // A restart after a gap, or the pid reused (by another holder, or another program).
  auto ends = [&](const SessionRecord& s, const Hold& h) {
    return p.ts_ms - s.end_ms > max_gap || s.identity_id != h.identity_id ||
           s.command_id != h.command_id;
  };
  auto extend = [&](const Hold& h, OpenSession& open) {
    open.changed = true;
    SessionRecord& s = open.record;
    s.end_ms = p.ts_ms + duration_ms;
    s.held_ms += duration_ms;
    if (idle_held) {
      s.idle_held_ms += duration_ms;
      s.idle_held_share_ms += h.idle_share_ms;
      s.idle_streak_ms += duration_ms;
      if (s.idle_streak_ms > s.idle_streak_max_ms) {
        s.idle_streak_max_ms = s.idle_streak_ms;
        s.idle_streak_max_start_ms = s.end_ms - s.idle_streak_ms;
      }
    } else {
      s.idle_streak_ms = 0;
    }
    s.mem_max_mib = std::max(s.mem_max_mib, h.mem_mib);
  };
  // One pass over both, in pid order: a session with no hold closes (its process is gone); a
  // hold extends its pid's session, or opens one.
  std::vector<OpenSession>& open = open_sessions_[gpu_id];
  merged_.clear();
  size_t k = 0;
  for (size_t j = 0; j < holds_.size(); ++j) {
    const Hold& h = holds_[j];
    // A pid listed twice (no driver does; a hand-made tick might) is held again, as one list.
    if (j > 0 && holds_[j - 1].pid == h.pid) {
      if (ends(merged_.back().record, h)) {
        close(merged_.back());
        merged_.pop_back();
        open_new(h);
      }
      extend(h, merged_.back());
      continue;
    }
    while (k < open.size() && open[k].record.pid < h.pid) close(open[k++]);
    if (k < open.size() && open[k].record.pid == h.pid) {
      OpenSession& s = open[k++];
      if (!ends(s.record, h)) {
        extend(h, merged_.emplace_back(std::move(s)));
        continue;
      }
      close(s);
    }
    extend(h, open_new(h));
  }
  while (k < open.size()) close(open[k++]);
  open.swap(merged_);
}

std::vector<HourBucket> HistoryAggregator::TakeCompleteHours() {
  std::vector<HourBucket> out;
  out.swap(complete_);
  return out;
}

std::vector<SessionRecord> HistoryAggregator::TakeChangedSessions() {
  std::vector<SessionRecord> out;
  out.swap(closed_sessions_);
  for (auto& [gpu_id, sessions] : open_sessions_) {
    for (OpenSession& s : sessions) {
      if (s.changed) out.push_back(s.record);
      s.changed = false;
    }
  }
  return out;
}

std::vector<SessionRecord> HistoryAggregator::AllSessions() const {
  std::vector<SessionRecord> out = closed_sessions_;
  for (const auto& [gpu_id, sessions] : open_sessions_) {
    for (const OpenSession& s : sessions) out.push_back(s.record);
  }
  return out;
}

void StartCredit(int64_t ts_ms, TickCredit* out) {
  out->ts_ms = ts_ms;
  out->gpus.clear();
  out->identities.clear();
}

void CreditGpu(const StoredTick& tick, const TickByGpu& by_gpu, size_t gpu_pos, int64_t duration_ms,
               const PhaseThresholds& phases, GpuRunStates* states,
               std::vector<TickHolder>* holders, TickCredit* out) {
  const StoredGpu& g = tick.gpus[gpu_pos];
  const GpuPoint point = StoredGpuPoint(tick, by_gpu, gpu_pos);
  TickCredit::Gpu& gc = out->gpus.emplace_back();
  gc.gpu_id = g.gpu_id;
  gc.duration_ms = duration_ms;
  // The history's patterns at their defaults, as every report of it reads them.
  GpuRunState& state = (*states)[g.gpu_id];
  gc.phase = CreditGpuSample(point, HostOf(tick), duration_ms, phases, PatternThresholds{},
                             &state.swing, &gc.usage);
  if (!g.lost) CorrectEnergyByCounter(g, out->ts_ms, duration_ms, gc.phase, &state, &gc.usage);
  gc.state = state;
  gc.util_ms_x100 = gc.usage.util_ms_x100;
  const bool busy = gc.phase && *gc.phase != Phase::kIdleHeld && *gc.phase != Phase::kTrulyIdle;
  const SplitRule rule = SplitGpuTime(by_gpu, gpu_pos, busy, duration_ms, holders);
  // The energy goes as the time went: each compute holder share_ms / duration_ms of it, the last
  // one what is left, so that the shares add up to the GPU's energy exactly.
  const int64_t energy = gc.usage.EnergyMj();
  int64_t energy_left = energy;
  size_t compute_left = static_cast<size_t>(std::count_if(
      holders->begin(), holders->end(), [](const TickHolder& h) { return h.compute; }));
  for (const TickHolder& h : *holders) {
    TickCredit::Identity& ic = out->identities.emplace_back();
    ic.identity_id = h.identity_id;
    ic.gpu_id = g.gpu_id;
    ic.held_ms = duration_ms;
    ic.phase = gc.phase;
    if (!h.compute) continue;
    ic.idle_held_ms = gc.phase == Phase::kIdleHeld ? duration_ms : 0;
    ic.attributed_ms = h.share_ms;
    ic.split = rule;
    ic.energy_mj =
        --compute_left == 0 ? energy_left
        : duration_ms > 0
            ? static_cast<int64_t>(static_cast<Int128>(energy) * h.share_ms / duration_ms)
            : 0;
    energy_left -= ic.energy_mj;
  }
}

void CreditOf(const StoredTick& tick, int64_t ts_ms, int64_t duration_ms,
              const PhaseThresholds& phases, GpuRunStates* states, std::vector<TickHolder>* holders,
              TickCredit* out) {
  StartCredit(ts_ms, out);
  TickByGpu by_gpu;
  by_gpu.Index(tick);
  for (size_t i = 0; i < tick.gpus.size(); ++i) {
    CreditGpu(tick, by_gpu, i, duration_ms, phases, states, holders, out);
  }
}

}  // namespace cgov
