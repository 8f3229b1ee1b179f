// The seam between Cost Governor and the files of the machine (/proc, /sys, /etc/passwd).
//
// Paths are absolute as seen on the host ("/proc/stat"); an implementation may serve them from
// elsewhere (a captured tree, a host filesystem mounted at /host in a container, memory).
#ifndef CGOV_OS_FILE_READER_H_
#define CGOV_OS_FILE_READER_H_

#include <dirent.h>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace cgov {

class FileReader {
 public:
  virtual ~FileReader() = default;

  // Replaces *out with the whole content of `path`.
  // Returns kNotFound when the file does not exist (a pid that vanished), kPermissionDenied for
  // EACCES/EPERM (hidepid, another user's environ), kIoError otherwise. The message names the path.
  virtual Status Read(std::string_view path, std::string* out) = 0;

  // Like Read, for procfs files read on every tick (/proc/stat): an implementation may keep them
  // open, re-read them with pread, and take a short read as the end of the file (true of procfs
  // seq_files). Not for per-pid files, which come and go, nor for regular files.
  virtual Status ReadHot(std::string_view path, std::string* out) { return Read(path, out); }

  // Replaces *names with the entries of a directory, without "." and "..", in no set order.
  virtual Status ListDir(std::string_view path, std::vector<std::string>* names) = 0;

  // Like ListDir, for a directory listed again and again (/proc): an implementation may keep it
  // open and rewind it.
  virtual Status ListDirHot(std::string_view path, std::vector<std::string>* names) {
    return ListDir(path, names);
  }

  // Closes a file kept open by ReadHot (a per-pid file whose process exited). No-op otherwise.
  virtual void CloseHot(std::string_view path) { (void)path; }

  // Like Read, for a file someone else writes (a container runtime's state): only a regular file
  // of at most `max_bytes`; a FIFO (never waited on), a device (/dev/zero), a directory or a
  // larger file is kInvalidArgument. This default reads, then checks the size.
  virtual Status ReadRegular(std::string_view path, size_t max_bytes, std::string* out);
};

// Reads the real filesystem under `root` ("/" normally; a mounted host root or a captured tree
// otherwise). Hot files stay open for the reader's lifetime.
// Thread safety: one instance per thread; instances share nothing.
class RootedFileReader : public FileReader {
 public:
  explicit RootedFileReader(std::string root = "/");
  ~RootedFileReader() override;
  RootedFileReader(const RootedFileReader&) = delete;
  RootedFileReader& operator=(const RootedFileReader&) = delete;

  Status Read(std::string_view path, std::string* out) override;
  Status ReadHot(std::string_view path, std::string* out) override;
  Status ListDir(std::string_view path, std::vector<std::string>* names) override;
  Status ListDirHot(std::string_view path, std::vector<std::string>* names) override;
  void CloseHot(std::string_view path) override;
  Status ReadRegular(std::string_view path, size_t max_bytes, std::string* out) override;

  const std::string& root() const { return root_; }

 private:
  std::string FullPath(std::string_view path) const;

  std::string root_;  // without a trailing slash; empty for "/"
  std::unordered_map<std::string, int> hot_fds_;
  std::unordered_map<std::string, DIR*> hot_dirs_;
  std::vector<char> scratch_;  // read buffer, reused
};

// Maps errno from open/read to a Status that names the path.
Status ErrnoStatus(int err, std::string_view what, std::string_view path);

}  // namespace cgov

#endif  // CGOV_OS_FILE_READER_H_
