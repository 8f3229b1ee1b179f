// Per-process identity and resource use from /proc, for the processes NVML names and for the
// process tree of a wrapped job.
#ifndef CGOV_TELEMETRY_PROCESS_READER_H_
#define CGOV_TELEMETRY_PROCESS_READER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "os/file_reader.h"
#include "telemetry/procfs_pid.h"

namespace cgov {

struct ProcessIdentity {
  PidStat stat;
  std::optional<uint32_t> uid;       // owner (real uid); unknown if status was unreadable
  std::optional<uint32_t> gid;       // its real gid; unknown likewise
  std::optional<uint32_t> loginuid;  // who logged in, surviving sudo/su; unknown or unset
  std::string user;                  // name of loginuid if set, else of uid; "" if neither known
  CgroupIdentity cgroup;
};

// Not thread-safe; one per thread.
class ProcessReader {
 public:
  explicit ProcessReader(FileReader* files) : files_(files) {}

  // NotFound when the pid does not exist (any more). A file other than stat that cannot be read
  // (hidepid, EACCES) leaves its fields unknown: that is not an error.
  Result<ProcessIdentity> Read(int pid);

  // /proc/PID/stat of every process; pids that vanish during the scan are skipped.
  std::vector<PidStat> ScanAll();

  // The name for uid from /etc/passwd (read once), else the number as text.
  std::string UserName(uint32_t uid);

 private:
  FileReader* files_;
  std::string buffer_;
  std::optional<std::map<uint32_t, std::string>> passwd_;
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_PROCESS_READER_H_
