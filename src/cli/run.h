// `cgov run [options] -- COMMAND [ARG]...`: run a job unchanged, sample while it runs, report.
#ifndef CGOV_CLI_RUN_H_
#define CGOV_CLI_RUN_H_

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tags.h"

namespace cgov::cli {

struct RunOptions {
  std::string out_dir;  // "" = ./cgov-runs/<UTC stamp>-<command name>
  bool force = false;
  std::chrono::milliseconds interval{1000};
  Tags tags;
  bool quiet = false;
  std::string nvml_lib;
  std::string host_root = "/";
  std::vector<std::string> command;
};

// Parses argv (argv[0] = "run"). On a usage error returns the message; `*exit_code` is set to 0
// when --help was printed (and the caller should stop).
Result<RunOptions> ParseRunOptions(int argc, char** argv, int* help_exit);

// "python" from "/usr/bin/python3.11"-like paths, made safe for a directory name.
std::string CommandLabel(const std::string& argv0);

// Creates (or, with force, reuses) the output directory. The error says what to do.
Result<std::string> PrepareOutputDir(const RunOptions& options, int64_t now_wall_ns);

int RunRun(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_RUN_H_
