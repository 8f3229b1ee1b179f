// A full-screen terminal session for `cgov top`, as a small ANSI layer (docs/top.md argues it
// over ncurses): the alternate screen, no echo and no line buffering while it lives, the cursor
// hidden; everything restored when it goes, and on SIGINT, SIGTERM and SIGHUP, which end the
// session (Stopped()) rather than the process, so the terminal is always left clean.
#ifndef CGOV_OS_TTY_H_
#define CGOV_OS_TTY_H_

#include <termios.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

class TtySession {
 public:
  // Fails unless stdin and stdout are terminals.
  static Result<std::unique_ptr<TtySession>> Open();
  ~TtySession();
  TtySession(const TtySession&) = delete;
  TtySession& operator=(const TtySession&) = delete;

  // The terminal's size now (SIGWINCH changes it).
  std::pair<int, int> Size() const;  // columns, rows
  // Waits up to `timeout_ms` for a key; nullopt when none came (or a signal interrupted).
  std::optional<char> ReadKey(int timeout_ms);
  // Replaces the screen with `text` (lines beyond the height are left out) and `footer` on the
  // last row.
  void Draw(std::string_view text, std::string_view footer);
  // A signal asked the session to end.
  bool Stopped() const;

 private:
  TtySession() = default;
  termios saved_{};
};

}  // namespace cgov

#endif  // CGOV_OS_TTY_H_
