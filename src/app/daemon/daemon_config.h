// The files `cgov daemon`'s flags name, read into its options: the web server's users and TLS
// key pair, the budgets, notifications and policy files, the price catalog, and the Kubernetes
// node name when none was given. The command line (src/cli/daemon.cc) checks which flags go
// together; this reads and checks what the files say.
#ifndef CGOV_APP_DAEMON_DAEMON_CONFIG_H_
#define CGOV_APP_DAEMON_DAEMON_CONFIG_H_

#include <string>

#include "app/daemon/daemon_options.h"
#include "core/status.h"

namespace cgov {

// Paths as given on the command line ("" = not given).
struct DaemonFiles {
  std::string basic_auth, web_config, tls_cert, tls_key;  // with --listen (o->http set)
  std::string budgets, notify, policy, slurm_accounting;
  std::string price_text;   // --price-per-gpu-hour, applied with o->catalog_path
  std::string kube_labels;  // --kube-labels (not a file: parsed here with the rest of --kubernetes)
};

// Fills `o` from the files; the first error names its flag, file and line. REQUIRES: o->kube
// and o->http, when set, hold what the flags gave (the listen address parsed).
Status LoadDaemonFiles(const DaemonFiles& files, DaemonOptions* o);

// --budgets' file, as read at start and on SIGHUP.
Result<BudgetFile> ReadBudgetsFile(const std::string& path);
// --slurm-accounting's file (sacct --parsable2 or scontrol output), as read at start and on
// SIGHUP.
Result<SlurmJobs> ReadSlurmAccountingFile(const std::string& path);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_CONFIG_H_
