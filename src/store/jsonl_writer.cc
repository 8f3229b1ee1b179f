#include "store/jsonl_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "os/file_reader.h"

namespace cgov {

Result<std::unique_ptr<JsonlWriter>> JsonlWriter::Create(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
  return std::unique_ptr<JsonlWriter>(new JsonlWriter(fd, path));
}

std::unique_ptr<JsonlWriter> JsonlWriter::FromFd(int fd, std::string path) {
  return std::unique_ptr<JsonlWriter>(new JsonlWriter(fd, std::move(path)));
}

JsonlWriter::~JsonlWriter() {
  if (fd_ >= 0) close(fd_);
}

Status JsonlWriter::Append(std::string_view line) {
  if (!error_.ok()) return error_;
  if (!sized_) {  // O_APPEND: every write lands at the end
    bytes_ = lseek(fd_, 0, SEEK_END);
    sized_ = true;
  }
  buffer_.assign(line);
  buffer_ += '\n';
  std::string_view rest = buffer_;
  while (!rest.empty()) {
    ssize_t n = write(fd_, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ =
          IoError(fmt::format("{}: writing line {} failed: {}; later samples were not saved", path_,
                              lines_ + 1, n < 0 ? std::strerror(errno) : "no progress"));
      // A partial line would make the file unreadable as JSON Lines: cut it off (truncating
      // frees space, so it works on a full disk).
      if (bytes_ >= 0 && rest.size() < buffer_.size()) (void)!ftruncate(fd_, bytes_);
      return error_;
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if (bytes_ >= 0) bytes_ += static_cast<off_t>(buffer_.size());
  ++lines_;
  return Status::Ok();
}

}  // namespace cgov
