#include "os/clock.h"

#include <time.h>

namespace cgov {

int64_t ClockNs(int clock_id) {
  timespec ts{};
  clock_gettime(static_cast<clockid_t>(clock_id), &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t SystemClock::MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }
int64_t SystemClock::WallNs() { return ClockNs(CLOCK_REALTIME); }
int64_t SystemClock::ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace cgov
