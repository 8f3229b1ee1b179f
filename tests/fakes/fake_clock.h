// A clock for tests (os/clock.h's seam) that moves only when the test moves it.
#ifndef CGOV_TESTS_FAKES_FAKE_CLOCK_H_
#define CGOV_TESTS_FAKES_FAKE_CLOCK_H_

#include <cstdint>

#include "os/clock.h"

namespace cgov {

// A clock that moves only when told. Not thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t mono_ns = 1'000'000'000, int64_t wall_ns = 1'700'000'000'000'000'000)
      : mono_ns_(mono_ns), wall_ns_(wall_ns) {}
  int64_t MonotonicNs() override { return mono_ns_; }
  int64_t WallNs() override { return wall_ns_; }
  int64_t ThreadCpuNs() override { return cpu_ns_; }
  void AdvanceNs(int64_t ns) {
    mono_ns_ += ns;
    wall_ns_ += ns;
  }
  void AdvanceCpuNs(int64_t ns) { cpu_ns_ += ns; }

 private:
  int64_t mono_ns_;
  int64_t wall_ns_;
  int64_t cpu_ns_ = 0;
};

// The machine's clocks, `ahead_ns` later: time that runs for real, from further on. For code that
// waits for real (a worker's sleep) on a deadline the test wants already reached. Thread-safe.
class AheadClock : public Clock {
 public:
  explicit AheadClock(int64_t ahead_ns) : ahead_ns_(ahead_ns) {}
  int64_t MonotonicNs() override { return real_.MonotonicNs() + ahead_ns_; }
  int64_t WallNs() override { return real_.WallNs() + ahead_ns_; }
  int64_t ThreadCpuNs() override { return real_.ThreadCpuNs(); }

 private:
  SystemClock real_;
  const int64_t ahead_ns_;
};

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_CLOCK_H_
