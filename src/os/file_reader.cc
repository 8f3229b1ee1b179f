#include "os/file_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cgov {
namespace {

// Reads from offset 0 to EOF with pread. /proc files regenerate their content on a read at
// offset 0, so a kept-open fd always sees fresh numbers. With `short_read_is_eof`, a read that
// returns less than asked ends it: true of procfs seq_files (they fill the buffer until their
// end), and it saves the extra syscall that would only confirm EOF.
Status PreadAll(int fd, std::string_view path, bool short_read_is_eof, std::string* out) {
  out->clear();
  size_t capacity = 16384;
  off_t offset = 0;
  for (;;) {
    out->resize(static_cast<size_t>(offset) + capacity);
    ssize_t n = pread(fd, out->data() + offset, capacity, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      out->clear();
      return ErrnoStatus(err, "cannot read", path);
    }
    offset += n;
    if (n == 0 || (short_read_is_eof && static_cast<size_t>(n) < capacity)) break;
    if (static_cast<size_t>(n) == capacity) capacity *= 2;
  }
  out->resize(static_cast<size_t>(offset));
  return Status::Ok();
}

}  // namespace

Status ErrnoStatus(int err, std::string_view what, std::string_view path) {
  std::string message = fmt::format("{} {}: {}", what, path, std::strerror(err));
  switch (err) {
    case ENOENT:
    case ESRCH:  // a pid that exited between the open and the read
      return NotFound(std::move(message));
    case EACCES:
    case EPERM:
      return PermissionDenied(std::move(message));
    default:
      return IoError(std::move(message));
  }
}

RootedFileReader::RootedFileReader(std::string root) : root_(std::move(root)) {
  while (!root_.empty() && root_.back() == '/') root_.pop_back();
}

RootedFileReader::~RootedFileReader() {
  for (auto& [path, fd] : hot_fds_) close(fd);
}

std::string RootedFileReader::FullPath(std::string_view path) const {
  std::string full = root_;
  full += path;
  return full;
}

Status RootedFileReader::Read(std::string_view path, std::string* out) {
  const std::string full = FullPath(path);
  int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", full);
  Status status = PreadAll(fd, full, /*short_read_is_eof=*/false, out);
  close(fd);
  return status;
}

Status RootedFileReader::ReadHot(std::string_view path, std::string* out) {
  auto it = hot_fds_.find(std::string(path));
  if (it == hot_fds_.end()) {
    const std::string full = FullPath(path);
    int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "cannot open", full);
    it = hot_fds_.emplace(std::string(path), fd).first;
  }
  return PreadAll(it->second, path, /*short_read_is_eof=*/true, out);
}

Status RootedFileReader::ListDir(std::string_view path, std::vector<std::string>* names) {
  names->clear();
  const std::string full = FullPath(path);
  DIR* dir = opendir(full.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "cannot list", full);
  while (dirent* entry = readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names->emplace_back(name);
  }
  closedir(dir);
  return Status::Ok();
}

}  // namespace cgov
