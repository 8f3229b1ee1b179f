// The process tree of a wrapped job: which pids belong to it, their CPU and memory.
//
// Without /proc/PID/task/TID/children (many kernels lack CONFIG_PROC_CHILDREN) the tree can only
// be found from each process's parent in /proc/PID/stat, and reading every process's stat file
// each tick would cost more than all the rest of the sampling. So:
//  - every process that existed before the job started is outside the tree, unread (the caller
//    lists them before spawning);
//  - new pids are looked for at most once per `discover_interval_ns`, and only when the last pid
//    created (the 5th field of /proc/loadavg, which the caller has just read for the host) moved
//    since the previous look: then one getdents on a kept-open /proc, and only the new pids are
//    read, once, to classify them;
//  - members' stat files stay open and are re-read with pread on every tick;
//  - every `full_rescan_every` discoveries the pids known to be outside are classified again, so a
//    recycled pid that joined the tree between two discoveries is found within that bound.
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
  std::vector<int> pids;              // members, sorted (the root itself excluded)
  std::optional<double> cpu_pct;      // 100 = one core busy; unknown on the first tick
  std::optional<uint64_t> rss_bytes;  // sum over members
};

// The CPU percentage of the processes present in both snapshots (keyed by pid and start time, so
// an exited or recycled pid adds nothing), over `seconds`. Pure.
std::optional<double> TreeCpuPct(const std::map<int, PidStat>& prev,
                                 const std::map<int, PidStat>& cur, double seconds,
                                 long ticks_per_second);

// The numeric entries of /proc: the pids alive now.
std::vector<int> ListPids(FileReader& files);

struct JobTreeOptions {
  long ticks_per_second = 100;  // sysconf(_SC_CLK_TCK)
  long page_size = 4096;        // sysconf(_SC_PAGESIZE)
  int64_t discover_interval_ns = 1'000'000'000;
  int full_rescan_every = 300;  // discoveries; 0 = never
};

// Not thread-safe; one per sampling thread.
class JobTreeReader {
 public:
  // `root`: the pid whose descendants make the tree (cgov itself, so that orphans reparented to
  // it as subreaper still count). `preexisting`: pids alive before the job was spawned.
  JobTreeReader(FileReader* files, int root, JobTreeOptions options,
                const std::vector<int>& preexisting);

  // `mono_ns`: the tick's monotonic time (for the CPU rate and the discovery cadence).
  // `last_pid`: /proc/loadavg's last created pid now, if known (unknown: always look).
  JobTreeSample Read(int64_t mono_ns, std::optional<int64_t> last_pid);

 private:
  void Discover(std::optional<int64_t> last_pid, std::map<int, PidStat>* candidates);
  std::optional<PidStat> ReadStat(int pid, bool hot);

  FileReader* files_;
  int root_;
  JobTreeOptions options_;
  std::set<int> outside_;           // pids seen and found not in the tree
  std::map<int, PidStat> members_;  // last tick's members
  int64_t prev_ns_ = 0;
  int64_t last_discovery_ns_ = 0;
  std::optional<int64_t> last_pid_;  // /proc/loadavg's at the last discovery
  int discoveries_ = 0;
  std::string buffer_;
  std::vector<std::string> names_;
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_JOB_TREE_H_
