// `cgov daemon --db PATH [--interval 30s] [--retain 90d]`: records every GPU and every GPU
// process of this host into a history database until SIGINT/SIGTERM.
#ifndef CGOV_CLI_DAEMON_H_
#define CGOV_CLI_DAEMON_H_

namespace cgov::cli {

int RunDaemon(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_DAEMON_H_
