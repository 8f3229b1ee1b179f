#include "telemetry/pid_namespace.h"

#include <unistd.h>

#include <charconv>
#include <string>

#include "telemetry/job_tree.h"
#include "telemetry/procfs_pid.h"
#include "telemetry/text_scan.h"

namespace cgov {

std::vector<int> ParseNsPids(std::string_view status) {
  std::vector<int> pids;
  for (std::string_view line : SplitLines(status)) {
    if (!line.starts_with("NSpid:")) continue;
    for (std::string_view field : SplitFields(line.substr(6))) {
      int pid = 0;
      auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), pid);
      if (ec != std::errc() || end != field.data() + field.size() || pid <= 0) return {};
      pids.push_back(pid);
    }
    break;
  }
  return pids;
}

std::optional<uint64_t> ParsePidNamespaceLink(std::string_view target) {
  constexpr std::string_view kPrefix = "pid:[";
  if (!target.starts_with(kPrefix) || !target.ends_with("]")) return std::nullopt;
  std::string_view digits = target.substr(kPrefix.size(), target.size() - kPrefix.size() - 1);
  uint64_t inode = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), inode);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return std::nullopt;
  }
  return inode;
}

std::optional<uint64_t> OwnPidNamespaceInode() {
  char target[64];
  const ssize_t n = readlink("/proc/self/ns/pid", target, sizeof(target));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(target)) return std::nullopt;
  return ParsePidNamespaceLink(std::string_view(target, static_cast<size_t>(n)));
}

std::optional<int> FindOuterPid(FileReader& host, int local_pid, uint64_t start_ticks) {
  std::string text;
  for (int pid : ListPids(host)) {
    const std::string dir = "/proc/" + std::to_string(pid);
    if (!host.Read(dir + "/status", &text).ok()) continue;
    std::vector<int> ns = ParseNsPids(text);
    if (ns.size() < 2 || ns.back() != local_pid) continue;
    if (!host.Read(dir + "/stat", &text).ok()) continue;
    Result<PidStat> stat = ParsePidStat(text);
    if (stat.ok() && stat->start_ticks == start_ticks) return pid;
  }
  return std::nullopt;
}

}  // namespace cgov
