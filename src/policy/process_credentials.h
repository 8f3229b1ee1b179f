// Who a GPU process is, as a policy needs it: start time (with the pid, one process over time),
// real uid and the names of its groups. Read from /proc/PID/stat and /proc/PID/status under a
// FileReader's root; group names from its /etc/group.
#ifndef CGOV_POLICY_PROCESS_CREDENTIALS_H_
#define CGOV_POLICY_PROCESS_CREDENTIALS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "os/file_reader.h"

namespace cgov {

struct ProcessCredentials {
  uint64_t start_ticks = 0;
  uint32_t uid = 0;
  std::vector<uint32_t> gids;  // the real gid first, then the supplementary ones
};

Result<ProcessCredentials> ReadCredentials(FileReader& files, uint32_t pid);

// /etc/group: gid -> name (malformed lines skipped).
std::map<uint32_t, std::string> ParseGroupFile(std::string_view text);

// The "Gid:" (real) and "Groups:" lines of /proc/PID/status.
std::vector<uint32_t> ParseStatusGids(std::string_view status);

}  // namespace cgov

#endif  // CGOV_POLICY_PROCESS_CREDENTIALS_H_
