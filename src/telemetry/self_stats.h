// The process's own figures, as Prometheus' client libraries serve them (`process_*`): CPU time,
// memory, open files and start time, from /proc/self/stat, /proc/self/fd, /proc/self/limits and
// /proc/stat's btime. Read at each scrape: cheap (four small files and a directory).
#ifndef CGOV_TELEMETRY_SELF_STATS_H_
#define CGOV_TELEMETRY_SELF_STATS_H_

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/status.h"
#include "os/file_reader.h"

namespace cgov {

struct SelfStats {
  double cpu_seconds = 0;  // user + system
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
  std::optional<int64_t> open_fds;           // unknown when /proc/self/fd is unreadable
  std::optional<int64_t> max_fds;            // the soft limit; unknown when unlimited
  std::optional<double> start_time_seconds;  // Unix time
};

// Pure: "Max open files" of /proc/PID/limits (the soft limit); nullopt when unlimited or absent.
std::optional<int64_t> ParseMaxOpenFiles(std::string_view limits);
// Pure: /proc/stat's "btime" (boot time, Unix seconds).
std::optional<int64_t> ParseBootTime(std::string_view proc_stat);

// `files` reads the real /proc (not a --host-root): the figures are this process's.
Result<SelfStats> ReadSelfStats(FileReader& files);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_SELF_STATS_H_
