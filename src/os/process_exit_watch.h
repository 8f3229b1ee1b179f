// Which watched processes have exited: how a cache keyed by pid learns that a pid may now name
// another process (PID reuse), without reading /proc for every process every tick. Linux's
// pidfds (pidfd_open(2), 5.3+) become readable when their process exits; one epoll set of them
// tells the exited ones, at a cost that does not grow with the processes watched.
// Not thread-safe.
#ifndef CGOV_OS_PROCESS_EXIT_WATCH_H_
#define CGOV_OS_PROCESS_EXIT_WATCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cgov {

class ProcessExitWatch {
 public:
  virtual ~ProcessExitWatch() = default;
  // Watches the process that holds `pid` now. False when it cannot (gone already, no pidfd
  // support): then its exit cannot be told, and the caller must not rely on it.
  virtual bool Watch(uint32_t pid) = 0;
  // Stops watching `pid` (no-op when not watched).
  virtual void Forget(uint32_t pid) = 0;
  // The watched pids whose process has exited since it was watched; they are no longer watched.
  virtual std::vector<uint32_t> TakeExited() = 0;
};

// The pidfd watch of this PID namespace's processes. REQUIRES: the pids the caller passes are of
// this process's PID namespace (not read from another /proc mount).
std::unique_ptr<ProcessExitWatch> NewPidfdExitWatch();

// Whether the procfs at `proc_dir` (a host's /proc mounted under --host-root, as the shipped
// DaemonSet mounts it with hostPID) numbers this process's PID namespace: its `self` names this
// process's pid. Then its pids are pidfd_open's, and a watch may tell their exits. False for a
// directory of captured files, or another namespace's procfs (where `self` names no process).
bool ProcIsThisPidNamespace(const std::string& proc_dir);

}  // namespace cgov

#endif  // CGOV_OS_PROCESS_EXIT_WATCH_H_
