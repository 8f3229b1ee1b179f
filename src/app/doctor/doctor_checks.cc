// Building the doctor report: every probe, none of the printing.
#include <fmt/format.h>

#include "app/doctor/doctor_report.h"
#include "telemetry/environ_access.h"
#include "telemetry/nvml_source.h"
#include "telemetry/pid_namespace.h"
#include "telemetry/procfs_host.h"
#include "telemetry/procfs_pid.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

HostCheck Missing(std::string name, const Status& status, std::string fix) {
  return {std::move(name), "missing", status.message(), std::move(fix)};
}

template <typename T>
HostCheck CheckFile(FileReader& files, const char* path, Result<T> (*parse)(std::string_view),
                    std::string (*describe)(const T&)) {
  std::string text;
  Status status = files.Read(path, &text);
  if (!status.ok()) {
    return Missing(path, status, "mount procfs at /proc (or pass --host-root for a host mount)");
  }
  Result<T> parsed = parse(text);
  if (!parsed.ok()) return Missing(path, parsed.status(), "report this file's content as a bug");
  return {path, "ok", describe(*parsed), ""};
}

std::string DescribeStat(const ProcStat& s) {
  return fmt::format("CPU %: {} cores", s.cores.size());
}
std::string DescribeMem(const MemInfo& m) {
  return fmt::format("{:.1f} GiB total{}", static_cast<double>(*m.total_bytes) / (1 << 30),
                     m.available_bytes ? "" : " (no MemAvailable: old kernel)");
}
std::string DescribeLoad(const LoadAvg& l) { return fmt::format("load {:.2f}", l.load1); }
std::string DescribeDisks(const std::vector<DiskCounters>& d) {
  std::vector<std::string> names;
  for (const auto& disk : d) names.push_back(disk.name);
  return fmt::format("{} whole disk(s): {}", d.size(), fmt::join(names, ", "));
}
std::string DescribeNets(const std::vector<NetCounters>& n) {
  std::vector<std::string> names;
  for (const auto& net : n) names.push_back(net.name);
  return fmt::format("{} interface(s) besides lo: {}", n.size(), fmt::join(names, ", "));
}

HostCheck CheckCpuLimit(FileReader& files) {
  CpuLimit limit = ReadCpuLimit(files);
  if (!limit.known) {
    return {"cgroup cpu limit", "warn", limit.source,
            "mount the cgroup filesystem at /sys/fs/cgroup to see a container's CPU quota"};
  }
  std::string value = limit.cores ? fmt::format("{:.2f} cores", *limit.cores) : "no limit";
  return {"cgroup cpu limit", "ok", fmt::format("{} ({})", value, limit.source), ""};
}

HostCheck CheckSelfIdentity(FileReader& files) {
  std::string text;
  std::vector<std::string> unreadable;
  for (const char* file : {"stat", "status", "loginuid", "cgroup"}) {
    if (!files.Read(std::string("/proc/self/") + file, &text).ok()) unreadable.push_back(file);
  }
  if (unreadable.empty()) {
    return {"process identity", "ok", "/proc/PID/{stat,status,loginuid,cgroup} readable", ""};
  }
  return {"process identity", "warn",
          fmt::format("/proc/self/{{{}}} unreadable: users and pods will show as unknown",
                      fmt::join(unreadable, ",")),
          "enable audit loginuid (CONFIG_AUDIT) or run with access to /proc"};
}

HostCheck CheckHidepid(FileReader& files) {
  std::string text;
  if (!files.Read("/proc/self/mounts", &text).ok()) {
    return {"other users' processes", "warn", "/proc/self/mounts unreadable", ""};
  }
  for (std::string_view line : SplitLines(text)) {
    std::vector<std::string_view> f = SplitFields(line);
    if (f.size() < 4 || f[1] != "/proc" || f[2] != "proc") continue;
    if (f[3].find("hidepid=") != std::string_view::npos &&
        f[3].find("hidepid=0") == std::string_view::npos &&
        f[3].find("hidepid=off") == std::string_view::npos) {
      return {"other users' processes", "warn",
              fmt::format("/proc is mounted with {}: GPU processes of other users show no owner, "
                          "command or pod",
                          f[3]),
              "run cgov as root, or add its user to the group named by /proc's gid= option"};
    }
    return {"other users' processes", "ok", "visible (/proc has no hidepid)", ""};
  }
  return {"other users' processes", "warn", "/proc is not a procfs mount here", ""};
}

// A job names its project and team in its environment, which only its own user, root or a
// holder of CAP_SYS_PTRACE may read.
HostCheck CheckEnvironAccess(FileReader& files) {
  std::string text;
  if (!files.Read("/proc/self/status", &text).ok()) {
    return {"other users' projects and teams", "warn", "/proc/self/status unreadable", ""};
  }
  const EnvironAccess a = EnvironAccessOf(text);
  if (a.others_readable) {
    return {"other users' projects and teams", "ok",
            "other users' /proc/PID/environ readable (CGOV_PROJECT, CGOV_TEAM, CGOV_TAGS)", ""};
  }
  return {"other users' projects and teams", "warn", a.warning,
          "grant CAP_SYS_PTRACE (systemd: AmbientCapabilities=CAP_SYS_PTRACE) or run as root"};
}

// The driver names GPU processes by host pid; in a container of its own PID namespace they are
// not in this /proc, and users, pods and the job's GPUs cannot be told.
HostCheck CheckGpuPids(FileReader& files, const std::vector<GpuSlowSample>& slow,
                       const std::string& host_root) {
  size_t total = 0, missing = 0;
  std::string text;
  for (const GpuSlowSample& gpu : slow) {
    for (const GpuProcess& p : gpu.processes) {
      ++total;
      if (!files.Read(fmt::format("/proc/{}/stat", p.pid), &text).ok()) ++missing;
    }
  }
  const char* name = "GPU process ids";
  if (total == 0) return {name, "ok", "no GPU process now: nothing to match", ""};
  if (missing == 0) {
    return {name, "ok", fmt::format("{} GPU process(es), all found in /proc", total), ""};
  }
  std::optional<uint64_t> ns = OwnPidNamespaceInode();
  if (host_root == "/" && ns && *ns != kInitialPidNamespaceInode) {
    return {name, "warn",
            fmt::format("{} of {} GPU process(es) are not in /proc: cgov runs in a PID namespace "
                        "of its own (a container), and the driver reports host pids",
                        missing, total),
            "mount the host's /proc read-only (e.g. -v /proc:/host/proc:ro) and pass --host-root "
            "/host, or share the host's PID namespace (docker --pid=host, Kubernetes hostPID)"};
  }
  return {name, "warn",
          fmt::format("{} of {} GPU process(es) are not in {}/proc (exited meanwhile, or hidden)",
                      missing, total, host_root == "/" ? "" : host_root),
          host_root == "/" ? "" : "check that --host-root is the host's root (its /proc)"};
}

}  // namespace

int DoctorReport::ExitStatus() const { return (!nvml_ok && nvml_explicit) ? 1 : 0; }

DoctorReport BuildDoctorReport(const std::string& nvml_lib, bool nvml_explicit, FileReader& files,
                               const std::string& host_root) {
  DoctorReport report;
  report.nvml_explicit = nvml_explicit;
  report.host_root = host_root;
  Result<std::unique_ptr<NvmlSource>> source = NvmlSource::Open(nvml_lib);
  std::vector<GpuSlowSample> slow;
  if (source.ok()) {
    NvmlSource& nvml = **source;
    nvml.ReadSlow(&slow);  // one real read of every process list: the ABI shows in it
    report.nvml_ok = true;
    report.nvml_path = nvml.library().path();
    report.driver_version = nvml.driver_version();
    report.nvml_version = nvml.nvml_version();
    report.cuda_driver_version = nvml.cuda_driver_version();
    report.symbols = nvml.library().symbols();
    report.missing_optional_symbols = nvml.library().MissingOptional();
    report.gpus = nvml.gpus();
    report.process_lists = nvml.process_lists();
    report.abi_warnings = nvml.AbiWarnings();
  } else {
    report.nvml_error = source.status().message();
  }
  report.host.push_back(CheckFile(files, "/proc/stat", ParseProcStat, DescribeStat));
  report.host.push_back(CheckFile(files, "/proc/meminfo", ParseMeminfo, DescribeMem));
  report.host.push_back(CheckFile(files, "/proc/diskstats", ParseDiskstats, DescribeDisks));
  report.host.push_back(CheckFile(files, "/proc/net/dev", ParseNetDev, DescribeNets));
  report.host.push_back(CheckFile(files, "/proc/loadavg", ParseLoadavg, DescribeLoad));
  report.host.push_back(CheckCpuLimit(files));
  report.host.push_back(CheckSelfIdentity(files));
  report.host.push_back(CheckHidepid(files));
  report.host.push_back(CheckEnvironAccess(files));
  if (report.nvml_ok) report.host.push_back(CheckGpuPids(files, slow, host_root));
  return report;
}

}  // namespace cgov
