// The one mapping from the argument parser's verdict to cgov's exit status: 0 after --help, 2 for
// every usage error (CLI11's own codes, 100 and up, never reach the shell; docs/run.md, "Exit
// status"). The help is wrapped at 100 columns; an error is said as cgov says its own
// ("cgov report: --since 7 days: ..."), with a hint where one helps: the nearest option to a
// mistyped one, quoting for a value with spaces.
#ifndef CGOV_CLI_USAGE_EXIT_H_
#define CGOV_CLI_USAGE_EXIT_H_

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "cli/command_table.h"

namespace cgov::cli {

inline constexpr size_t kHelpWidth = 100;

// `text` with each line broken at spaces to at most `width` columns (a longer word stands alone).
std::string WrapText(std::string_view text, size_t width);

// What a usage error says on stderr: "cgov CMD: what\n" and a hint line.
std::string UsageMessage(const CLI::App& app, const CLI::ParseError& e);

// --color auto|always|never on `app`: sets the process's ColorChoice (os/terminal.h) as parsed.
void AddColorFlag(CLI::App& app);

// Prints the help (wrapped) or the error and its hint; returns the exit status.
int UsageExit(CLI::App& app, const CLI::ParseError& e);

}  // namespace cgov::cli

#endif  // CGOV_CLI_USAGE_EXIT_H_
