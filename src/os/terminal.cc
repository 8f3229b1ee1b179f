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

namespace {
ColorChoice g_color = ColorChoice::kAuto;
}  // namespace

void SetColorChoice(ColorChoice choice) { g_color = choice; }

bool ParseColorChoice(std::string_view text, ColorChoice* choice) {
  if (text == "auto")
    *choice = ColorChoice::kAuto;
  else if (text == "always")
    *choice = ColorChoice::kAlways;
  else if (text == "never")
    *choice = ColorChoice::kNever;
  else
    return false;
  return true;
}

bool TerminalWantsColor(int fd) {
  if (g_color != ColorChoice::kAuto) return g_color == ColorChoice::kAlways;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* force = std::getenv("CLICOLOR_FORCE");
  if (force != nullptr && force[0] != '\0' && std::string_view(force) != "0") return true;
  if (!IsTerminal(fd)) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::string_view(term) != "dumb";
}

}  // namespace cgov
