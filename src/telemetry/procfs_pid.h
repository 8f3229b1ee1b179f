// Parsers for per-process /proc files. Each is a pure function of the file's text.
#ifndef CGOV_TELEMETRY_PROCFS_PID_H_
#define CGOV_TELEMETRY_PROCFS_PID_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

// The fields of /proc/PID/stat that Cost Governor uses.
struct PidStat {
  int pid = 0;
  std::string comm;  // as the kernel keeps it (15 bytes at most); may hold spaces and ')'
  char state = '?';
  int ppid = 0;
  uint64_t utime_ticks = 0;  // USER_HZ
  uint64_t stime_ticks = 0;
  uint64_t start_ticks = 0;  // since boot, USER_HZ: with pid, identifies a process over time
  uint64_t rss_pages = 0;
  uint64_t vsize_bytes = 0;
  int num_threads = 0;
};

// Parses from the *last* ')' so that a comm such as "a) (b" cannot shift the fields.
Result<PidStat> ParsePidStat(std::string_view text);

// The real uid from /proc/PID/status ("Uid:\treal\teffective\tsaved\tfs").
Result<uint32_t> ParseStatusUid(std::string_view text);
// The real gid of /proc/PID/status ("Gid:\treal\teffective\tsaved\tfs").
Result<uint32_t> ParseStatusGid(std::string_view text);

// A "kB" field of /proc/PID/status ("VmHWM", "VmRSS") in bytes; nullopt when absent.
std::optional<uint64_t> ParseStatusKb(std::string_view text, std::string_view field);

// /proc/PID/loginuid: nullopt when unset (4294967295: a daemon, or no audit support).
Result<std::optional<uint32_t>> ParseLoginuid(std::string_view text);

// Who a process belongs to, as far as its cgroup path tells.
struct CgroupIdentity {
  std::string path;          // the cgroup v2 path, or the v1 cpu/memory one
  std::string pod_uid;       // Kubernetes pod UID, dashes restored ("0f6c...-...")
  std::string container_id;  // 64-hex container id (containerd, CRI-O, Docker)
  std::string slurm_job_id;  // "12345" from .../job_12345/...
};
CgroupIdentity ParseCgroup(std::string_view text);

// /etc/passwd -> uid to name. Malformed lines are skipped (the file is not ours to judge).
std::map<uint32_t, std::string> ParsePasswd(std::string_view text);

// /proc/PID/environ (NUL-separated): the value of `name`, if set.
std::optional<std::string> EnvironValue(std::string_view environ, std::string_view name);

// The pids in `table` that descend from `root` (children, grandchildren, ...), not root itself,
// sorted. Pure: `table` is a snapshot of every process's (pid, ppid).
std::vector<int> Descendants(const std::vector<PidStat>& table, int root);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_PROCFS_PID_H_
