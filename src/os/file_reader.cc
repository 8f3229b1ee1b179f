#include "os/file_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "os/input_file.h"

namespace cgov {
namespace {

// Reads from offset 0 to EOF with pread into `scratch` (kept between calls, so no per-read
// allocation or zero-filling), then copies what was read into *out. /proc files regenerate their
// content on a read at offset 0, so a kept-open fd always sees fresh numbers. With
// `short_read_is_eof`, a read that returns less than asked ends it: true of procfs seq_files
// (they fill the buffer until their end), and it saves the syscall that would only confirm EOF.
Status PreadAll(int fd, std::string_view path, bool short_read_is_eof, std::vector<char>* scratch,
                std::string* out) {
  if (scratch->size() < 16384) scratch->resize(16384);
  size_t offset = 0;
  for (;;) {
    if (offset == scratch->size()) scratch->resize(scratch->size() * 2);
    const size_t want = scratch->size() - offset;
    ssize_t n = pread(fd, scratch->data() + offset, want, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      out->clear();
      return ErrnoStatus(err, "cannot read", path);
    }
    offset += static_cast<size_t>(n);
    if (n == 0 || (short_read_is_eof && static_cast<size_t>(n) < want)) break;
  }
  out->assign(scratch->data(), offset);
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
  for (auto& [path, dir] : hot_dirs_) closedir(dir);
}

void RootedFileReader::CloseHot(std::string_view path) {
  auto it = hot_fds_.find(std::string(path));
  if (it == hot_fds_.end()) return;
  close(it->second);
  hot_fds_.erase(it);
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
  Status status = PreadAll(fd, full, /*short_read_is_eof=*/false, &scratch_, out);
  close(fd);
  return status;
}

Status FileReader::ReadRegular(std::string_view path, size_t max_bytes, std::string* out) {
  CGOV_RETURN_IF_ERROR(Read(path, out));
  if (out->size() <= max_bytes) return Status::Ok();
  out->clear();
  return InvalidArgument(fmt::format("{}: larger than {} bytes", path, max_bytes));
}

// As the command line's files are read (os/input_file.h): opened without blocking, a regular
// file only, bounded.
Status RootedFileReader::ReadRegular(std::string_view path, size_t max_bytes, std::string* out) {
  Result<std::string> text = ReadInputFile(FullPath(path), max_bytes, "file");
  if (!text.ok()) {
    out->clear();
    return text.status();
  }
  *out = std::move(text).value();
  return Status::Ok();
}

Status RootedFileReader::ReadHot(std::string_view path, std::string* out) {
  auto it = hot_fds_.find(std::string(path));
  if (it == hot_fds_.end()) {
    const std::string full = FullPath(path);
    int fd = open(full.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus(errno, "cannot open", full);
    it = hot_fds_.emplace(std::string(path), fd).first;
  }
  return PreadAll(it->second, path, /*short_read_is_eof=*/true, &scratch_, out);
}

namespace {

void ReadEntries(DIR* dir, std::vector<std::string>* names) {
  names->clear();
  while (dirent* entry = readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names->emplace_back(name);
  }
}

}  // namespace

Status RootedFileReader::ListDir(std::string_view path, std::vector<std::string>* names) {
  names->clear();
  const std::string full = FullPath(path);
  DIR* dir = opendir(full.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "cannot list", full);
  ReadEntries(dir, names);
  closedir(dir);
  return Status::Ok();
}

Status RootedFileReader::ListDirHot(std::string_view path, std::vector<std::string>* names) {
  auto it = hot_dirs_.find(std::string(path));
  if (it == hot_dirs_.end()) {
    const std::string full = FullPath(path);
    DIR* dir = opendir(full.c_str());
    if (dir == nullptr) return ErrnoStatus(errno, "cannot list", full);
    it = hot_dirs_.emplace(std::string(path), dir).first;
  } else {
    rewinddir(it->second);  // procfs lists the current processes again from the start
  }
  ReadEntries(it->second, names);
  return Status::Ok();
}

}  // namespace cgov
