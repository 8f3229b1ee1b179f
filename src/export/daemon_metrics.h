// What `cgov daemon --listen` serves on /metrics: the last tick's GPU readings under cgov's
// names with dcgm-exporter's labels (and, with --metrics-names dcgm, under dcgm-exporter's names
// too), and Cost Governor's own counters (GPU-seconds and dollars by phase, per GPU and per
// identity), added up from the same tick credits the history database's rollups are made of.
// docs/metrics.md lists every series.
//
// Thread-safe: the daemon's tick loop writes, the HTTP server's thread renders.
#ifndef CGOV_EXPORT_DAEMON_METRICS_H_
#define CGOV_EXPORT_DAEMON_METRICS_H_

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/history_aggregator.h"
#include "analysis/slurm_accounting.h"
#include "core/money.h"
#include "export/exposition.h"
#include "store/records.h"
#include "telemetry/gpu_sample.h"
#include "telemetry/self_stats.h"

namespace cgov {

struct MetricsGpu {
  uint32_t gpu_id = 0;  // the history database's id (TickCredit::Gpu::gpu_id)
  int64_t index = -1;
  // A MIG instance is labelled as dcgm-exporter does: its parent's index, UUID and model name,
  // plus GPU_I_ID and GPU_I_PROFILE.
  std::string uuid;
  std::string name;
  std::optional<unsigned> gpu_instance_id;  // set for a MIG instance
  std::string mig_profile;
  std::string pci_bus_id;
  // What the driver sets aside (nvmlMemory_v2_t.reserved): neither used nor free, as nvidia-smi
  // and DCGM count it.
  std::optional<uint64_t> memory_reserved_bytes;
  std::optional<MicroUsd> price_per_gpu_hour;
  std::string price_source;
};

// One process on one GPU at the last tick.
struct MetricsProcess {
  size_t gpu_pos = 0;  // position in SetGpus' list
  uint32_t pid = 0;
  bool compute = false;
  std::optional<uint64_t> used_memory_bytes;
  std::string user;
  std::string command;
};

// Who holds a GPU at the last tick, as dcgm-exporter labels it: a pod's container (names from
// --kubernetes), or processes outside any named pod (names empty).
struct MetricsGpuPod {
  std::string namespace_name, pod, container;
  double share = 1;  // of the GPU's time, split as the identity counters split it (SplitRule)
};

struct MetricsTick {
  int64_t wall_ms = 0;
  std::vector<GpuFastSample> gpus;  // by position in SetGpus' list
  std::vector<GpmMetrics> gpm;      // likewise (NVML GPM; empty or all unknown without it)
  std::vector<std::optional<MemoryHealth>> memory_health;  // likewise (remapped rows / pages)
  std::vector<MetricsProcess> processes;
  // By GPU position: its holders grouped by pod (empty: nobody holds it). Served as the pod
  // labels of the dcgm-exporter names.
  std::vector<std::vector<MetricsGpuPod>> gpu_pods;
  bool nvml_ok = false;       // the driver is loaded and no GPU was lost
  bool processes_ok = false;  // every GPU's process list was read
  bool host_ok = false;       // the host files read this tick were read and parsed
};

// --notify: what the notifier has done since the daemon started, and what waits.
// The daemon's own state as its core keeps it (app/daemon/daemon_core.h), handed to the registry
// whole after each tick: cgov_ticks_total, cgov_tick_failures_total,
// cgov_daemon_module_failures_total{module}, cgov_collector_duration_seconds{collector} and
// cgov_collector_success{collector="history_db"}.
struct DaemonSelf {
  int64_t ticks = 0;         // taken, written or not
  int64_t failed_ticks = 0;  // not written, and written ones a failed commit took with it
  std::map<std::string, int64_t> module_failures;  // every module, from 0
  // The last tick's seconds in each collector (the driver, the process lists, /proc, the history
  // database) and each module, as node_exporter's node_scrape_collector_duration_seconds.
  std::vector<std::pair<std::string, double>> collector_seconds;
  bool history_db_ok = true;  // the last tick was written
  // A problem with the history database that lasts until the daemon restarts (its file was
  // removed or replaced under it): history_db reads 0 and /health fails while it is set.
  std::string history_db_problem;
};

// Series a daemon module serves beside the registry's own (as node_exporter's collectors do):
// the module declares and fills them in its own file, and adds the section to the registry
// (DaemonContext::metrics_sections). Rendered after the registry's families, into the same
// cached exposition: a section whose figures moved says so by its generation().
class MetricsSection {
 public:
  virtual ~MetricsSection() = default;
  // Its families. `host`: the Hostname label every cgov series carries. Called on the HTTP
  // server's threads with the registry's lock held: never call the registry from here.
  virtual void Render(ExpositionWriter& w, std::string_view host, int64_t now_ms) const = 0;
  // Moves on whenever what Render would write changes (a cached exposition is rebuilt);
  // constant for series the ticks' own changes already refresh.
  virtual uint64_t generation() const { return 0; }
};

struct MetricsOptions {
  std::string hostname;
  std::string instance_id;  // --instance-id: a label of cgov_build_info when given
  int64_t interval_ms = 30'000;
  // --metrics-names dcgm: the GPU readings under dcgm-exporter's names as well (for a node
  // without dcgm-exporter whose dashboards expect them). Off by default: beside dcgm-exporter the
  // same reading twice would be summed twice.
  bool dcgm_names = false;
  // --metrics-processes: cgov_process_gpu_memory_bytes, one series per GPU process (its pid a
  // label: every new process is a new series). Off by default (docs/metrics.md, "Series budget").
  bool process_series = false;
  size_t max_process_series = 1024;
  // Identities with series of their own; a new one beyond this is credited to the identity
  // "(other)", so totals stay exact.
  size_t max_identity_series = 256;
  // An identity's series go away this long after its last credit.
  int64_t identity_expiry_ms = 3'600'000;
};

class DaemonMetrics {
 public:
  explicit DaemonMetrics(MetricsOptions options) : options_(std::move(options)) {}

  void SetGpus(std::vector<MetricsGpu> gpus);
  void RecordTick(MetricsTick tick);
  // `identity_of` resolves TickCredit identity ids (nullptr: unknown identity).
  void Credit(const TickCredit& credit,
              const std::function<const IdentityRecord*(uint32_t)>& identity_of);
  // The newest tick, taken at `ts_ms`, whose duration is not known until the next one: a scrape
  // counts it for the time since it in whole tenths of the interval, up to one interval
  // (analysis/history_aggregator.h CreditOf), as a report whose data ends then counts it (a
  // tenth of an interval at most before the scrape); the next tick's credit then
  // counts it in full, never less, so no counter goes down. `identity_of` resolves its
  // identities now (a scrape runs on another thread). Cleared by ClearPending (a tick the
  // history did not take).
  void SetPending(const StoredTick& tick, int64_t ts_ms,
                  const std::function<const IdentityRecord*(uint32_t)>& identity_of);
  void ClearPending();
  // Work a job of `identity` (nullptr: unknown) reported (its progress file: docs/metrics.md,
  // "Work"), in `unit`: served as cgov_identity_work_total{unit}.
  void CreditWork(const IdentityRecord* identity, const std::string& unit, double amount,
                  int64_t now_ms);
  // --slurm-accounting FILE: identities in a Slurm job get its account and partition as labels
  // (slurm_account, slurm_partition) from the next credit on; nullptr: no such labels.
  void SetSlurmJobs(std::shared_ptr<const SlurmJobs> jobs);
  // The history's identity ids may name other records from now on (its database was replaced
  // or reopened): the labels and counters remembered by id are looked up afresh.
  void ForgetIdentityIds();
  // A module's series, rendered after the registry's own in the order added. Before serving.
  void AddSection(std::shared_ptr<const MetricsSection> section);
  // The daemon's own state (above), replacing the last.
  void SetDaemonSelf(const DaemonSelf& self);
  // A module's own collector (the Kubernetes API's list and watch, the kubelet's List), served
  // as cgov_collector_success{collector} once set.
  void SetCollectorSuccess(const std::string& collector, bool ok);
  // DaemonSelf::history_db_problem, for /health.
  std::string HistoryDbProblem() const;

  // The exposition as of `now_ms`. Readings older than StaleAfterMs() are not served. `self`:
  // this process's own figures at the scrape, served as Prometheus' client libraries serve them
  // (process_cpu_seconds_total, ...); none when nullptr.
  std::string Render(ExpositionFormat format, int64_t now_ms,
                     const SelfStats* self = nullptr) const;
  int64_t StaleAfterMs() const;
  // A tick was taken within StaleAfterMs() of now_ms.
  bool SamplerFresh(int64_t now_ms) const;

 private:
  static constexpr size_t kUnknownPhase = kPhaseCount;  // counters' 6th slot
  using PhaseArray = std::array<int64_t, kPhaseCount + 1>;
  struct GpuCounters {
    PhaseArray ms{};
    PhaseArray util_ms_x100{};
    // Priced when the time is credited, at the price in force then: a re-price (SIGHUP) changes
    // what comes after, never what was counted (the counter never goes down).
    PhaseArray cost_micro_usd{};
    // The patterns the findings read (cgov_gpu_pattern_seconds_total, cgov_gpu_swings_total):
    // the credits' usage summed, as the history's rollups sum it.
    GpuUsage usage;
  };
  // An identity's labels. `pod` and `container` are names only (with --kubernetes), as
  // dcgm-exporter and kube-state-metrics use them; a pod's UID is `pod_uid` (from the cgroup path
  // with or without --kubernetes), a Slurm job's id `slurm_job`.
  struct IdentityKey {
    std::string user, project, team, namespace_name, pod, container, pod_uid, slurm_job;
    std::string slurm_account, slurm_partition;  // with SetSlurmJobs only
    auto operator<=>(const IdentityKey&) const = default;
  };
  struct IdentityCounters {
    PhaseArray attributed_ms{};
    int64_t held_ms = 0;
    int64_t idle_held_ms = 0;
    MicroUsd cost_micro_usd = 0;         // priced when credited, as the GPUs' cost counters
    int64_t energy_mj = 0;               // its share of the GPUs' energy (TickCredit)
    int64_t idle_held_energy_mj = 0;     // of which burned while its GPU was idle-held
    std::map<std::string, double> work;  // by unit
    int64_t last_credit_ms = 0;
  };
  // The labels of `record` (nullptr: unknown), and its counters (made, or "(other)"'s beyond
  // the cap). REQUIRES: mu_ held.
  IdentityKey KeyOf(const IdentityRecord* record) const;
  IdentityCounters& CountersOf(IdentityKey key);
  // The same by history identity id, remembered (ids_): the labels are built and the map
  // searched when an id is first credited, not at every tick. REQUIRES: mu_ held.
  struct IdSlot;
  IdSlot* SlotOf(uint32_t id, const std::function<const IdentityRecord*(uint32_t)>& identity_of);
  IdentityKey KeyOfId(uint32_t id,
                      const std::function<const IdentityRecord*(uint32_t)>& identity_of);
  IdentityCounters& CountersOfId(uint32_t id,
                                 const std::function<const IdentityRecord*(uint32_t)>& identity_of);
  // The counters of `key` in `identities`, made, or "(other)"'s beyond the cap (counted in
  // `folded` when not nullptr).
  IdentityCounters& CountersIn(std::map<IdentityKey, IdentityCounters>* identities, IdentityKey key,
                               int64_t* folded) const;
  // Adds `credit` to `gpus` and to the identities' counters `counters_of` gives.
  void Apply(const TickCredit& credit, std::vector<GpuCounters>* gpus,
             const std::function<IdentityCounters&(uint32_t identity_id)>& counters_of) const;

  struct GpuLabels;  // dcgm-exporter's label set of one GPU
  void RenderGpuGauges(ExpositionWriter& w, const std::deque<GpuLabels>& labels,
                       int64_t now_ms) const;
  void RenderCounters(ExpositionWriter& w, const std::deque<GpuLabels>& labels,
                      const std::vector<GpuCounters>& counters) const;
  void RenderProcesses(ExpositionWriter& w, int64_t now_ms,
                       const std::map<IdentityKey, IdentityCounters>& identities) const;
  void RenderSelf(ExpositionWriter& w, int64_t now_ms) const;
  static void RenderProcessSelf(ExpositionWriter& w, const SelfStats& self);
  bool Fresh(int64_t now_ms) const;
  void Changed() { ++generation_; }

  // The exposition but for the sample age (which changes with every scrape), rebuilt only when
  // something changed: a scrape between two ticks is a copy.
  struct Cached {
    uint64_t generation = ~0ull;
    uint64_t sections_generation = ~0ull;
    bool fresh = false;
    int64_t pending_ms = -1;  // the newest tick's time counted in it
    std::string body;
  };
  struct PendingTick {
    StoredTick tick;
    int64_t ts_ms = 0;
    std::map<uint32_t, IdentityKey> keys;  // its identities' labels, resolved at SetPending
  };

  MetricsOptions options_;
  mutable std::mutex mu_;
  std::vector<MetricsGpu> gpus_;
  std::map<uint32_t, size_t> gpu_pos_;  // gpu_id -> position
  std::vector<GpuCounters> gpu_counters_;
  GpuRunStates run_states_;  // after the last credited tick: where the pending one starts from
  std::optional<MetricsTick> last_;
  std::map<IdentityKey, IdentityCounters> identities_;
  // What an identity id resolved to: its labels, and its counters in identities_ (nullptr: not
  // credited since the counters were last forgotten) and whether those are "(other)"'s for want
  // of room. The counters are forgotten when an identity leaves identities_ (the pointer and the
  // fold would be stale), both on SetSlurmJobs (other labels) and ForgetIdentityIds, and both
  // when more ids than a few times the series cap were seen (ids only grow; the memory stays
  // bounded).
  struct IdSlot {
    IdentityKey key;
    IdentityCounters* counters = nullptr;
    bool folded = false;
  };
  std::unordered_map<uint32_t, IdSlot> ids_;
  std::optional<PendingTick> pending_;
  std::shared_ptr<const SlurmJobs> slurm_jobs_;
  std::vector<std::shared_ptr<const MetricsSection>> sections_;
  int64_t dropped_process_series_ = 0;
  int64_t folded_identity_credits_ = 0;  // credits that went to "(other)"

  DaemonSelf self_;
  std::map<std::string, bool> module_collectors_;  // SetCollectorSuccess
  uint64_t generation_ = 0;
  mutable std::array<Cached, 2> cache_;  // by ExpositionFormat
};

}  // namespace cgov

#endif  // CGOV_EXPORT_DAEMON_METRICS_H_
