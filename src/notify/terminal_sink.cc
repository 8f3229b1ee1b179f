#include "notify/terminal_sink.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utmpx.h>

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "core/text.h"

namespace cgov {
namespace {

// The user's terminal lines ("pts/3") in the utmp file.
std::set<std::string> LinesOf(const std::string& utmp_file, const std::string& user) {
  std::set<std::string> lines;
  if (utmpxname(utmp_file.c_str()) != 0) return lines;
  setutxent();
  while (const utmpx* u = getutxent()) {
    if (u->ut_type != USER_PROCESS) continue;
    const std::string name(u->ut_user, strnlen(u->ut_user, sizeof(u->ut_user)));
    const std::string line(u->ut_line, strnlen(u->ut_line, sizeof(u->ut_line)));
    // A line is a device name under /dev: no way out of it.
    if (name == user && !line.empty() && line.find("..") == std::string::npos) lines.insert(line);
  }
  endutxent();
  return lines;
}

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return false;  // a full terminal (non-blocking) is skipped, not waited on
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<int> WriteToUserTerminals(const std::string& utmp_file, const std::string& user,
                                 const std::string& text) {
  // A regular file: the utmp functions would block opening a FIFO.
  struct stat utmp {};
  if (stat(utmp_file.c_str(), &utmp) != 0 || access(utmp_file.c_str(), R_OK) != 0) {
    return Unavailable(fmt::format("{}: {}", utmp_file, std::strerror(errno)));
  }
  if (!S_ISREG(utmp.st_mode)) {
    return InvalidArgument(fmt::format("{}: not a regular file (a utmp file is one)", utmp_file));
  }
  passwd pw{};
  passwd* found = nullptr;
  char buffer[4096];
  if (getpwnam_r(user.c_str(), &pw, buffer, sizeof(buffer), &found) != 0 || found == nullptr) {
    return 0;  // not a local user: no terminal of theirs here
  }
  // Terminals translate "\n" as they are set to; "\r\n" is right on every one.
  std::string out = "\r\n";
  for (size_t at = 0; at <= text.size();) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    out += SafeText(std::string_view(text).substr(at, eol - at)) + "\r\n";
    at = eol + 1;
  }
  int reached = 0;
  for (const std::string& line : LinesOf(utmp_file, user)) {
    const std::string path = "/dev/" + line;
    const int fd = open(path.c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    const bool ours = fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_uid == pw.pw_uid &&
                      (st.st_mode & S_IWGRP) != 0;  // mesg y
    if (ours && WriteAll(fd, out)) ++reached;
    close(fd);
  }
  return reached;
}

}  // namespace cgov
