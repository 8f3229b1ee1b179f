// Every /proc and /sys parser cgov reads a host with, fed the same bytes: a host, a container or
// a process name can put anything there (a comm of "a) (b", a cgroup path of any bytes). Each
// parses or returns an error, and what it keeps of a name is safe to print.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"
#include "telemetry/nvml_process_layout.h"
#include "telemetry/pid_namespace.h"
#include "telemetry/procfs_host.h"
#include "telemetry/procfs_pid.h"

using namespace cgov;

CGOV_FUZZ_TARGET(proc_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (Result<PidStat> stat = ParsePidStat(text); stat.ok()) {
    FUZZ_CHECK(IsSafeText(stat->comm));  // a name anyone sets (prctl), printed and exported
  }
  (void)ParseStatusUid(text);
  (void)ParseStatusKb(text, "VmRSS");
  (void)ParseStatusKb(text, "VmHWM");
  (void)ParseLoginuid(text);
  const CgroupIdentity cgroup = ParseCgroup(text);
  FUZZ_CHECK(cgroup.container_id.empty() || (cgroup.container_id.size() == 64 &&
                                             cgroup.container_id.find_first_not_of(
                                                 "0123456789abcdefABCDEF") == std::string::npos));
  (void)ParsePasswd(text);
  (void)EnvironValue(text, "CGOV_PROJECT");
  (void)ParseNsPids(text);
  (void)ParsePidNamespaceLink(text);
  (void)ParseProcStat(text);
  (void)ParseMeminfo(text);
  (void)ParseLoadavg(text);
  if (auto quota = ParseCpuMax(text); quota.ok() && *quota) {
    FUZZ_CHECK(**quota >= 0 && std::isfinite(**quota));
  }
  if (auto disks = ParseDiskstats(text); disks.ok()) {
    for (const DiskCounters& d : *disks) (void)IsWholeDisk(d.name);
  }
  (void)ParseNetDev(text);
  (void)ParseDriverVersion(text);
  return 0;
}
