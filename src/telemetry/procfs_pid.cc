#include "telemetry/procfs_pid.h"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "core/text.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

Status Bad(std::string_view file, std::string_view field, std::string_view what) {
  return InvalidArgument(fmt::format("{}: {}: {}", file, field, what));
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The 64-hex id in a segment like "cri-containerd-<id>.scope", "docker-<id>.scope", "<id>".
std::string ContainerIdIn(std::string_view segment) {
  if (segment.size() > 6 && segment.substr(segment.size() - 6) == ".scope") {
    segment.remove_suffix(6);
  }
  if (segment.size() < 64) return "";
  std::string_view tail = segment.substr(segment.size() - 64);
  if (!IsHex(tail)) return "";
  if (segment.size() > 64 && segment[segment.size() - 65] != '-') return "";
  return std::string(tail);
}

// "pod0f6c1e2a_..." (systemd driver, '_' for '-') or "pod0f6c1e2a-..." (cgroupfs driver).
std::string PodUidIn(std::string_view segment) {
  size_t at = segment.rfind("pod");
  if (at == std::string_view::npos) return "";
  std::string uid(segment.substr(at + 3));
  if (uid.size() > 6 && uid.substr(uid.size() - 6) == ".slice") uid.resize(uid.size() - 6);
  std::replace(uid.begin(), uid.end(), '_', '-');
  if (uid.size() != 36) return "";
  for (size_t i = 0; i < uid.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (uid[i] == '-')) return "";
    if (!dash && !IsHex(std::string_view(&uid[i], 1))) return "";
  }
  return uid;
}

}  // namespace

Result<PidStat> ParsePidStat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Bad("/proc/PID/stat", "comm", "no parenthesised command name");
  }
  PidStat stat;
  int64_t pid = 0;
  if (!ParseI64(Trim(text.substr(0, open)), &pid))
    return Bad("/proc/PID/stat", "pid", "not a number");
  stat.pid = static_cast<int>(pid);
  stat.comm = SafeText(text.substr(open + 1, close - open - 1));  // anyone sets it (prctl)
  // After ") ": state(3) ppid(4) ... utime(14) stime(15) ... num_threads(20) ... starttime(22)
  // ... vsize(23) rss(24); field numbers as in proc(5), so rest[k] is field k + 3.
  std::vector<std::string_view> rest = SplitFields(Trim(text.substr(close + 1)));
  if (rest.size() < 22) return Bad("/proc/PID/stat", "fields", "fewer than 24 fields");
  if (rest[0].size() != 1) return Bad("/proc/PID/stat", "state", "not one character");
  stat.state = rest[0][0];
  int64_t ppid = 0, threads = 0;
  if (!ParseI64(rest[1], &ppid)) return Bad("/proc/PID/stat", "ppid", "not a number");
  if (!ParseU64(rest[11], &stat.utime_ticks)) return Bad("/proc/PID/stat", "utime", "not a number");
  if (!ParseU64(rest[12], &stat.stime_ticks)) return Bad("/proc/PID/stat", "stime", "not a number");
  if (!ParseI64(rest[17], &threads)) return Bad("/proc/PID/stat", "num_threads", "not a number");
  if (!ParseU64(rest[19], &stat.start_ticks))
    return Bad("/proc/PID/stat", "starttime", "not a number");
  if (!ParseU64(rest[20], &stat.vsize_bytes)) {
    return Bad("/proc/PID/stat", "vsize", "not a number");
  }
  int64_t rss = 0;
  if (!ParseI64(rest[21], &rss)) return Bad("/proc/PID/stat", "rss", "not a number");
  stat.ppid = static_cast<int>(ppid);
  stat.num_threads = static_cast<int>(threads);
  stat.rss_pages = rss < 0 ? 0 : static_cast<uint64_t>(rss);
  return stat;
}

namespace {

// The first (real) id of status's "Uid:" or "Gid:" line.
Result<uint32_t> StatusId(std::string_view text, std::string_view key) {
  for (std::string_view line : SplitLines(text)) {
    if (line.substr(0, key.size()) != key) continue;
    std::vector<std::string_view> f = SplitFields(line.substr(key.size()));
    uint64_t id = 0;
    if (f.empty() || !ParseU64(f[0], &id) || id > UINT32_MAX) {
      return Bad("/proc/PID/status", key.substr(0, 3), "not a number");
    }
    return static_cast<uint32_t>(id);
  }
  return Bad("/proc/PID/status", key.substr(0, 3), "missing");
}

}  // namespace

Result<uint32_t> ParseStatusUid(std::string_view text) { return StatusId(text, "Uid:"); }
Result<uint32_t> ParseStatusGid(std::string_view text) { return StatusId(text, "Gid:"); }

std::optional<uint64_t> ParseStatusKb(std::string_view text, std::string_view field) {
  for (std::string_view line : SplitLines(text)) {
    if (line.size() <= field.size() || line.substr(0, field.size()) != field ||
        line[field.size()] != ':') {
      continue;
    }
    std::vector<std::string_view> f = SplitFields(line.substr(field.size() + 1));
    uint64_t kb = 0;
    if (f.size() == 2 && f[1] == "kB" && ParseU64(f[0], &kb)) return kb * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

Result<std::optional<uint32_t>> ParseLoginuid(std::string_view text) {
  uint64_t uid = 0;
  if (!ParseU64(Trim(text), &uid) || uid > 0xFFFFFFFFULL) {
    return Bad("/proc/PID/loginuid", "loginuid", "not a number");
  }
  if (uid == 0xFFFFFFFFULL) return std::optional<uint32_t>();
  return std::optional<uint32_t>(static_cast<uint32_t>(uid));
}

CgroupIdentity ParseCgroup(std::string_view text) {
  CgroupIdentity id;
  // Prefer the v2 line ("0::/path"); on v1 hosts, the cpu or memory hierarchy.
  for (std::string_view line : SplitLines(text)) {
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view controllers = line.substr(first + 1, second - first - 1);
    std::string_view path = line.substr(second + 1);
    bool v2 = line.substr(0, first) == "0" && controllers.empty();
    bool useful_v1 = controllers.find("memory") != std::string_view::npos ||
                     controllers.find("cpu") != std::string_view::npos;
    if (v2 && path != "/")
      id.path = std::string(path);
    else if (useful_v1 && id.path.empty() && path != "/")
      id.path = std::string(path);
  }
  size_t start = 0;
  std::string_view path = id.path;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (std::string pod = PodUidIn(segment); !pod.empty()) id.pod_uid = pod;
    if (std::string container = ContainerIdIn(segment); !container.empty()) {
      id.container_id = container;
    }
    if (segment.substr(0, 4) == "job_") id.slurm_job_id = std::string(segment.substr(4));
    start = end + 1;
  }
  return id;
}

std::map<uint32_t, std::string> ParsePasswd(std::string_view text) {
  std::map<uint32_t, std::string> users;
  for (std::string_view line : SplitLines(text)) {
    if (line.empty() || line[0] == '#') continue;
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    size_t c3 = c2 == std::string_view::npos ? c2 : line.find(':', c2 + 1);
    if (c3 == std::string_view::npos) continue;
    uint64_t uid = 0;
    if (!ParseU64(line.substr(c2 + 1, c3 - c2 - 1), &uid)) continue;
    users.emplace(static_cast<uint32_t>(uid), std::string(line.substr(0, c1)));
  }
  return users;
}

std::optional<std::string> EnvironValue(std::string_view environ, std::string_view name) {
  size_t start = 0;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string_view::npos) end = environ.size();
    std::string_view entry = environ.substr(start, end - start);
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name &&
        entry[name.size()] == '=') {
      return std::string(entry.substr(name.size() + 1));
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::vector<int> Descendants(const std::vector<PidStat>& table, int root) {
  std::unordered_multimap<int, int> children;
  for (const PidStat& p : table) children.emplace(p.ppid, p.pid);
  std::vector<int> found;
  std::vector<int> frontier = {root};
  while (!frontier.empty()) {
    int parent = frontier.back();
    frontier.pop_back();
    auto [begin, end] = children.equal_range(parent);
    for (auto it = begin; it != end; ++it) {
      if (it->second == root || it->second == parent) continue;  // pid 0's self-parenting
      found.push_back(it->second);
      frontier.push_back(it->second);
    }
    if (found.size() > table.size()) break;  // a cycle in a torn snapshot: stop, don't spin
  }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

}  // namespace cgov
