#include "telemetry/self_stats.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "core/text.h"
#include "telemetry/procfs_pid.h"
#include "telemetry/text_scan.h"

namespace cgov {

std::optional<int64_t> ParseMaxOpenFiles(std::string_view limits) {
  constexpr std::string_view kKey = "Max open files";
  for (std::string_view line : SplitLines(limits)) {
    if (!line.starts_with(kKey)) continue;
    std::vector<std::string_view> f = SplitFields(line.substr(kKey.size()));
    int64_t soft = 0;
    if (f.empty() || !ParseI64(f[0], &soft)) return std::nullopt;  // "unlimited"
    return soft;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseBootTime(std::string_view proc_stat) {
  for (std::string_view line : SplitLines(proc_stat)) {
    if (!line.starts_with("btime ")) continue;
    int64_t btime = 0;
    if (ParseI64(Trim(line.substr(6)), &btime)) return btime;
  }
  return std::nullopt;
}

Result<SelfStats> ReadSelfStats(FileReader& files) {
  std::string text;
  CGOV_RETURN_IF_ERROR(files.Read("/proc/self/stat", &text));
  CGOV_ASSIGN_OR_RETURN(PidStat stat, ParsePidStat(text));
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  SelfStats s;
  s.cpu_seconds = static_cast<double>(stat.utime_ticks + stat.stime_ticks) / hz;
  s.resident_bytes = stat.rss_pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  s.virtual_bytes = stat.vsize_bytes;
  std::vector<std::string> fds;
  if (files.ListDir("/proc/self/fd", &fds).ok()) s.open_fds = static_cast<int64_t>(fds.size());
  if (files.Read("/proc/self/limits", &text).ok()) s.max_fds = ParseMaxOpenFiles(text);
  if (files.Read("/proc/stat", &text).ok()) {
    if (std::optional<int64_t> boot = ParseBootTime(text)) {
      s.start_time_seconds =
          static_cast<double>(*boot) + static_cast<double>(stat.start_ticks) / hz;
    }
  }
  return s;
}

}  // namespace cgov
