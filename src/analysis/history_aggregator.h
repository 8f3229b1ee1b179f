// Turns stored ticks into hourly buckets and idle-held sessions, tick by tick, in memory bounded
// by the hours not yet taken and the sessions open. The daemon feeds it live and writes what it
// completes; a report feeds it the raw ticks its rollups do not cover. Same rules either way:
//
// A tick stands for the time to the next tick of its run, at most 2x the run's interval (longer is
// a gap, never filled); the last tick of a run stands for one interval. Time goes to the hour the
// tick starts in. Phases as in analysis/phases.h; identities and sessions from the processes and
// allocations the tick lists (an allocated container holds its GPU as a compute process does;
// its session's pid is kAllocationSessionPid | identity). Not thread-safe.
#ifndef CGOV_ANALYSIS_HISTORY_AGGREGATOR_H_
#define CGOV_ANALYSIS_HISTORY_AGGREGATOR_H_

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "analysis/history_rollup.h"
#include "analysis/phases.h"
#include "store/records.h"

namespace cgov {

// What one tick was credited with when its duration became known (the live counters of
// `cgov daemon --listen` add these up, so they agree with the rollups).
// How a tick's time on a GPU was split between the identities holding compute memory on it.
enum class SplitRule : uint8_t {
  kAlone,          // one holder: all of it
  kByUtilization,  // a busy GPU shared: in proportion to each one's SM utilization (NVML's
                   // per-process readings)
  kEvenly,         // shared, idle-held or without per-process readings: evenly
};

// What a run carries from one tick of a GPU to the next: its swing state (CreditGpuSample) and
// where the driver's energy counter stood. The energy counter corrects power x time (issue 62):
// at a tick that carries a reading, the energy the counter measured since the run's previous
// reading, less the power x time credited for that window, is added to the tick's energy (its
// phase, its holders by the split), a shortfall (counter below the estimate) taken from this and
// the next ticks' energy, never below 0. A counter that went back (a driver reload) or a gap
// between ticks (time not credited) starts a new window: that window keeps its estimate, so no
// energy is lost or counted twice.
struct GpuRunState {
  int8_t swing = -1;                   // CreditGpuSample's swing state
  std::optional<uint64_t> counter_mj;  // the window's first reading
  int64_t counter_ts_ms = 0;           // ... and its tick's time
  int64_t since_counter_mj = 0;        // power x time credited in the window (no corrections)
  int64_t owed_mj = 0;                 // a shortfall still to take from the next ticks (>= 0)
  int64_t next_ts_ms = -1;             // where the last credited tick's time ended
};

struct TickCredit {
  struct Gpu {
    uint32_t gpu_id = 0;
    int64_t duration_ms = 0;
    std::optional<Phase> phase;  // unknown: no utilization (lost GPU or unsupported field)
    int64_t util_ms_x100 = 0;    // duration x utilization
    // Everything the GPU's sample counts for (CreditGpuSample): its phase time and the patterns
    // the findings read, swings included.
    GpuUsage usage{};
    GpuRunState state;  // what the GPU's next tick in the run starts from (after this one)
  };
  struct Identity {
    uint32_t identity_id = 0;
    uint32_t gpu_id = 0;
    int64_t held_ms = 0;        // every holder gets all of it
    int64_t idle_held_ms = 0;   // held compute memory while the GPU was idle-held
    int64_t attributed_ms = 0;  // its share among the compute holders (SplitRule)
    std::optional<Phase> phase;
    SplitRule split = SplitRule::kAlone;
    // Its share of the GPU's energy in the tick, mJ: the energy split as attributed_ms splits
    // the time (the compute holders' shares add up to the GPU's energy exactly).
    int64_t energy_mj = 0;
  };
  int64_t ts_ms = 0;
  std::vector<Gpu> gpus;
  std::vector<Identity> identities;
};

// Each GPU's state by GPU id, carried from tick to tick within a run (a new daemon starts from
// nothing; a provisional credit works on a copy).
using GpuRunStates = std::map<uint32_t, GpuRunState>;

// One identity holding one GPU in one tick (the aggregator's scratch).
struct TickHolder {
  uint32_t identity_id = 0;
  bool compute = false;    // compute memory, or the GPU by allocation
  int64_t sm_util = 0;     // summed over its compute processes
  bool util_known = true;  // every one of them had a per-process reading
  int64_t share_ms = 0;
  int64_t sessions = 0;       // its compute processes and allocations on the GPU
  int64_t sessions_seen = 0;  // CommitSessions' count of its sessions credited so far
};

// A tick's processes and allocations on each of its GPUs, found once a tick (issue 64: a scan of
// the whole lists for every GPU was GPUs x processes a tick). BuildStoredTick and EncodeTick keep
// both lists by gpu_pos; a tick that breaks that order (hand-made, or decoded from a database,
// which is anyone's file) is looked at whole for every GPU. Every reader still checks gpu_pos,
// so no figure depends on which: the view only shortens the scan.
class TickByGpu {
 public:
  // REQUIRES: `tick` outlives the calls below, unchanged.
  void Index(const StoredTick& tick);
  std::span<const StoredProcess> Processes(size_t gpu_pos) const;
  std::span<const StoredAllocation> Allocations(size_t gpu_pos) const;

 private:
  const StoredTick* tick_ = nullptr;
  // Each GPU's first entry, and one past the last GPU's; empty when the list is out of order.
  std::vector<uint32_t> process_start_, allocation_start_;
};

class HistoryAggregator {
 public:
  explicit HistoryAggregator(PhaseThresholds phases = {});

  // Sessions that were open at the point this aggregator starts from (the store's watermark).
  void SeedSessions(const std::vector<SessionRecord>& open);
  // REQUIRES: ticks in increasing time order.
  void Add(int64_t ts_ms, const RunRecord& run, const StoredTick& tick);
  // Ends the data at end_ms: the last tick stands for one interval (or less up to end_ms), and
  // every hour, the current one included, becomes complete.
  void Finish(int64_t end_ms);

  // Hours completed since the last call, oldest first. An hour completes when a tick of a later
  // hour arrives (so everything before that tick's hour is final) or at Finish.
  std::vector<HourBucket> TakeCompleteHours();
  // Sessions started, extended or closed since the last call.
  std::vector<SessionRecord> TakeChangedSessions();
  // The open sessions (seeded ones included) and those closed since the last
  // TakeChangedSessions (a report, which never takes, gets every session it saw).
  std::vector<SessionRecord> AllSessions() const;
  // Called with every tick whose duration becomes known, from Add and Finish.
  void set_credit_sink(std::function<void(const TickCredit&)> sink) { sink_ = std::move(sink); }
  // Ticks at or after this time are not yet in a completed hour (0 before the first tick).
  int64_t complete_before_ms() const { return complete_before_ms_; }

 private:
  struct Pending {
    int64_t ts_ms = 0;
    RunRecord run;
    StoredTick tick;
  };

  void Commit(const Pending& p, int64_t duration_ms);
  void CommitSessions(const Pending& p, size_t gpu_pos, bool idle_held, int64_t duration_ms);
  void GatherHolds(size_t gpu_pos, bool idle_held);  // of the tick by_gpu_ indexes
  void CompleteHoursBefore(int64_t hour);
  HourBucket& Bucket(int64_t hour);

  PhaseThresholds phases_;
  std::optional<Pending> pending_;
  GpuRunStates run_states_;  // of the run the ticks are from
  std::map<int64_t, HourBucket> open_hours_;
  std::vector<HourBucket> complete_;
  // An open session and whether a tick touched it since the last TakeChangedSessions (a flag
  // on the session, not a set of keys beside it).
  struct OpenSession {
    SessionRecord record;
    bool changed = false;
  };
  // What one tick holds of one GPU: a compute process, or a container the GPU is allocated to.
  struct Hold {
    uint32_t pid, identity_id, command_id, mem_mib;
    int64_t idle_share_ms;  // its share of the GPU's idle-held time in this tick
  };
  // Each GPU's open sessions, flat and sorted by pid (issue 64): a tick merges its sorted holds
  // with them in one pass, with no lookup a process.
  std::map<uint32_t, std::vector<OpenSession>> open_sessions_;
  std::vector<SessionRecord> closed_sessions_;  // each one changed by its closing
  int64_t complete_before_ms_ = 0;
  std::function<void(const TickCredit&)> sink_;
  // Scratch for one tick's work, kept so that a tick allocates nothing once warm.
  std::vector<TickHolder> holders_;
  TickByGpu by_gpu_;
  std::vector<Hold> holds_;
  std::vector<OpenSession> merged_;
  TickCredit credit_;
};

// What `tick`, taken at `ts_ms`, is credited with when it stands for `duration_ms` (Commit's
// credit, without its hours and sessions): /metrics credits the newest tick, whose duration is
// not known yet, the time since it up to one interval with it, as a report whose data ends then
// counts it (docs/analysis.md, "What a sample covers"). `states`: the GPUs' run states before
// the tick, updated (pass a copy for a provisional credit). `holders`: scratch.
void CreditOf(const StoredTick& tick, int64_t ts_ms, int64_t duration_ms,
              const PhaseThresholds& phases, GpuRunStates* states, std::vector<TickHolder>* holders,
              TickCredit* out);
// CreditOf in parts: StartCredit empties `out`; CreditGpu appends GPU `gpu_pos`'s credit and
// its holders' (leaving `holders` as SplitGpuTime set them for it). `by_gpu`: indexed on `tick`.
void StartCredit(int64_t ts_ms, TickCredit* out);
void CreditGpu(const StoredTick& tick, const TickByGpu& by_gpu, size_t gpu_pos, int64_t duration_ms,
               const PhaseThresholds& phases, GpuRunStates* states,
               std::vector<TickHolder>* holders, TickCredit* out);

// The identities holding GPU `gpu_pos` in `tick` (sorted by id), each compute holder with its
// share of `duration_ms` (they add up to it exactly), and the rule that split it: the
// aggregator's split, which /metrics' per-pod readings follow too. `busy`: the GPU's phase was
// one of the busy ones.
SplitRule SplitGpuTime(const StoredTick& tick, size_t gpu_pos, bool busy, int64_t duration_ms,
                       std::vector<TickHolder>* holders);
// The same on a tick's view, for a caller that reads each GPU of one tick in turn.
SplitRule SplitGpuTime(const TickByGpu& by_gpu, size_t gpu_pos, bool busy, int64_t duration_ms,
                       std::vector<TickHolder>* holders);

// What the analysis needs of one GPU of a stored tick (MiB become bytes).
GpuPoint StoredGpuPoint(const StoredTick& tick, size_t gpu_pos);
GpuPoint StoredGpuPoint(const StoredTick& tick, const TickByGpu& by_gpu, size_t gpu_pos);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_HISTORY_AGGREGATOR_H_
