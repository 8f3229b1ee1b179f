// Runs a command (found on PATH, no shell) and captures what it prints, for inputs cgov reads
// from another tool (`cgov report --sacct`). Bounded: a command that runs past the timeout is
// killed, and output beyond the limit is an error, never a partial answer taken as whole.
#ifndef CGOV_OS_COMMAND_OUTPUT_H_
#define CGOV_OS_COMMAND_OUTPUT_H_

#include <chrono>
#include <string>
#include <vector>

#include "core/status.h"

namespace cgov {

struct CommandOutput {
  std::string out;  // stdout
  std::string err;  // stderr (its last 4 KiB)
};

// Ok only when the command exited 0. Errors name the command: not found (kNotFound), killed
// at the timeout, ended by a signal, or exited N (with the end of its stderr), or printed more
// than `max_bytes`.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout, size_t max_bytes);

}  // namespace cgov

#endif  // CGOV_OS_COMMAND_OUTPUT_H_
