#include "telemetry/procfs_host.h"

#include <algorithm>

#include <fmt/format.h>

#include "telemetry/text_scan.h"

namespace cgov {
namespace {

Status Bad(std::string_view file, size_t line, std::string_view field, std::string_view what) {
  return InvalidArgument(fmt::format("{}:{}: {}: {}", file, line, field, what));
}

bool ParseCpuLine(const std::string_view* f, size_t count, CpuTimes* t) {
  // cpuN user nice system idle [iowait irq softirq steal guest guest_nice]: older kernels print
  // fewer columns; the missing ones stay 0.
  if (count < 5) return false;
  uint64_t* slots[] = {&t->user,   &t->nice, &t->system,  &t->idle,
                       &t->iowait, &t->irq,  &t->softirq, &t->steal};
  for (size_t i = 0; i < 8 && i + 1 < count; ++i) {
    if (!ParseU64(f[i + 1], slots[i])) return false;
  }
  return true;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

Result<ProcStat> ParseCpuLines(std::string_view text, bool cores) {
  ProcStat stat;
  bool saw_total = false;
  std::string_view rest = text, line;
  // Read every tick: the cpu lines come first (proc(5)), so the scan stops at the first line
  // after them rather than walking `intr`, thousands of counters long on a large host.
  for (size_t n = 1; NextLine(&rest, &line); ++n) {
    if (!StartsWith(line, "cpu")) {
      if (saw_total || !stat.cores.empty()) break;
      continue;
    }
    constexpr size_t kFields = 9;  // the name and the 8 counters kept
    std::string_view f[kFields];
    const size_t count = SplitFieldsInto(line, f, kFields);
    CpuTimes times;
    if (!ParseCpuLine(f, std::min(count, kFields), &times)) {
      return Bad("/proc/stat", n, count == 0 ? "cpu" : f[0], "expected at least 4 counters");
    }
    if (f[0] == "cpu") {
      stat.total = times;
      saw_total = true;
      if (!cores) break;
    } else if (cores) {
      stat.cores.push_back(times);
    }
  }
  if (!saw_total) return Bad("/proc/stat", 1, "cpu", "no aggregate cpu line");
  return stat;
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) { return ParseCpuLines(text, true); }
Result<ProcStat> ParseProcStatTotal(std::string_view text) { return ParseCpuLines(text, false); }

Result<MemInfo> ParseMeminfo(std::string_view text) {
  struct Key {
    std::string_view name;
    std::optional<uint64_t> MemInfo::*slot;
  };
  static constexpr Key kKeys[] = {{"MemTotal:", &MemInfo::total_bytes},
                                  {"MemFree:", &MemInfo::free_bytes},
                                  {"MemAvailable:", &MemInfo::available_bytes},
                                  {"Buffers:", &MemInfo::buffers_bytes},
                                  {"Cached:", &MemInfo::cached_bytes}};
  MemInfo info;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    // ~55 lines, 5 wanted: compare the prefix before splitting anything.
    const Key* key = nullptr;
    for (const Key& k : kKeys) {
      if (StartsWith(lines[n], k.name)) key = &k;
    }
    if (key == nullptr) continue;
    std::vector<std::string_view> f = SplitFields(lines[n]);
    uint64_t value = 0;
    if (f.size() < 2 || !ParseU64(f[1], &value)) {
      return Bad("/proc/meminfo", n + 1, key->name, "not a number");
    }
    const bool kib = f.size() >= 3 && f[2] == "kB";
    info.*(key->slot) = kib ? value * 1024 : value;
  }
  if (!info.total_bytes) return Bad("/proc/meminfo", 1, "MemTotal", "missing");
  return info;
}

Result<LoadAvg> ParseLoadavg(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(Trim(text));
  LoadAvg load;
  if (f.size() < 3 || !ParseDouble(f[0], &load.load1) || !ParseDouble(f[1], &load.load5) ||
      !ParseDouble(f[2], &load.load15)) {
    return Bad("/proc/loadavg", 1, "load", "expected three numbers");
  }
  int64_t last_pid = 0;
  if (f.size() >= 5 && ParseI64(f[4], &last_pid)) load.last_pid = last_pid;
  return load;
}

Result<std::optional<double>> ParseCpuMax(std::string_view text) {
  std::vector<std::string_view> f = SplitFields(Trim(text));
  uint64_t quota = 0, period = 0;
  if (f.size() != 2 || !ParseU64(f[1], &period) || period == 0) {
    return Bad("cpu.max", 1, "period", "expected \"QUOTA PERIOD\"");
  }
  if (f[0] == "max") return std::optional<double>();
  if (!ParseU64(f[0], &quota)) return Bad("cpu.max", 1, "quota", "expected a number or max");
  return std::optional<double>(static_cast<double>(quota) / static_cast<double>(period));
}

bool IsWholeDisk(std::string_view name) {
  auto digits_from = [&](size_t i) {
    if (i >= name.size()) return false;
    for (; i < name.size(); ++i) {
      if (name[i] < '0' || name[i] > '9') return false;
    }
    return true;
  };
  auto letters_from = [&](size_t i) {
    if (i >= name.size()) return false;
    for (; i < name.size(); ++i) {
      if (name[i] < 'a' || name[i] > 'z') return false;
    }
    return true;
  };
  for (std::string_view prefix : {"sd", "vd", "hd", "xvd"}) {
    if (StartsWith(name, prefix)) return letters_from(prefix.size());
  }
  if (StartsWith(name, "mmcblk")) return digits_from(6);
  if (StartsWith(name, "nvme")) {  // nvme<C>n<N>, not nvme<C>n<N>p<P> nor nvme<C>c<X>n<N>
    size_t i = 4;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9') ++i;
    return i > 4 && i < name.size() && name[i] == 'n' && digits_from(i + 1);
  }
  return false;
}

Result<std::vector<DiskCounters>> ParseDiskstats(std::string_view text) {
  std::vector<DiskCounters> disks;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::vector<std::string_view> f = SplitFields(lines[n]);
    if (f.empty()) continue;
    // major minor name reads merged sectors_read ms writes merged sectors_written ...
    if (f.size() < 10) return Bad("/proc/diskstats", n + 1, "columns", "expected at least 10");
    if (!IsWholeDisk(f[2])) continue;
    uint64_t read_sectors = 0, written_sectors = 0;
    if (!ParseU64(f[5], &read_sectors))
      return Bad("/proc/diskstats", n + 1, "sectors_read", "not a number");
    if (!ParseU64(f[9], &written_sectors)) {
      return Bad("/proc/diskstats", n + 1, "sectors_written", "not a number");
    }
    disks.push_back({std::string(f[2]), read_sectors * 512, written_sectors * 512});
  }
  return disks;
}

Result<std::vector<NetCounters>> ParseNetDev(std::string_view text) {
  std::vector<NetCounters> nets;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    size_t colon = lines[n].find(':');
    if (colon == std::string_view::npos) continue;  // the two header lines
    std::string_view name = Trim(lines[n].substr(0, colon));
    std::vector<std::string_view> f = SplitFields(lines[n].substr(colon + 1));
    // rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes ...
    if (f.size() < 9) return Bad("/proc/net/dev", n + 1, name, "expected 16 counters");
    if (name == "lo") continue;
    NetCounters c{std::string(name), 0, 0};
    if (!ParseU64(f[0], &c.rx_bytes))
      return Bad("/proc/net/dev", n + 1, "rx_bytes", "not a number");
    if (!ParseU64(f[8], &c.tx_bytes))
      return Bad("/proc/net/dev", n + 1, "tx_bytes", "not a number");
    nets.push_back(std::move(c));
  }
  return nets;
}

}  // namespace cgov
