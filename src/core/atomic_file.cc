#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace cgov {
namespace {

Status Fail(std::string_view step, const std::string& path, int err) {
  return IoError(fmt::format("cannot write {}: {}: {}", path, step, std::strerror(err)));
}

Status WriteAll(int fd, std::string_view content) {
  while (!content.empty()) {
    ssize_t n = write(fd, content.data(), content.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kIoError, std::strerror(errno));
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

// 0666 less the process's umask, read without changing it (umask(2) would, for every thread).
mode_t NewFileMode() {
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char text[4096];
    const ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n > 0) {
      text[n] = '\0';
      if (const char* at = std::strstr(text, "\nUmask:\t")) {
        return 0666 & ~static_cast<mode_t>(std::strtoul(at + 8, nullptr, 8));
      }
    }
  }
  return 0644;  // a kernel before 4.7: the usual umask 022
}

// Writes through whatever is at `path` (not a regular file or directory).
Status WriteThrough(const std::string& path, std::string_view content) {
  // O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of blocking; then blocking writes.
  const int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Fail(errno == ENXIO ? "open (a FIFO with no reader)" : "open", path, errno);
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) {
    const int err = errno;
    close(fd);
    return Fail("truncate", path, err);
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  Status written = WriteAll(fd, content);
  const int err = errno;
  if (close(fd) != 0 && written.ok()) return Fail("close", path, errno);
  return written.ok() ? Status::Ok() : Fail("write", path, err);
}

}  // namespace

Status SyncDirectory(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int synced = fd < 0 ? -1 : fsync(fd);
  const int err = errno;
  if (fd >= 0) close(fd);
  if (synced == 0) return Status::Ok();
  return IoError(fmt::format("cannot sync directory {}: {}", dir, std::strerror(err)));
}

Status WriteFileAtomically(const std::string& path, std::string_view content, bool sync_directory) {
  struct stat existing {};
  mode_t mode = 0;
  if (lstat(path.c_str(), &existing) == 0) {
    if (S_ISDIR(existing.st_mode)) return Fail("open", path, EISDIR);
    if (!S_ISREG(existing.st_mode)) return WriteThrough(path, content);
    mode = existing.st_mode & 07777;
  } else {
    mode = NewFileMode();
  }
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string temp = path + ".tmp-XXXXXX";
  int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Fail("create temporary file", path, errno);
  auto abandon = [&](std::string_view step, int err) {
    close(fd);
    unlink(temp.c_str());
    return Fail(step, path, err);
  };
  if (fchmod(fd, mode) != 0) return abandon("chmod", errno);
  if (Status s = WriteAll(fd, content); !s.ok()) return abandon("write", errno);
  if (fsync(fd) != 0) return abandon("fsync", errno);
  if (close(fd) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return Fail("close", path, err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(temp.c_str());
    return Fail("rename", path, err);
  }
  // The rename is durable once the directory is; a failure here leaves the new content in place.
  if (sync_directory) SyncDirectory(dir);
  return Status::Ok();
}

}  // namespace cgov
