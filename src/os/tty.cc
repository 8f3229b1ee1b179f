#include "os/tty.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>

#include <fmt/format.h>

namespace cgov {
namespace {

std::atomic<bool> g_stop{false};

void WriteAll(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

constexpr char kEnter[] = "\x1b[?1049h\x1b[?25l";  // alternate screen, cursor hidden
constexpr char kLeave[] = "\x1b[?25h\x1b[?1049l";

void OnStop(int) { g_stop = true; }

}  // namespace

Result<std::unique_ptr<TtySession>> TtySession::Open() {
  if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
    return InvalidArgument(
        "not a terminal: use --once (with --format text or json) in a pipe or a script");
  }
  std::unique_ptr<TtySession> s(new TtySession);
  if (::tcgetattr(STDIN_FILENO, &s->saved_) != 0) return IoError("tcgetattr failed");
  termios raw = s->saved_;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  ::tcsetattr(STDIN_FILENO, TCSANOW, &raw);
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  struct sigaction winch {};
  winch.sa_handler = [](int) {};  // interrupts the wait: the next frame is drawn at the new size
  sigemptyset(&winch.sa_mask);
  ::sigaction(SIGWINCH, &winch, nullptr);
  WriteAll(kEnter);
  return s;
}

TtySession::~TtySession() {
  WriteAll(kLeave);
  ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGWINCH}) ::signal(sig, SIG_DFL);
}

std::pair<int, int> TtySession::Size() const {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return {80, 24};
  return {ws.ws_col, ws.ws_row};
}

std::optional<char> TtySession::ReadKey(int timeout_ms) {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return std::nullopt;
  char c = 0;
  if (::read(STDIN_FILENO, &c, 1) != 1) return std::nullopt;
  return c;
}

void TtySession::Draw(std::string_view text, std::string_view footer) {
  const int rows = Size().second - 1;
  std::string out = "\x1b[H\x1b[2J";
  int line = 0;
  for (size_t at = 0; at < text.size() && line < rows;) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    if (line > 0) out += "\r\n";
    out.append(text.substr(at, end - at));
    ++line;
    at = end + 1;
  }
  out += fmt::format("\x1b[{};1H", rows + 1);
  out.append(footer);
  WriteAll(out);
}

bool TtySession::Stopped() const { return g_stop.load(); }

}  // namespace cgov
