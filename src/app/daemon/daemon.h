// `cgov daemon`'s composition root: the core on the machine's clock and files (under
// --host-root), with the modules the command line asked for.
#ifndef CGOV_APP_DAEMON_DAEMON_H_
#define CGOV_APP_DAEMON_DAEMON_H_

#include <signal.h>

#include "app/daemon/daemon_modules.h"
#include "app/daemon/daemon_options.h"
#include "core/status.h"

namespace cgov {

// Records until SIGINT or SIGTERM (SIGHUP reloads), then stops cleanly. An error at start
// (the history, a module's source, the server) stops it before it records anything; the
// caller says it. `modules`: every kind, configured from the command line (the enabled ones
// run). REQUIRES: `stop`'s signals are blocked in every thread.
Status RunDaemon(DaemonOptions options, DaemonModuleKinds modules, const sigset_t& stop);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_H_
