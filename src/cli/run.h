// `cgov run [options] -- COMMAND [ARG]...`: run a job unchanged, sample while it runs, report.
#ifndef CGOV_CLI_RUN_H_
#define CGOV_CLI_RUN_H_

#include "app/run/run_options.h"
#include "core/status.h"

namespace cgov::cli {

// Exit status when the job succeeded but --fail-on's severity fired, or --fail-on-regression's
// limit was passed (CI gates).
inline constexpr int kExitFindingsGate = 3;

// Parses argv (argv[0] = "run") and validates every value before anything starts. Returns the
// options, or the usage error's message. `*help_exit` >= 0 means CLI11 already printed help or an
// error and the caller should exit with it.
Result<RunOptions> ParseRunOptions(int argc, char** argv, int* help_exit);

int RunRun(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_RUN_H_
