// Time behind a seam, so sampling and rate math can be tested with a clock the test moves.
#ifndef CGOV_OS_CLOCK_H_
#define CGOV_OS_CLOCK_H_

#include <cstdint>

namespace cgov {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds of a monotonic clock (CLOCK_MONOTONIC): for intervals and rates only.
  virtual int64_t MonotonicNs() = 0;
  // Nanoseconds since the Unix epoch (CLOCK_REALTIME): for timestamps people read.
  virtual int64_t WallNs() = 0;
  // Nanoseconds of CPU the calling thread has spent (CLOCK_THREAD_CPUTIME_ID): for charging
  // work its CPU rather than the wall time it took on a busy host.
  virtual int64_t ThreadCpuNs() = 0;
};

// The machine's clocks. Thread-safe.
class SystemClock : public Clock {
 public:
  int64_t MonotonicNs() override;
  int64_t WallNs() override;
  int64_t ThreadCpuNs() override;
};

// Nanoseconds of one of the kernel's clocks (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...):
// SystemClock's reads, and the benches'. Everything else reads the clock through the Env.
int64_t ClockNs(int clock_id);

}  // namespace cgov

#endif  // CGOV_OS_CLOCK_H_
