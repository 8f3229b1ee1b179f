// The history's records as plain structs, and the tick's stored form (tick_record.h): what the
// analysis reads and the writers write, with no SQLite in sight (docs/history-db.md). The
// database behind them is history_store.h's.
#ifndef CGOV_STORE_RECORDS_H_
#define CGOV_STORE_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "store/tick_record.h"
#include "telemetry/gpu_sample.h"

namespace cgov {

inline constexpr int kHistorySchemaVersion = 10;

struct GpuRecord {
  uint32_t id = 0;
  std::string uuid;  // the key; "index:N" when the driver gave none
  int64_t index = -1;
  std::string name;
  std::optional<uint64_t> mem_total_mib;
  std::string pci_bus_id;
  std::string host;  // set by the fleet report (a history database is one host: empty there)
  // A MIG instance (schema 3; parent_memory_total_bytes is not stored).
  std::optional<MigInstance> mig;
  std::string Label() const;  // "0", "0 MIG 3g.40gb GI 1" (GpuInfo::Label)
};

// Who a GPU process belongs to. Empty fields are unknown.
struct IdentityRecord {
  uint32_t id = 0;
  std::string user;   // login user (loginuid) if set, else the owner
  std::string owner;  // real uid's name
  std::string pod;    // Kubernetes pod UID
  std::string container;
  std::string slurm_job;
  std::string project;  // CGOV_PROJECT
  std::string team;     // CGOV_TEAM
  std::string tags;     // CGOV_TAGS, "k=v,k=v" sorted
  std::string host;     // set by the fleet report; not stored (a database is one host)
  // Kubernetes names of `pod` and `container` (cgov daemon --kubernetes): stored beside the
  // identity (kube_pod, kube_container), not in its key; empty when unknown.
  std::string kube_namespace, kube_pod_name, kube_container_name;
  std::string slurm_account, slurm_partition;  // set by report --slurm-accounting; not stored

  auto Key() const {
    return std::make_tuple(user, owner, pod, container, slurm_job, project, team, tags);
  }
};

struct RunRecord {
  uint32_t id = 0;
  int64_t started_ms = 0;
  int64_t interval_ms = 0;
  std::string source;  // "daemon", "demo", "import:gpu-usage-audit:<file>"
  std::string hostname;
};

// A session's pid with this bit set is no process: a container the kubelet allocated the GPU to
// (a tick's allocations), the rest of the pid its identity id. Real pids stay below 2^22.
inline constexpr uint32_t kAllocationSessionPid = 0x80000000u;

// One process (or one allocated container) holding one GPU without a break (docs/history-db.md).
struct SessionRecord {
  uint32_t gpu_id = 0;
  uint32_t pid = 0;
  int64_t start_ms = 0;
  int64_t end_ms = 0;  // the end of the time its last sample stands for
  uint32_t identity_id = 0;
  uint32_t command_id = 0;
  int64_t held_ms = 0;       // sample time while it held memory on the GPU
  int64_t idle_held_ms = 0;  // of which the GPU was idle-held
  // Its share of that idle-held GPU-time: the GPU's idle-held time split evenly between the
  // identities holding it (as Who splits it), and an identity's share evenly between its
  // sessions on the GPU. Two processes of one user on one GPU hold it once, not twice; the
  // sessions of one GPU add up to its idle-held time. (Schema version 9; older rows: idle_held_ms.)
  int64_t idle_held_share_ms = 0;
  uint32_t mem_max_mib = 0;
  int64_t idle_streak_ms = 0;            // the idle-held time running now (0: not idle-held)
  int64_t idle_streak_max_ms = 0;        // the longest unbroken idle-held stretch
  int64_t idle_streak_max_start_ms = 0;  // and when it began
  bool open = true;                      // false once the process left the GPU or its run ended
  bool allocation() const { return (pid & kAllocationSessionPid) != 0; }
};

// Something the driver reported about one GPU at one moment (schema version 2).
// The price a writer priced one GPU at (micro-dollars per GPU-hour; nullopt: unknown), as
// analysis/pricing.h resolved it: kept here as plain numbers (the store knows no pricing).
struct PriceRecord {
  std::optional<int64_t> micro_usd, on_demand_micro_usd, spot_micro_usd;
  bool is_spot = false;
  std::string source;
  bool operator==(const PriceRecord&) const = default;
};

struct GpuEventRecord {
  int64_t ts_ms = 0;
  uint32_t gpu_id = 0;
  std::string kind;  // "xid", "memory_health"
  int64_t code = 0;  // the Xid; EncodeMemoryHealth
};

// What `cgov daemon --policy` did, or would have done, to one process (schema version 7):
// who, what, why, when. Names are kept as they were, not as dictionary ids: the record must
// read the same however the dictionaries change.
struct PolicyActionRecord {
  int64_t ts_ms = 0;
  std::string policy;  // the policy's name in the file
  std::string action;  // "would_stop", "sigterm", "sigkill", "exited", "refused", "withheld"
  uint32_t gpu_id = 0;
  uint32_t pid = 0;
  std::string user;
  std::string command;
  int64_t idle_held_ms = 0;  // how long it had held idle GPUs when the policy decided
  std::string outcome;       // what happened, or why not
  std::string uids;          // "uid 1000 euid 1000 suid 1000 login 1001" (schema 8; "" before)
  bool operator==(const PolicyActionRecord&) const = default;
};

// An opaque rollup row (the analysis layer owns the encoding of `data`).
struct RollupRow {
  int64_t hour = 0;          // Unix ms / kHourMs
  uint32_t identity_id = 0;  // 0 for GPU rows
  uint32_t gpu_id = 0;
  std::string data;
};

// The meta key where the recorder of run `run_id` says it could not read other users' process
// environments (docs/history-db.md); absent when it could.
inline std::string EnvironMetaKey(uint32_t run_id) {
  return "run." + std::to_string(run_id) + ".environ_unreadable";
}

}  // namespace cgov

#endif  // CGOV_STORE_RECORDS_H_
