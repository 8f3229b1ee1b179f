// A path another process named, opened as that process sees it and with its owner's rights: the
// one way cgov opens a file a user's process chose (docs/security.md, "Files a process names").
//
// Every component is resolved inside the process's root (openat2 RESOLVE_IN_ROOT: "..", an
// absolute symlink and a chroot's "/../../.." all stop at that root, never at the daemon's), no
// magic link (/proc/PID/fd/N, /proc/self/root) is followed, the last component is never a
// symlink, and the open runs with the owner's file-system uid and gid (setfsuid/setfsgid on the
// calling thread only, put back before returning), so a root daemon reads only what the owner
// could have read. A daemon without CAP_SETUID (the systemd unit's DynamicUser) keeps its own,
// smaller, rights. Never blocks on a FIFO or a device: non-blocking, regular files only.
#ifndef CGOV_OS_ROOTED_OPEN_H_
#define CGOV_OS_ROOTED_OPEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

// Whose rights an open runs with: a process's real uid and gid.
struct FileOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
};

// An open regular file; closes it when it goes.
class OpenedFile {
 public:
  OpenedFile() = default;
  explicit OpenedFile(int fd) : fd_(fd) {}
  OpenedFile(OpenedFile&& other) noexcept : fd_(other.release()) {}
  OpenedFile& operator=(OpenedFile&& other) noexcept;
  OpenedFile(const OpenedFile&) = delete;
  OpenedFile& operator=(const OpenedFile&) = delete;
  ~OpenedFile();
  int fd() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// Opens `path` (absolute, as seen from inside `root`) read-only inside the directory `root`
// (/proc/PID/root, or any directory standing for one), as `as` when given. NotFound when no such
// file exists inside the root; InvalidArgument naming the path (never its content) for a
// symlink as last component, a file that is not regular, an escape the kernel refused, or a
// file the owner may not read; Unavailable when the kernel has no openat2 (Linux < 5.6).
// `path` is shown in errors escaped (SafeText).
Result<OpenedFile> OpenInRoot(const std::string& root, std::string_view path,
                              std::optional<FileOwner> as);

}  // namespace cgov

#endif  // CGOV_OS_ROOTED_OPEN_H_
