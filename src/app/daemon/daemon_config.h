// The files `cgov daemon`'s core flags name, read into its options (the price catalog and
// --price-per-gpu-hour, --kube-labels), and the one way a flag's file is read. A module reads
// its own files in its kind's Configure (daemon_module.h). The command line (src/cli/daemon.cc)
// checks which core flags go together; this reads and checks what the files say.
#ifndef CGOV_APP_DAEMON_DAEMON_CONFIG_H_
#define CGOV_APP_DAEMON_DAEMON_CONFIG_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "app/daemon/daemon_options.h"
#include "core/status.h"
#include "os/env.h"

namespace cgov {

// A file a flag names, whole, through `env` (Env::Default() at start; a module's context's on
// SIGHUP): a regular file of at most `max_bytes` (a FIFO, a device or a directory is refused,
// never read). The error says "cgov daemon: FLAG PATH: why".
Result<std::string> ReadDaemonFile(Env& env, const std::string& path, std::string_view flag,
                                   size_t max_bytes = 1 << 20);

// --price-per-gpu-hour (`price_text`, "" = not given) with --price-catalog, and --kube-labels
// (`kube_labels`, "" = the default), into `o`; the first error names its flag, file and line.
Status LoadCoreFiles(const std::string& price_text, const std::string& kube_labels,
                     DaemonOptions* o);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_CONFIG_H_
