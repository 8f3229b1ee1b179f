// Whether this process may read other users' /proc/PID/environ, where a job names its project and
// team (CGOV_PROJECT, CGOV_TEAM, CGOV_TAGS). The kernel allows it to the same user, and to others
// only with CAP_SYS_PTRACE (proc(5): ptrace access mode PTRACE_MODE_READ_FSCREDS); root has it.
// Pure: a function of /proc/self/status's text.
#ifndef CGOV_TELEMETRY_ENVIRON_ACCESS_H_
#define CGOV_TELEMETRY_ENVIRON_ACCESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cgov {

inline constexpr int kCapSysPtrace = 19;  // linux/capability.h

struct EnvironAccess {
  bool others_readable = true;  // unknown status: assumed readable (nothing to warn about)
  std::optional<uint32_t> fs_uid;
  // Empty when others_readable; else what is lost and how to grant it, one sentence.
  std::string warning;
};

// From /proc/self/status: the filesystem uid (the 4th of "Uid:") and "CapEff:" (hex).
EnvironAccess EnvironAccessOf(std::string_view proc_self_status);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_ENVIRON_ACCESS_H_
