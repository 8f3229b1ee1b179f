// The right-size plan (issue 61): what each workload really uses of its GPUs, the smallest MIG
// profile that holds it, and how the window's loads pack onto fewer GPUs, proven by replaying
// every recorded tick under the plan. Rules and a worked example: docs/analysis.md, "Right-size
// plan". Pure: the ticks come from the caller (app/history/plan_load.h reads them), in two
// passes: PlanProfiler learns the loads, PackGroups proposes packings, PlanReplay replays them.
#ifndef CGOV_ANALYSIS_RIGHTSIZE_H_
#define CGOV_ANALYSIS_RIGHTSIZE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/mig_profiles.h"
#include "store/records.h"

namespace cgov {

struct PlanOptions {
  int memory_margin_pct = 10;    // of a GPU's (a profile's) memory kept free above the p99
  int compute_ceiling_pct = 80;  // summed SM activity a planned GPU may carry
  int compute_over_pct = 5;      // of the time the replay may see a planned GPU above it
};

// A time-weighted distribution of one value (MiB, tenths of a percent): the time at each value,
// in buckets of `bucket`. Sparse: a load that stays near one value costs a few entries. Not
// analysis/value_histogram.h's ValueHistogram: that one counts samples and rounds to the nearest
// value; a plan weighs each tick by the time it stands for and must never read a percentile low.
class LoadHistogram {
 public:
  explicit LoadHistogram(uint32_t bucket = 1) : bucket_(bucket) {}
  void Add(uint32_t value, int64_t ms);
  // The smallest value with at least `p` (0..1) of the time at or under it, read as its bucket's
  // upper edge but never above the maximum seen (so it never understates); 0 when empty.
  uint32_t Percentile(double p) const;
  uint32_t max() const { return max_; }
  int64_t ms() const { return ms_; }

 private:
  uint32_t bucket_;
  std::map<uint32_t, int64_t> ms_by_bucket_;
  uint32_t max_ = 0;
  int64_t ms_ = 0;
};

// What a GPU carried in one tick: its compute processes' memory (the GPU's memory used when the
// process list is unknown) and its compute: NVML GPM's SM activity where known, else
// utilization.gpu (a coarser reading that overstates the need: the plan errs towards keeping GPUs).
struct TickLoad {
  uint32_t mem_mib = 0;
  uint32_t compute_x10 = 0;  // tenths of a percent of the GPU
};
// nullopt when the GPU was lost or read nothing in the tick.
std::optional<TickLoad> GpuTickLoad(const StoredTick& tick, size_t gpu_pos);

struct GpuLoad {
  LoadHistogram mem_mib{64}, compute_x10{10};
  int64_t held_ms = 0;  // time a process (or an allocation) held it
};

// One identity's use of the GPUs it held: per GPU it held in a tick, its processes' memory and
// compute (their per-process SM utilization when every one has a reading, else the GPU's split
// evenly between its holders); and how many GPUs it held at once.
struct WorkloadLoad {
  LoadHistogram mem_mib{64}, compute_x10{10}, gpus_at_once{1};
  std::map<uint32_t, int64_t> held_ms_by_gpu;
  std::map<uint32_t, int64_t> held_ms_by_command;  // by command id (its first process's, a GPU)
};

struct PlanProfile {
  int64_t from_ms = 0, until_ms = 0;  // the first tick's time, the end of the last one's
  int64_t covered_ms = 0;             // time the ticks stand for
  int64_t ticks = 0;
  std::map<uint32_t, GpuLoad> gpus;            // by GPU id
  std::map<uint32_t, WorkloadLoad> workloads;  // by identity id
};

// The time a tick stands for, counted as the history aggregator counts it: to the next tick of
// its run, at most 2 intervals (a longer gap is not filled); the last tick of a run one interval.
// Add returns the previous tick's duration once this one says it, with that tick.
class TickSpans {
 public:
  struct Span {
    int64_t ts_ms = 0;
    int64_t duration_ms = 0;
    const StoredTick* tick = nullptr;
  };
  std::optional<Span> Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick);
  std::optional<Span> Finish(int64_t end_ms);

 private:
  std::optional<int64_t> ts_ms_;
  RunRecord run_;
  StoredTick tick_, done_;
};

class PlanProfiler {
 public:
  // REQUIRES: ticks in time order.
  void Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick);
  void Finish(int64_t end_ms);
  const PlanProfile& profile() const { return profile_; }

 private:
  void Credit(const TickSpans::Span& span);
  TickSpans spans_;
  PlanProfile profile_;
  std::map<uint32_t, int> gpus_now_;  // scratch: an identity's GPUs in one tick
  // Scratch: the identities holding one GPU in one tick, their memory and compute.
  struct Holder {
    uint32_t identity_id = 0;
    uint32_t command_id = 0;
    uint64_t mem_mib = 0;
    uint64_t sm_pct = 0;
    bool sm_known = true;
  };
  std::vector<Holder> holders_;
};

// One GPU under a candidate plan: the GPU it stays on and the GPUs whose loads it takes.
struct PlanBin {
  uint32_t target_gpu_id = 0;
  std::vector<uint32_t> sources;    // GPU ids (the target's own first)
  uint64_t capacity_mib = 0;        // what the replay allows: the GPU's memory less its reserve
  uint64_t packed_mem_mib = 0;      // the sources' sized memory (p99 or peak) + the margin
  uint32_t packed_compute_x10 = 0;  // the sources' sized compute
  uint32_t packed_busiest_x10 = 0;  // ... and the largest of them
  // The replay: time over the memory, time the plan put it over the compute ceiling (the sum
  // above both the ceiling and its busiest source's own compute), and the highest sums seen.
  int64_t mem_over_ms = 0, compute_over_ms = 0;
  uint64_t peak_mem_mib = 0;
  uint32_t peak_compute_x10 = 0;
};

struct PlanCandidate {
  std::string sizing;  // "p99": memory by p99, compute by p95; "peak": memory by peak, compute p99
  std::vector<PlanBin> bins;
  std::map<uint32_t, size_t> bin_of;  // source GPU id -> its bin
  int64_t replay_ms = 0;              // time the replay covered
  int64_t MemOverMs() const;
  int64_t ComputeOverMs() const;  // the largest of the bins' (each GPU's share is its own)
  bool Accepted(const PlanOptions& o) const;
};

// The GPUs of one model (name and memory): what the plan may move loads between.
struct PlanGroup {
  std::string model;
  uint64_t mem_total_mib = 0;
  std::vector<uint32_t> gpu_ids;
  std::vector<PlanCandidate> candidates;  // the ones that would free a GPU, tried in order
  int chosen = -1;                        // the first the replay accepted; -1: none
  size_t GpusPlanned() const;             // gpu_ids.size() when none is chosen
};

// Groups the profile's GPUs by model (MIG instances and GPUs of unknown memory left out) and
// packs each group's loads first-fit decreasing: "p99" then "peak" sizing, each kept only when
// it frees a GPU. `gpus`: the history's GPU records.
std::vector<PlanGroup> PackGroups(const PlanProfile& profile, const std::vector<GpuRecord>& gpus,
                                  const PlanOptions& options);

// Replays ticks under every candidate of `groups` (the second pass over the same ticks).
class PlanReplay {
 public:
  PlanReplay(std::vector<PlanGroup>* groups, const PlanOptions& options);
  void Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick);
  // Credits the last tick, then sets each group's `chosen`.
  void Finish(int64_t end_ms);

 private:
  void Credit(const TickSpans::Span& span);
  std::vector<PlanGroup>* groups_;
  PlanOptions options_;
  TickSpans spans_;
  // Scratch: a bin's sums in one tick, by (group, candidate, bin), and its busiest source's
  // compute (a GPU that ran above the ceiling alone is not the plan's doing).
  struct BinTick {
    uint64_t mem_mib = 0;
    uint32_t compute_x10 = 0, busiest_x10 = 0;
  };
  std::vector<std::vector<std::vector<BinTick>>> sums_;
};

// What the right-size rule recommends for one workload on its GPU model.
struct WorkloadAdvice {
  std::optional<MigProfile> profile;  // the smallest that fits; nullopt: none smaller than whole
  std::string why;                    // why none (or the profile's fit), for the report
  uint64_t headroom_mib = 0;          // the profile's usable memory above the workload's p99
};

// The smallest MIG profile of `gpu`'s model whose usable memory holds the workload's peak and,
// with the margin, its p99, and whose compute share x the ceiling holds its p95 compute; only
// for a workload that held at most one GPU at once (p99): MIG instances do not talk NCCL P2P.
WorkloadAdvice AdviseWorkload(const WorkloadLoad& load, const GpuRecord& gpu,
                              const PlanOptions& options);

// What a report needs: the options, what pass 1 learned and the groups pass 2 judged.
struct PlanInput {
  PlanOptions options;
  PlanProfile profile;
  std::vector<PlanGroup> groups;
  // Raw ticks before this, inside the window, were pruned (--retain); nullopt: none were.
  std::optional<int64_t> raw_pruned_before_ms;
  std::string source_note;  // how the source's data became ticks ("" a database's own ticks)
};

}  // namespace cgov

#endif  // CGOV_ANALYSIS_RIGHTSIZE_H_
