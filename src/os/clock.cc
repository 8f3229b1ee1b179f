#include "os/clock.h"

#include <time.h>

namespace cgov {
namespace {

int64_t Now(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int64_t SystemClock::MonotonicNs() { return Now(CLOCK_MONOTONIC); }
int64_t SystemClock::WallNs() { return Now(CLOCK_REALTIME); }

}  // namespace cgov
