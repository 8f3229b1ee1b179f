// Whether output to a file descriptor goes to a person's terminal that wants colour, and
// writing to stderr whatever becomes of it.
#ifndef CGOV_OS_TERMINAL_H_
#define CGOV_OS_TERMINAL_H_

#include <string_view>

namespace cgov {

// Writes `text` to stderr and ignores a failure: stderr redirected to a file on a full disk
// (or past `ulimit -f`), or a pipe whose reader has gone, must not end cgov (fmt::print throws
// there, which would abort `cgov run` and lose the job's exit status).
void WriteStderr(std::string_view text);

// `fd` is a terminal.
bool IsTerminal(int fd);

// `fd` is a terminal, NO_COLOR is unset or empty (https://no-color.org) and TERM is not "dumb".
bool TerminalWantsColor(int fd);

}  // namespace cgov

#endif  // CGOV_OS_TERMINAL_H_
