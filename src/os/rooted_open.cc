#include "os/rooted_open.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/text.h"

// Linux 5.6's openat2, the same number on every architecture: older libc headers (Debian 11's,
// where the portable build compiles) lack it.
#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace cgov {
namespace {

// The calling thread's file-system ids set to an owner's for as long as it lives. setfsuid(2)
// and setfsgid(2) are per thread (glibc's wrappers are the bare system calls), and moving fsuid
// from 0 to another uid drops the thread's CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH until it
// moves back; a process without CAP_SETUID stays as it was.
class FsIdsAs {
 public:
  explicit FsIdsAs(std::optional<FileOwner> as) {
    if (!as) return;
    old_gid_ = setfsgid(as->gid);
    old_uid_ = setfsuid(as->uid);
    active_ = true;
  }
  ~FsIdsAs() {
    if (!active_) return;
    setfsuid(static_cast<uid_t>(old_uid_));
    setfsgid(static_cast<gid_t>(old_gid_));
  }
  FsIdsAs(const FsIdsAs&) = delete;
  FsIdsAs& operator=(const FsIdsAs&) = delete;

 private:
  bool active_ = false;
  int old_uid_ = 0;
  int old_gid_ = 0;
};

std::string Why(int err) {
  switch (err) {
    case ELOOP:
      return "a symlink (not followed)";
    case EXDEV:
      return "it leaves the process's root (refused)";
    case EACCES:
    case EPERM:
      return "the process's owner may not read it";
    default:
      return std::strerror(err);
  }
}

}  // namespace

OpenedFile& OpenedFile::operator=(OpenedFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

OpenedFile::~OpenedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<OpenedFile> OpenInRoot(const std::string& root, std::string_view path,
                              std::optional<FileOwner> as) {
  const std::string shown = SafeText(path);
  // The root itself with the daemon's rights (reading /proc/PID/root is a ptrace check), then
  // everything under it with the owner's.
  OpenedFile dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd() < 0) {
    const int e = errno;
    if (e == ENOENT) return NotFound(shown);
    return InvalidArgument(
        fmt::format("{}: not read: its root {}: {}", shown, SafeText(root), std::strerror(e)));
  }
  open_how how{};
  how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const std::string relative(path);
  int fd = -1;
  int err = 0;
  {
    FsIdsAs rights(as);
    fd = static_cast<int>(syscall(SYS_openat2, dir.fd(), relative.c_str(), &how, sizeof how));
    err = errno;
  }
  if (fd < 0) {
    if (err == ENOENT || err == ENOTDIR) return NotFound(shown);
    if (err == ENOSYS) {
      return Unavailable(
          fmt::format("{}: not read: this kernel has no openat2 (Linux 5.6+), so it cannot be "
                      "opened inside the process's root",
                      shown));
    }
    return InvalidArgument(fmt::format("{}: not read: {}", shown, Why(err)));
  }
  OpenedFile file(fd);
  struct stat st {};
  if (fstat(file.fd(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument(fmt::format("{}: not read: not a regular file", shown));
  }
  return file;
}

}  // namespace cgov
