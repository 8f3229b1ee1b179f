// The subcommands of cgov as a table: name, one-line help, handler. main() only dispatches.
#ifndef CGOV_CLI_COMMAND_TABLE_H_
#define CGOV_CLI_COMMAND_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

namespace cgov::cli {

// Exit statuses of cgov's own commands (cgov run passes the job's through instead).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // something the user asked for cannot work
inline constexpr int kExitUsage = 2;    // bad flags or arguments

struct Command {
  const char* name;
  const char* summary;
  // argv[0] is the subcommand's name; returns the exit status.
  int (*run)(int argc, char** argv);
};

const std::vector<Command>& Commands();

// Levenshtein distance: insertions, deletions and substitutions from `a` to `b`.
size_t EditDistance(std::string_view a, std::string_view b);

// The closest command names to `typed` (edit distance <= 2 or a prefix), best first.
std::vector<std::string> SuggestCommands(std::string_view typed);

// Entry point behind main(): dispatches argv[1].
int Main(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_COMMAND_TABLE_H_
