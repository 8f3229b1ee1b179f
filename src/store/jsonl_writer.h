// Appends JSON lines to a file, one write(2) per line and no user-space buffer, so that a process
// killed at any moment leaves only complete lines behind (and at most one torn last line if the
// kernel splits a write, which regular files on local filesystems do not for lines this size).
#ifndef CGOV_STORE_JSONL_WRITER_H_
#define CGOV_STORE_JSONL_WRITER_H_

#include <sys/types.h>

#include <cstdint>

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

// Not thread-safe.
class JsonlWriter {
 public:
  // Creates `path`, which must not exist yet (a run never overwrites another's samples).
  static Result<std::unique_ptr<JsonlWriter>> Create(const std::string& path);
  // Writes to an already open descriptor (tests use /dev/full); takes ownership.
  static std::unique_ptr<JsonlWriter> FromFd(int fd, std::string path);

  ~JsonlWriter();
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;

  // Appends `line` and a newline. After the first failure (disk full, I/O error) nothing more is
  // written: every later call returns the first error, whose message names the file and the line
  // number that failed. What part of the failed line was written is cut off again, so the file
  // ends with its last whole line.
  Status Append(std::string_view line);

  const Status& error() const { return error_; }
  uint64_t lines() const { return lines_; }
  const std::string& path() const { return path_; }

 private:
  JsonlWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_;
  std::string path_;
  std::string buffer_;
  Status error_;
  uint64_t lines_ = 0;
  bool sized_ = false;
  off_t bytes_ = -1;  // the file's size after its last whole line (-1: not a file that has one)
};

}  // namespace cgov

#endif  // CGOV_STORE_JSONL_WRITER_H_
