// Parsers for host-wide /proc and cgroup files. Each is a pure function of the file's text.
// Counters stay raw (jiffies, sectors, bytes); rates come from proc_rates.h.
#ifndef CGOV_TELEMETRY_PROCFS_HOST_H_
#define CGOV_TELEMETRY_PROCFS_HOST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

// One "cpu" line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  // guest and guest_nice are already inside user and nice: not added again.
  uint64_t Idle() const { return idle + iowait; }
  uint64_t Total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};

struct ProcStat {
  CpuTimes total;
  std::vector<CpuTimes> cores;  // cpu0, cpu1, ... in file order (offline cores are absent)
};

// /proc/stat. The error names the line and field.
Result<ProcStat> ParseProcStat(std::string_view text);
// The same without the per-core lines (cores stays empty): the aggregate line is the first.
Result<ProcStat> ParseProcStatTotal(std::string_view text);

// /proc/meminfo, in bytes. Fields the kernel does not print stay unknown.
struct MemInfo {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> free_bytes;
  std::optional<uint64_t> available_bytes;  // MemAvailable (kernel >= 3.14)
  std::optional<uint64_t> buffers_bytes;
  std::optional<uint64_t> cached_bytes;
};
Result<MemInfo> ParseMeminfo(std::string_view text);

struct LoadAvg {
  double load1 = 0, load5 = 0, load15 = 0;
  // The pid most recently created in this pid namespace (the 5th field): if it has not changed,
  // no process was created, anywhere.
  std::optional<int64_t> last_pid;
};
Result<LoadAvg> ParseLoadavg(std::string_view text);

// cgroup v2 cpu.max ("max 100000" or "200000 100000") -> CPU cores allowed; nullopt = no limit.
Result<std::optional<double>> ParseCpuMax(std::string_view text);

// Cumulative I/O of one whole disk from /proc/diskstats.
struct DiskCounters {
  std::string name;
  uint64_t read_bytes = 0;  // sectors read x 512 (the kernel's unit, whatever the device's)
  uint64_t written_bytes = 0;
};
// Whole disks only (sda, vda, xvda, nvme0n1, mmcblk0): partitions, loop, ram, zram, dm and md
// devices are skipped so that nothing is counted twice.
Result<std::vector<DiskCounters>> ParseDiskstats(std::string_view text);
bool IsWholeDisk(std::string_view name);

// Cumulative traffic of one interface from /proc/net/dev; loopback excluded.
struct NetCounters {
  std::string name;
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
};
Result<std::vector<NetCounters>> ParseNetDev(std::string_view text);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_PROCFS_HOST_H_
