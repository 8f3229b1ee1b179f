// The one mapping from the argument parser's verdict to cgov's exit status: 0 after --help, 2 for
// every usage error (CLI11's own codes, 100 and up, never reach the shell; docs/run.md, "Exit
// status").
#ifndef CGOV_CLI_USAGE_EXIT_H_
#define CGOV_CLI_USAGE_EXIT_H_

#include <CLI/CLI.hpp>

#include "cli/command_table.h"

namespace cgov::cli {

// Prints what CLI11 prints (the help, or the error and a hint) and returns the exit status.
inline int UsageExit(const CLI::App& app, const CLI::ParseError& e) {
  return app.exit(e) == 0 ? kExitOk : kExitUsage;
}

}  // namespace cgov::cli

#endif  // CGOV_CLI_USAGE_EXIT_H_
