// Which watched processes have exited: how a cache keyed by pid learns that a pid may now name
// another process (PID reuse), without reading /proc for every process every tick. Linux's
// pidfds (pidfd_open(2), 5.3+) become readable when their process exits; one poll(2) checks all.
// Not thread-safe.
#ifndef CGOV_OS_PROCESS_EXIT_WATCH_H_
#define CGOV_OS_PROCESS_EXIT_WATCH_H_

#include <cstdint>
#include <memory>
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

}  // namespace cgov

#endif  // CGOV_OS_PROCESS_EXIT_WATCH_H_
