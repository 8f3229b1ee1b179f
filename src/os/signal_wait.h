// Waiting for a signal until a deadline: the daemon's sleep between ticks, which SIGTERM, SIGINT
// and SIGHUP end at once.
#ifndef CGOV_OS_SIGNAL_WAIT_H_
#define CGOV_OS_SIGNAL_WAIT_H_

#include <signal.h>

#include <cstdint>

#include "os/clock.h"

namespace cgov {

// Waits until `deadline_ns` of `clock`'s monotonic time or one of `signals` (blocked in every
// thread); the signal, or 0 at the deadline. A signal that arrived before the call counts even
// when the deadline has passed (a tick that overran its interval on a slow driver): ignored then,
// a daemon whose every tick overran could not be stopped.
int WaitForSignal(const sigset_t& signals, int64_t deadline_ns, Clock& clock);

}  // namespace cgov

#endif  // CGOV_OS_SIGNAL_WAIT_H_
