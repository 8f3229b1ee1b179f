// `cgov daemon --db PATH [--interval 30s] [--retain 90d]`: records every GPU and every GPU
// process of this host into a history database until SIGINT/SIGTERM.
#ifndef CGOV_CLI_DAEMON_H_
#define CGOV_CLI_DAEMON_H_

#include "app/daemon/daemon_modules.h"
#include "app/daemon/daemon_options.h"
#include "core/status.h"

namespace cgov::cli {

int RunDaemon(int argc, char** argv);

// `cgov daemon`'s command line, typed: the core's options, and the module kinds given, each
// configured from its own flags.
struct DaemonCommandLine {
  DaemonOptions options;
  DaemonModuleKinds modules;
};

// The core's flags and each kind's (under its heading of --help), every one also read from the
// environment (CGOV_ and its name); the core's typed and its files read, then each kind
// configured in turn. Sets the process's log level and format. On --help or a usage error,
// *help_exit is the exit status (the help or the error printed); otherwise the error names the
// flag, and the file and line.
Result<DaemonCommandLine> ParseDaemonCommandLine(int argc, char** argv, DaemonModuleKinds kinds,
                                                 int* help_exit);

}  // namespace cgov::cli

#endif  // CGOV_CLI_DAEMON_H_
