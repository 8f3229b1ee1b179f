// Whether output to a file descriptor goes to a person's terminal that wants colour.
#ifndef CGOV_OS_TERMINAL_H_
#define CGOV_OS_TERMINAL_H_

namespace cgov {

// `fd` is a terminal.
bool IsTerminal(int fd);

// `fd` is a terminal, NO_COLOR is unset or empty (https://no-color.org) and TERM is not "dumb".
bool TerminalWantsColor(int fd);

}  // namespace cgov

#endif  // CGOV_OS_TERMINAL_H_
