// The `terminal` sink (docs/notifications.md): a notice about a user's process written to that
// user's logged-in terminals, as write(1) does. Opt-in (a sink of the file), never to a terminal
// whose owner said `mesg n`, and only what is safe to print (no escape sequences).
#ifndef CGOV_NOTIFY_TERMINAL_SINK_H_
#define CGOV_NOTIFY_TERMINAL_SINK_H_

#include <string>

#include "core/status.h"

namespace cgov {

inline constexpr char kDefaultUtmp[] = "/run/utmp";

// Writes `text` to every terminal `user` is logged in on according to `utmp_file`: character
// devices under /dev owned by the user, with group write permission (`mesg y`). Returns how
// many terminals it reached (0: the user has none open to messages). Not thread-safe (the utmp
// functions keep state): the notifier's thread alone calls it.
Result<int> WriteToUserTerminals(const std::string& utmp_file, const std::string& user,
                                 const std::string& text);

}  // namespace cgov

#endif  // CGOV_NOTIFY_TERMINAL_SINK_H_
