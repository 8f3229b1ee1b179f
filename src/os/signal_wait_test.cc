#include "os/signal_wait.h"

#include <pthread.h>
#include <signal.h>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"

namespace cgov {
namespace {

// SIGUSR2 blocked in this thread for the test's life, and nothing left pending after it.
class BlockedSignal {
 public:
  BlockedSignal() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~BlockedSignal() {
    timespec none{};
    while (sigtimedwait(&set_, nullptr, &none) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  const sigset_t& set() const { return set_; }

 private:
  sigset_t set_, old_;
};

TEST(WaitForSignal, ASignalThatCameBeforeAPassedDeadlineStillCounts) {
  BlockedSignal blocked;
  FakeClock clock;  // stands still: the deadline below has passed
  ASSERT_EQ(pthread_kill(pthread_self(), SIGUSR2), 0);
  EXPECT_EQ(WaitForSignal(blocked.set(), clock.MonotonicNs() - 1, clock), SIGUSR2);
  EXPECT_EQ(WaitForSignal(blocked.set(), clock.MonotonicNs() - 1, clock), 0) << "taken once";
}

TEST(WaitForSignal, NoSignalReturnsZeroAtTheDeadline) {
  BlockedSignal blocked;
  FakeClock clock;  // 20 ms left by it, waited for real by sigtimedwait
  EXPECT_EQ(WaitForSignal(blocked.set(), clock.MonotonicNs() + 20'000'000, clock), 0);
}

}  // namespace
}  // namespace cgov
