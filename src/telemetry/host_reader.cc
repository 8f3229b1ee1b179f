#include "telemetry/host_reader.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "core/text.h"
#include "telemetry/proc_rates.h"
#include "telemetry/procfs_pid.h"
#include "telemetry/text_scan.h"

namespace cgov {

HostInfo ReadHostInfo(FileReader& files) {
  HostInfo info;
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) == 0) info.hostname = SafeText(name);
  utsname uts{};
  if (uname(&uts) == 0) info.kernel = SafeText(uts.release);
  info.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::string text;
  if (files.Read("/proc/meminfo", &text).ok()) {
    if (Result<MemInfo> mem = ParseMeminfo(text); mem.ok()) info.mem_total_bytes = mem->total_bytes;
  }
  return info;
}

CpuLimit ReadCpuLimit(FileReader& files) {
  std::string text;
  std::vector<std::string> candidates;
  if (files.Read("/proc/self/cgroup", &text).ok()) {
    CgroupIdentity self = ParseCgroup(text);
    if (!self.path.empty()) candidates.push_back("/sys/fs/cgroup" + self.path + "/cpu.max");
  }
  candidates.push_back("/sys/fs/cgroup/cpu.max");
  for (const std::string& path : candidates) {
    if (!files.Read(path, &text).ok()) continue;
    auto parsed = ParseCpuMax(text);
    if (parsed.ok()) return {true, *parsed, path};
  }
  std::string quota, period;
  if (files.Read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &quota).ok() &&
      files.Read("/sys/fs/cgroup/cpu/cpu.cfs_period_us", &period).ok()) {
    int64_t q = 0, p = 0;
    if (ParseI64(Trim(quota), &q) && ParseI64(Trim(period), &p) && p > 0) {
      std::optional<double> cores;
      if (q > 0) cores = static_cast<double>(q) / static_cast<double>(p);
      return {true, cores, "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"};
    }
  }
  return {false, std::nullopt, "no readable cgroup cpu.max or cpu.cfs_quota_us"};
}

template <typename T>
std::optional<T> HostReader::ReadParsed(const char* path, Result<T> (*parse)(std::string_view)) {
  Status status = files_->ReadHot(path, &buffer_);
  if (!status.ok()) {
    errors_.push_back(status);
    return std::nullopt;
  }
  Result<T> parsed = parse(buffer_);
  if (!parsed.ok()) {
    errors_.push_back(parsed.status());
    return std::nullopt;
  }
  return std::move(parsed).value();
}

void HostReader::Read(HostSample* out) {
  *out = HostSample{};
  errors_.clear();
  const int64_t now_ns = clock_->MonotonicNs();
  const double seconds = prev_ns_ > 0 ? static_cast<double>(now_ns - prev_ns_) * 1e-9 : 0;

  std::optional<ProcStat> stat;
  if (host_files_ & kHostCpu) {
    stat = ReadParsed("/proc/stat",
                      (host_files_ & kHostCpuCores) ? ParseProcStat : ParseProcStatTotal);
  }
  if (stat && prev_stat_) {
    out->cpu_pct = CpuBusyPct(prev_stat_->total, stat->total);
    out->iowait_pct = CpuIowaitPct(prev_stat_->total, stat->total);
    if (host_files_ & kHostCpuCores) out->core_pct = CoreBusyPct(*prev_stat_, *stat);
  }
  if ((host_files_ & kHostMemory) &&
      (memory_read_ns_ == 0 || now_ns - memory_read_ns_ >= memory_period_ns_)) {
    memory_read_ns_ = now_ns;
    if (std::optional<MemInfo> mem = ReadParsed("/proc/meminfo", ParseMeminfo)) {
      out->mem_total_bytes = mem->total_bytes;
      out->mem_available_bytes = mem->available_bytes;
    }
  }
  std::optional<std::vector<DiskCounters>> disks;
  if (host_files_ & kHostDisk) disks = ReadParsed("/proc/diskstats", ParseDiskstats);
  if (disks && prev_disks_) {
    IoRates r = DiskRates(*prev_disks_, *disks, seconds);
    out->disk_read_bytes_per_s = r.read_bytes_per_s;
    out->disk_write_bytes_per_s = r.write_bytes_per_s;
  }
  std::optional<std::vector<NetCounters>> nets;
  if (host_files_ & kHostNet) nets = ReadParsed("/proc/net/dev", ParseNetDev);
  if (nets && prev_nets_) {
    IoRates r = NetRates(*prev_nets_, *nets, seconds);
    out->net_rx_bytes_per_s = r.read_bytes_per_s;
    out->net_tx_bytes_per_s = r.write_bytes_per_s;
  }
  if (host_files_ & kHostLoad) out->load = ReadParsed("/proc/loadavg", ParseLoadavg);

  prev_ns_ = now_ns;
  prev_stat_ = std::move(stat);
  prev_disks_ = std::move(disks);
  prev_nets_ = std::move(nets);
}

}  // namespace cgov
