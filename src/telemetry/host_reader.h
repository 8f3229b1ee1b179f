// Host-wide telemetry for one tick: CPU, memory, disk and network rates, load, CPU limit.
#ifndef CGOV_TELEMETRY_HOST_READER_H_
#define CGOV_TELEMETRY_HOST_READER_H_

#include <optional>
#include <string>
#include <vector>

#include "os/clock.h"
#include "os/file_reader.h"
#include "telemetry/procfs_host.h"
#include "telemetry/tick_sample.h"

namespace cgov {

// What the machine is, read once per run.
struct HostInfo {
  std::string hostname;
  std::string kernel;  // uname release
  int cpus = 0;        // online
  std::optional<uint64_t> mem_total_bytes;
};
HostInfo ReadHostInfo(FileReader& files);

// The CPU the container may use. `known` false: no cgroup file could be read.
struct CpuLimit {
  bool known = false;
  std::optional<double> cores;  // nullopt with known: no limit
  std::string source;           // the file it came from, or why it is unknown
};

// cgroup v2 cpu.max of this process's cgroup (then of the cgroup root), else cgroup v1
// cpu.cfs_quota_us / cpu.cfs_period_us.
CpuLimit ReadCpuLimit(FileReader& files);

// The host files a HostReader reads: each is read every tick when asked for, never otherwise
// (the kernel's generation of a /proc file costs more than parsing it).
enum HostFiles : unsigned {
  kHostCpu = 1u << 0,       // /proc/stat: cpu_pct, iowait_pct, core_pct
  kHostMemory = 1u << 1,    // /proc/meminfo: mem_total_bytes, mem_available_bytes
  kHostDisk = 1u << 2,      // /proc/diskstats: disk_*_bytes_per_s
  kHostNet = 1u << 3,       // /proc/net/dev: net_*_bytes_per_s
  kHostLoad = 1u << 4,      // /proc/loadavg: load
  kHostCpuCores = 1u << 5,  // with kHostCpu: core_pct too (a busy line per core; unparsed without)
  kAllHostFiles = (1u << 6) - 1,
};

// Reads the host files each tick (kept open) and turns counters into rates against the previous
// tick. The first tick has no rates; fields of files not asked for stay unknown. Not
// thread-safe; one per sampling thread.
class HostReader {
 public:
  HostReader(FileReader* files, Clock* clock, unsigned host_files = kAllHostFiles)
      : files_(files), clock_(clock), host_files_(host_files) {}

  // Fills *out; a file that cannot be read or parsed leaves its fields unknown and is recorded in
  // errors() (cleared at the start of each Read).
  void Read(HostSample* out);
  const std::vector<Status>& errors() const { return errors_; }
  // Reads /proc/meminfo only when `period_ns` passed since it was last read (0: every tick);
  // its fields are unknown on the ticks between.
  void set_memory_period_ns(int64_t period_ns) { memory_period_ns_ = period_ns; }

 private:
  template <typename T>
  std::optional<T> ReadParsed(const char* path, Result<T> (*parse)(std::string_view));

  FileReader* files_;
  Clock* clock_;
  unsigned host_files_;
  int64_t memory_period_ns_ = 0;
  int64_t memory_read_ns_ = 0;  // 0: never read
  std::string buffer_;
  std::vector<Status> errors_;
  int64_t prev_ns_ = 0;
  std::optional<ProcStat> prev_stat_;
  std::optional<std::vector<DiskCounters>> prev_disks_;
  std::optional<std::vector<NetCounters>> prev_nets_;
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_HOST_READER_H_
