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

// --color: auto (the default: the rules below), always, never.
enum class ColorChoice { kAuto, kAlways, kNever };
void SetColorChoice(ColorChoice choice);  // for the process; set once, from the command line
// "auto", "always", "never"; false for anything else.
bool ParseColorChoice(std::string_view text, ColorChoice* choice);

// Colour on `fd`: --color always or never when given; else NO_COLOR set and not empty
// (https://no-color.org) says no, CLICOLOR_FORCE set and not "0" says yes (even into a pipe, as
// CI logs that render ANSI want), and otherwise `fd` must be a terminal whose TERM is not "dumb".
bool TerminalWantsColor(int fd);

}  // namespace cgov

#endif  // CGOV_OS_TERMINAL_H_
