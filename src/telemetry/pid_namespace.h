// PID namespaces: the driver reports every GPU process by its pid in the *initial* namespace (the
// host's), whatever namespace cgov runs in. Inside a container without the host's PID namespace
// those pids are not in the container's /proc — or worse, name another process there. These
// helpers tell when that is the case and translate between the two numberings through the
// host's /proc (its /proc/PID/status "NSpid:" line lists a process's pid in each namespace it is
// in, outermost first).
#ifndef CGOV_TELEMETRY_PID_NAMESPACE_H_
#define CGOV_TELEMETRY_PID_NAMESPACE_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "os/file_reader.h"

namespace cgov {

// The inode of the kernel's initial PID namespace (PROC_PID_INIT_INO, fixed since Linux 3.8).
inline constexpr uint64_t kInitialPidNamespaceInode = 0xEFFFFFFCu;

// "NSpid:\t48213\t7" -> {48213, 7}; empty when the line is absent (kernels before 4.1). Pure.
std::vector<int> ParseNsPids(std::string_view status);

// The inode in a /proc/PID/ns/pid link target, "pid:[4026531836]" -> 4026531836. Pure.
std::optional<uint64_t> ParsePidNamespaceLink(std::string_view target);

// The PID namespace cgov itself runs in (readlink /proc/self/ns/pid of the real /proc);
// nullopt when unreadable.
std::optional<uint64_t> OwnPidNamespaceInode();

// The pid, in the namespace of the procfs under `host` (the host's /proc mounted into a
// container), of the process that is `local_pid` in its own innermost namespace and started at
// `start_ticks` (/proc/PID/stat field 22, the same in every namespace). nullopt when no process
// matches: then `host` is not a procfs of an outer namespace (or the process has exited).
std::optional<int> FindOuterPid(FileReader& host, int local_pid, uint64_t start_ticks);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_PID_NAMESPACE_H_
