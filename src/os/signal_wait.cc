#include "os/signal_wait.h"

#include <time.h>

#include <algorithm>
#include <cerrno>

namespace cgov {

int WaitForSignal(const sigset_t& signals, int64_t deadline_ns, Clock& clock) {
  for (;;) {
    const int64_t left = std::max<int64_t>(0, deadline_ns - clock.MonotonicNs());
    timespec ts{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
    const int sig = sigtimedwait(&signals, nullptr, &ts);
    if (sig > 0) return sig;
    // A poll (left 0) or a wait that timed out: nothing came by the deadline. Only an
    // interrupted wait (EINTR) waits on; polling after every timeout cost each tick a syscall.
    if (left == 0 || errno == EAGAIN) return 0;
  }
}

}  // namespace cgov
