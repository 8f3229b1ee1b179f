#include "analysis/rightsize.h"

#include <algorithm>

namespace cgov {
namespace {

// The driver's own share of a GPU's memory, which no process can use: a replay counts 98 % of
// the total as the processes' (an H100 80GB shows ~0.6 % used with no process).
constexpr double kReplayUsableShare = 0.98;

uint64_t ReplayCapacityMib(uint64_t mem_total_mib) {
  return static_cast<uint64_t>(static_cast<double>(mem_total_mib) * kReplayUsableShare);
}

// A load's size under a sizing: memory and compute.
struct Item {
  uint32_t gpu_id = 0;
  uint64_t mem_mib = 0;
  uint32_t compute_x10 = 0;
};

std::vector<Item> SizedItems(const PlanProfile& profile, const std::vector<uint32_t>& ids,
                             bool peak) {
  std::vector<Item> items;
  for (uint32_t id : ids) {
    auto it = profile.gpus.find(id);
    if (it == profile.gpus.end()) continue;
    const GpuLoad& g = it->second;
    // A GPU that carried nothing all window needs no place: its whole time is freed.
    if (g.mem_mib.max() == 0 && g.compute_x10.max() == 0) continue;
    Item item{id, peak ? g.mem_mib.max() : g.mem_mib.Percentile(0.99),
              g.compute_x10.Percentile(peak ? 0.99 : 0.95)};
    items.push_back(item);
  }
  // Largest memory first (then compute, then id: the same plan for the same data).
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    if (a.mem_mib != b.mem_mib) return a.mem_mib > b.mem_mib;
    if (a.compute_x10 != b.compute_x10) return a.compute_x10 > b.compute_x10;
    return a.gpu_id < b.gpu_id;
  });
  return items;
}

// First-fit decreasing into GPUs of `capacity_mib`, each filled to the capacity less the margin
// and to the compute ceiling. An item that fits no GPU alone gets one of its own.
PlanCandidate FirstFit(const std::vector<Item>& items, uint64_t capacity_mib, const PlanOptions& o,
                       const char* sizing) {
  PlanCandidate c;
  c.sizing = sizing;
  const uint64_t fill_mib = capacity_mib * static_cast<uint64_t>(100 - o.memory_margin_pct) / 100;
  const uint32_t ceiling_x10 = static_cast<uint32_t>(o.compute_ceiling_pct) * 10;
  for (const Item& item : items) {
    PlanBin* home = nullptr;
    for (PlanBin& bin : c.bins) {
      // As the replay judges compute: a load that runs above the ceiling alone may still take
      // loads that add nothing.
      const uint32_t busiest = std::max(bin.packed_busiest_x10, item.compute_x10);
      if (bin.packed_mem_mib + item.mem_mib <= fill_mib &&
          bin.packed_compute_x10 + item.compute_x10 <= std::max(ceiling_x10, busiest)) {
        home = &bin;
        break;
      }
    }
    if (home == nullptr) {
      home = &c.bins.emplace_back();
      home->target_gpu_id = item.gpu_id;  // the largest load stays where it is
      home->capacity_mib = capacity_mib;
    }
    home->sources.push_back(item.gpu_id);
    home->packed_mem_mib += item.mem_mib;
    home->packed_compute_x10 += item.compute_x10;
    home->packed_busiest_x10 = std::max(home->packed_busiest_x10, item.compute_x10);
  }
  for (size_t b = 0; b < c.bins.size(); ++b) {
    for (uint32_t id : c.bins[b].sources) c.bin_of[id] = b;
  }
  return c;
}

}  // namespace

void LoadHistogram::Add(uint32_t value, int64_t ms) {
  if (ms <= 0) return;
  ms_by_bucket_[value / bucket_] += ms;
  max_ = std::max(max_, value);
  ms_ += ms;
}

uint32_t LoadHistogram::Percentile(double p) const {
  if (ms_ == 0) return 0;
  // The time that must lie at or under the answer, rounded up: p99 of 100 s is the 99th second.
  const auto need = static_cast<int64_t>(static_cast<double>(ms_) * p + 0.999999);
  int64_t seen = 0;
  for (const auto& [bucket, ms] : ms_by_bucket_) {
    seen += ms;
    if (seen >= need) {
      const uint64_t edge = (static_cast<uint64_t>(bucket) + 1) * bucket_ - 1;
      return static_cast<uint32_t>(std::min<uint64_t>(edge, max_));
    }
  }
  return max_;
}

std::optional<TickLoad> GpuTickLoad(const StoredTick& tick, size_t gpu_pos) {
  const StoredGpu& g = tick.gpus[gpu_pos];
  if (g.lost) return std::nullopt;
  TickLoad load;
  const auto sm = g.get(StoredGpuField::kSmActivePctX10);
  const auto util = g.get(StoredGpuField::kUtilPct);
  if (sm) {
    load.compute_x10 = static_cast<uint32_t>(std::min<uint64_t>(*sm, 1000));
  } else if (util) {
    load.compute_x10 = static_cast<uint32_t>(std::min<uint64_t>(*util, 100) * 10);
  }
  if (g.processes_known) {
    uint64_t sum = 0;
    for (const StoredProcess& p : tick.processes) {
      // Compute processes only: a display server's memory is no load to move (the ledger calls
      // a GPU held by graphics alone idle too).
      if (p.gpu_pos == gpu_pos && p.compute && p.mem_used_mib) sum += *p.mem_used_mib;
    }
    load.mem_mib = static_cast<uint32_t>(std::min<uint64_t>(sum, UINT32_MAX));
  } else if (auto used = g.get(StoredGpuField::kMemUsedMib)) {
    load.mem_mib = static_cast<uint32_t>(std::min<uint64_t>(*used, UINT32_MAX));
  } else if (!sm && !util) {
    return std::nullopt;
  }
  return load;
}

std::optional<TickSpans::Span> TickSpans::Add(int64_t ts_ms, const RunRecord& run,
                                              const StoredTick& tick) {
  std::optional<Span> out;
  if (ts_ms_) {
    const int64_t elapsed = std::max<int64_t>(0, ts_ms - *ts_ms_);
    const bool run_ended = run_.id != run.id;
    const int64_t cap = run_ended ? run_.interval_ms : 2 * run_.interval_ms;
    std::swap(done_, tick_);
    out = Span{*ts_ms_, std::min(elapsed, cap), &done_};
  }
  ts_ms_ = ts_ms;
  run_ = run;
  tick_ = tick;
  return out;
}

std::optional<TickSpans::Span> TickSpans::Finish(int64_t end_ms) {
  if (!ts_ms_) return std::nullopt;
  std::swap(done_, tick_);
  Span out{*ts_ms_, std::clamp<int64_t>(end_ms - *ts_ms_, 0, run_.interval_ms), &done_};
  ts_ms_.reset();
  return out;
}

void PlanProfiler::Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick) {
  if (profile_.ticks++ == 0) profile_.from_ms = ts_ms;
  if (auto span = spans_.Add(ts_ms, run, tick)) Credit(*span);
}

void PlanProfiler::Finish(int64_t end_ms) {
  if (auto span = spans_.Finish(end_ms)) Credit(*span);
}

void PlanProfiler::Credit(const TickSpans::Span& span) {
  const int64_t d = span.duration_ms;
  const StoredTick& tick = *span.tick;
  profile_.covered_ms += d;
  profile_.until_ms = std::max(profile_.until_ms, span.ts_ms + d);
  gpus_now_.clear();
  for (size_t pos = 0; pos < tick.gpus.size(); ++pos) {
    const std::optional<TickLoad> load = GpuTickLoad(tick, pos);
    if (!load) continue;
    GpuLoad& g = profile_.gpus[tick.gpus[pos].gpu_id];
    g.mem_mib.Add(load->mem_mib, d);
    g.compute_x10.Add(load->compute_x10, d);
    // Each holder (identity) of this GPU: its memory and compute in the tick.
    std::vector<Holder>& holders = holders_;
    holders.clear();
    for (const StoredProcess& p : tick.processes) {
      if (p.gpu_pos != pos || !p.compute) continue;
      auto it = std::find_if(holders.begin(), holders.end(),
                             [&](const Holder& h) { return h.identity_id == p.identity_id; });
      if (it == holders.end()) {
        it = holders.insert(holders.end(), Holder{p.identity_id, p.command_id, 0, 0, true});
      }
      it->mem_mib += p.mem_used_mib.value_or(0);
      if (p.sm_util_pct)
        it->sm_pct += *p.sm_util_pct;
      else
        it->sm_known = false;
    }
    for (const StoredAllocation& a : tick.allocations) {
      if (a.gpu_pos == pos) holders.push_back(Holder{a.identity_id, 0, 0, 0, false});
    }
    if (!holders.empty()) g.held_ms += d;
    for (const Holder& h : holders) {
      WorkloadLoad& w = profile_.workloads[h.identity_id];
      const uint32_t compute = h.sm_known
                                   ? static_cast<uint32_t>(std::min<uint64_t>(h.sm_pct, 100) * 10)
                                   : load->compute_x10 / static_cast<uint32_t>(holders.size());
      w.mem_mib.Add(static_cast<uint32_t>(std::min<uint64_t>(h.mem_mib, UINT32_MAX)), d);
      w.compute_x10.Add(compute, d);
      w.held_ms_by_gpu[tick.gpus[pos].gpu_id] += d;
      if (h.command_id != 0) w.held_ms_by_command[h.command_id] += d;
      ++gpus_now_[h.identity_id];
    }
  }
  for (const auto& [id, n] : gpus_now_) {
    profile_.workloads[id].gpus_at_once.Add(static_cast<uint32_t>(n), d);
  }
}

int64_t PlanCandidate::MemOverMs() const {
  int64_t ms = 0;
  for (const PlanBin& b : bins) ms += b.mem_over_ms;
  return ms;
}

int64_t PlanCandidate::ComputeOverMs() const {
  int64_t ms = 0;
  for (const PlanBin& b : bins) ms = std::max(ms, b.compute_over_ms);
  return ms;
}

bool PlanCandidate::Accepted(const PlanOptions& o) const {
  if (replay_ms <= 0 || MemOverMs() > 0) return false;
  return ComputeOverMs() * 100 <= replay_ms * o.compute_over_pct;
}

size_t PlanGroup::GpusPlanned() const {
  return chosen < 0 ? gpu_ids.size() : candidates[static_cast<size_t>(chosen)].bins.size();
}

std::vector<PlanGroup> PackGroups(const PlanProfile& profile, const std::vector<GpuRecord>& gpus,
                                  const PlanOptions& options) {
  std::map<std::pair<std::string, uint64_t>, PlanGroup> by_model;
  for (const GpuRecord& g : gpus) {
    if (g.mig || !g.mem_total_mib || *g.mem_total_mib == 0 || !profile.gpus.count(g.id)) continue;
    PlanGroup& group = by_model[{g.name, *g.mem_total_mib}];
    group.model = g.name;
    group.mem_total_mib = *g.mem_total_mib;
    group.gpu_ids.push_back(g.id);
  }
  std::vector<PlanGroup> out;
  for (auto& [key, group] : by_model) {
    const uint64_t capacity = ReplayCapacityMib(group.mem_total_mib);
    for (bool peak : {false, true}) {
      PlanCandidate c = FirstFit(SizedItems(profile, group.gpu_ids, peak), capacity, options,
                                 peak ? "peak" : "p99");
      if (c.bins.size() < group.gpu_ids.size()) group.candidates.push_back(std::move(c));
    }
    out.push_back(std::move(group));
  }
  return out;
}

PlanReplay::PlanReplay(std::vector<PlanGroup>* groups, const PlanOptions& options)
    : groups_(groups), options_(options) {
  for (const PlanGroup& g : *groups_) {
    auto& per_candidate = sums_.emplace_back();
    for (const PlanCandidate& c : g.candidates) per_candidate.emplace_back(c.bins.size());
  }
}

void PlanReplay::Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick) {
  if (auto span = spans_.Add(ts_ms, run, tick)) Credit(*span);
}

void PlanReplay::Finish(int64_t end_ms) {
  if (auto span = spans_.Finish(end_ms)) Credit(*span);
  for (PlanGroup& g : *groups_) {
    g.chosen = -1;
    for (size_t c = 0; c < g.candidates.size(); ++c) {
      if (g.candidates[c].Accepted(options_)) {
        g.chosen = static_cast<int>(c);
        break;
      }
    }
  }
}

void PlanReplay::Credit(const TickSpans::Span& span) {
  const int64_t d = span.duration_ms;
  if (d <= 0) return;
  const StoredTick& tick = *span.tick;
  for (auto& per_candidate : sums_) {
    for (auto& bins : per_candidate) std::fill(bins.begin(), bins.end(), BinTick{});
  }
  for (size_t pos = 0; pos < tick.gpus.size(); ++pos) {
    const std::optional<TickLoad> load = GpuTickLoad(tick, pos);
    if (!load) continue;
    const uint32_t id = tick.gpus[pos].gpu_id;
    for (size_t gi = 0; gi < groups_->size(); ++gi) {
      const PlanGroup& g = (*groups_)[gi];
      for (size_t ci = 0; ci < g.candidates.size(); ++ci) {
        auto it = g.candidates[ci].bin_of.find(id);
        if (it == g.candidates[ci].bin_of.end()) continue;
        BinTick& sum = sums_[gi][ci][it->second];
        sum.mem_mib += load->mem_mib;
        sum.compute_x10 += load->compute_x10;
        sum.busiest_x10 = std::max(sum.busiest_x10, load->compute_x10);
      }
    }
  }
  const auto ceiling_x10 = static_cast<uint32_t>(options_.compute_ceiling_pct) * 10;
  for (size_t gi = 0; gi < groups_->size(); ++gi) {
    for (size_t ci = 0; ci < (*groups_)[gi].candidates.size(); ++ci) {
      PlanCandidate& c = (*groups_)[gi].candidates[ci];
      c.replay_ms += d;
      for (size_t b = 0; b < c.bins.size(); ++b) {
        const BinTick& sum = sums_[gi][ci][b];
        PlanBin& bin = c.bins[b];
        if (sum.mem_mib > bin.capacity_mib) bin.mem_over_ms += d;
        if (sum.compute_x10 > std::max(ceiling_x10, sum.busiest_x10)) bin.compute_over_ms += d;
        bin.peak_mem_mib = std::max(bin.peak_mem_mib, sum.mem_mib);
        bin.peak_compute_x10 = std::max(bin.peak_compute_x10, sum.compute_x10);
      }
    }
  }
}

WorkloadAdvice AdviseWorkload(const WorkloadLoad& load, const GpuRecord& gpu,
                              const PlanOptions& o) {
  WorkloadAdvice advice;
  if (gpu.mig) {
    advice.why = "already on a MIG instance";
    return advice;
  }
  if (load.gpus_at_once.Percentile(0.99) > 1) {
    advice.why = "holds several GPUs at once (MIG instances have no NCCL peer-to-peer)";
    return advice;
  }
  const std::vector<MigProfile> profiles = MigProfilesFor(gpu.name, gpu.mem_total_mib.value_or(0));
  if (profiles.empty()) {
    advice.why = "its GPU model has no MIG profiles cgov knows";
    return advice;
  }
  const uint64_t p99 = load.mem_mib.Percentile(0.99), peak = load.mem_mib.max();
  const uint32_t p95_compute = load.compute_x10.Percentile(0.95);
  for (const MigProfile& p : profiles) {
    const uint64_t fill = p.usable_mib * static_cast<uint64_t>(100 - o.memory_margin_pct) / 100;
    const double compute_room = p.ComputeShare() * o.compute_ceiling_pct * 10;
    if (peak > p.usable_mib || p99 > fill || p95_compute > compute_room) continue;
    if (p.memory_eighths >= 8) break;  // only the whole GPU holds it
    advice.profile = p;
    advice.headroom_mib = p.usable_mib - p99;
    return advice;
  }
  advice.why = "no profile smaller than the whole GPU holds its memory and compute";
  return advice;
}

}  // namespace cgov
