// Who a GPU process is, as a policy needs it: start time (with the pid, one process over time),
// its uids (real, effective, saved; login), the names of its groups, and its executable. Read
// from /proc/PID/{stat,status,loginuid} under a FileReader's root; group names from its
// /etc/group.
#ifndef CGOV_POLICY_PROCESS_CREDENTIALS_H_
#define CGOV_POLICY_PROCESS_CREDENTIALS_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "os/file_reader.h"

namespace cgov {

struct ProcessCredentials {
  uint64_t start_ticks = 0;
  uint32_t uid = 0;   // real: the process's owner
  uint32_t euid = 0;  // effective: whose rights it acts with (0 for a setuid-root program)
  uint32_t suid = 0;  // saved: rights it may take back
  std::optional<uint32_t> loginuid;  // who logged in (survives su/sudo); for the record only
  std::vector<uint32_t> gids;        // the real gid first, then the supplementary ones
};

Result<ProcessCredentials> ReadCredentials(FileReader& files, uint32_t pid);

// The real, effective and saved uids of a /proc/PID/status ("Uid:\treal\teffective\tsaved\tfs").
Result<std::array<uint32_t, 3>> ParseStatusUids(std::string_view status);

// What would give a process root's rights, read from its /proc/PID/status: its uids (real,
// effective, saved, file-system), its capability sets (an unreadable set counts as every
// capability), `text` as a record shows them, and `root_rights`: why it has root's rights
// ("" when none: no uid of 0, no capability effective, permitted or ambient).
struct StatusRights {
  std::vector<uint32_t> uids;
  uint64_t cap_eff = 0, cap_prm = 0, cap_amb = 0;
  std::string text;
  std::string root_rights;
};
StatusRights ParseStatusRights(std::string_view status);

// The executable a process runs, and whether its owner could have put it where it is: what an
// allow-list may trust, unlike the process name (prctl, `exec -a`). Trusted when the file is
// owned by root and writable by no one else, and so is the directory it is in as the process
// sees it (through /proc/PID/root: a container's own paths). `proc_root`: the host's /proc
// ("/proc", or under --host-root).
struct ProcessExecutable {
  std::string path;  // "" when it cannot be read
  bool trusted = false;
};
ProcessExecutable ReadExecutable(const std::string& proc_root, uint32_t pid);

// /etc/group: gid -> name (malformed lines skipped).
std::map<uint32_t, std::string> ParseGroupFile(std::string_view text);

// The "Gid:" (real) and "Groups:" lines of /proc/PID/status.
std::vector<uint32_t> ParseStatusGids(std::string_view status);

}  // namespace cgov

#endif  // CGOV_POLICY_PROCESS_CREDENTIALS_H_
