// A GPU process as a policy sees it (PolicyProcess), from what the host says of it: its uids and
// start time (/proc/PID/status and stat), its owner's and groups' names (the host's /etc/passwd
// and /etc/group) and its executable. The daemon's policy module and `cgov top --policy` read a
// process the same way, so the policy top shows is the one the daemon applies.
#ifndef CGOV_POLICY_POLICY_PROCESS_H_
#define CGOV_POLICY_POLICY_PROCESS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "os/file_reader.h"
#include "policy/policy_engine.h"
#include "policy/process_credentials.h"

namespace cgov {

// The host's /proc as seen from here: "/proc", or under --host-root (a host mounted into a
// container).
std::string ProcRootUnder(const std::string& host_root);

// The host's user and group names by id.
struct HostAccounts {
  std::map<uint32_t, std::string> users, groups;
};

// /etc/passwd and /etc/group through `files`; a file that cannot be read leaves its names empty
// (no policy scoped by them matches anyone) and is said in `problems`.
HostAccounts ReadHostAccounts(FileReader& files, std::vector<std::string>* problems);

// `p`'s uids, start time, owner (by the real uid: not the login user the reports name) and
// group names from `c`.
void ApplyCredentials(const ProcessCredentials& c, const HostAccounts& accounts, PolicyProcess* p);

// What a policy needs of process `pid` read now (credentials through `files`, the executable
// under `proc_root`); its idle-held and used-GPU verdicts are the caller's. Without readable
// credentials the identity is unknown (no uid), which no policy takes.
PolicyProcess ReadPolicyProcess(FileReader& files, const std::string& proc_root, uint32_t pid,
                                const HostAccounts& accounts);

}  // namespace cgov

#endif  // CGOV_POLICY_POLICY_PROCESS_H_
