// The process tree of a wrapped job: which pids belong to it, their CPU and memory.
//
// Without /proc/PID/task/TID/children (many kernels lack CONFIG_PROC_CHILDREN) the tree can only
// be found by reading every process's parent from /proc/PID/stat. Doing that each tick would
// cost far more than the rest of the sampling, so the scan is incremental: each tick lists /proc
// (one getdents) and reads stat only for the tree's members and for pids it has not seen; pids
// known to be outside the tree are skipped until a full rescan every `full_rescan_every` ticks
// (which also catches a recycled pid that joined the tree).
#ifndef CGOV_TELEMETRY_JOB_TREE_H_
#define CGOV_TELEMETRY_JOB_TREE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "os/file_reader.h"
#include "telemetry/procfs_pid.h"

namespace cgov {

struct JobTreeSample {
  std::vector<int> pids;               // members, sorted (the root itself excluded)
  std::optional<double> cpu_pct;       // 100 = one core busy; unknown on the first tick
  std::optional<uint64_t> rss_bytes;   // sum over members
};

// The CPU percentage of the processes present in both snapshots (keyed by pid and start time, so
// an exited or recycled pid adds nothing), over `seconds`. Pure.
std::optional<double> TreeCpuPct(const std::map<int, PidStat>& prev,
                                 const std::map<int, PidStat>& cur, double seconds,
                                 long ticks_per_second);

// Not thread-safe; one per sampling thread.
class JobTreeReader {
 public:
  // `root`: the pid whose descendants make the tree (cgov itself, so that orphans reparented to
  // it as subreaper still count).
  JobTreeReader(FileReader* files, int root, long ticks_per_second, long page_size,
                int full_rescan_every = 30);

  // `mono_ns`: the tick's monotonic time, for the CPU rate.
  JobTreeSample Read(int64_t mono_ns);

 private:
  FileReader* files_;
  int root_;
  long ticks_per_second_;
  long page_size_;
  int full_rescan_every_;
  int ticks_ = 0;
  std::set<int> outside_;           // pids seen and found not in the tree
  std::map<int, PidStat> members_;  // last tick's members
  int64_t prev_ns_ = 0;
  std::string buffer_;
  std::vector<std::string> names_;
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_JOB_TREE_H_
