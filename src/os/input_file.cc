#include "os/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cgov {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

Status OpenError(const std::string& path, std::string_view what, int e) {
  const std::string message = fmt::format("{} {}: {}", what, path, std::strerror(e));
  if (e == ENOENT) return NotFound(message);
  if (e == EACCES || e == EPERM) return PermissionDenied(message);
  return IoError(message);
}

}  // namespace

Result<std::string> ReadInputFile(const std::string& path, size_t max_bytes,
                                  std::string_view what) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return OpenError(path, what, errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return OpenError(path, what, e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(fmt::format("{} {}: {}, not a file", what, path, KindOf(st.st_mode)));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return InvalidArgument(fmt::format("{} {}: {} bytes, more than the {} this file may have", what,
                                       path, st.st_size, max_bytes));
  }
  // Memory for what the file holds, not for the limit (issue 46, 5: a 100-byte bill cost 1 GiB):
  // its size at fstat and one byte more, grown while the file still has more (one that grew
  // since fstat, or a /proc file, whose size reads 0), up to max_bytes + 1 so that a file over
  // the limit is caught.
  const size_t limit = max_bytes + 1;
  std::string text(std::min(static_cast<size_t>(st.st_size) + 1, limit), '\0');
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (text.size() >= limit) break;
      text.resize(std::min(limit, std::max(text.size() * 2, size_t{4096})));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return OpenError(path, what, e);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  if (got > max_bytes) {
    return InvalidArgument(
        fmt::format("{} {}: more than the {} bytes this file may have", what, path, max_bytes));
  }
  text.resize(got);
  return text;
}

Status CheckRegularOrAbsent(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::Ok();  // absent (or the opener will say)
  if (S_ISREG(st.st_mode)) return Status::Ok();
  return InvalidArgument(
      fmt::format("{} {}: {}, not a database file", what, path, KindOf(st.st_mode)));
}

}  // namespace cgov
