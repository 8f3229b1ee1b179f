#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string temp = path + ".tmp-XXXXXX";
  int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return Fail("create temporary file", path, errno);
  auto abandon = [&](std::string_view step, int err) {
    close(fd);
    unlink(temp.c_str());
    return Fail(step, path, err);
  };
  if (fchmod(fd, 0644) != 0) return abandon("chmod", errno);
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
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {  // the rename is durable once the directory is
    fsync(dir_fd);
    close(dir_fd);
  }
  return Status::Ok();
}

}  // namespace cgov
