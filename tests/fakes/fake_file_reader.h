// An in-memory FileReader for tests: serves set contents, injects errors, records every read.
#ifndef CGOV_TESTS_FAKES_FAKE_FILE_READER_H_
#define CGOV_TESTS_FAKES_FAKE_FILE_READER_H_

#include <map>
#include <string>
#include <vector>

#include "os/file_reader.h"

namespace cgov {

class FakeFileReader : public FileReader {
 public:
  void Set(const std::string& path, std::string content) { files_[path] = std::move(content); }
  void Remove(const std::string& path) { files_.erase(path); }
  // Every later read of `path` fails with `status`.
  void SetError(const std::string& path, Status status) { errors_[path] = std::move(status); }
  // Copies every regular file under `dir` on disk into the fake, as `prefix` + relative path.
  Status LoadTree(const std::string& dir, const std::string& prefix);

  Status Read(std::string_view path, std::string* out) override;
  Status ReadHot(std::string_view path, std::string* out) override;
  Status ListDir(std::string_view path, std::vector<std::string>* names) override;
  Status ListDirHot(std::string_view path, std::vector<std::string>* names) override;
  void CloseHot(std::string_view path) override { reads_.push_back("close:" + std::string(path)); }

  // What was done, in order: reads as the path, hot reads as "hot:PATH", hot listings as
  // "list:PATH", closes of hot files as "close:PATH".
  const std::vector<std::string>& reads() const { return reads_; }

 private:
  std::map<std::string, std::string> files_;
  std::map<std::string, Status> errors_;
  std::vector<std::string> reads_;
};

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_FILE_READER_H_
