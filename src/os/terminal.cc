#include "os/terminal.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace cgov {

bool IsTerminal(int fd) { return isatty(fd) == 1; }

void WriteStderr(std::string_view text) {
  std::fflush(stderr);  // after anything stdio holds for it
  while (!text.empty()) {
    const ssize_t n = write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

bool TerminalWantsColor(int fd) {
  if (!IsTerminal(fd)) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::string_view(term) != "dumb";
}

}  // namespace cgov
