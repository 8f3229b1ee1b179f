#include "os/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace cgov {

bool IsTerminal(int fd) { return isatty(fd) == 1; }

bool TerminalWantsColor(int fd) {
  if (!IsTerminal(fd)) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::string_view(term) != "dumb";
}

}  // namespace cgov
