// An Env for tests (os/env.h): what the test sets is the test's (a clock it moves, an HTTP client
// that answers from the test, a reader of its own files); the rest is the machine's.
#ifndef CGOV_TESTS_FAKES_FAKE_ENV_H_
#define CGOV_TESTS_FAKES_FAKE_ENV_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "os/env.h"

namespace cgov {

// A FileReader that hands every call to one the test owns (so that a reader the code under test
// owns and destroys can be the test's FakeFileReader).
class ForwardingFileReader : public FileReader {
 public:
  explicit ForwardingFileReader(FileReader* target) : target_(target) {}
  Status Read(std::string_view path, std::string* out) override { return target_->Read(path, out); }
  Status ReadHot(std::string_view path, std::string* out) override {
    return target_->ReadHot(path, out);
  }
  Status ListDir(std::string_view path, std::vector<std::string>* names) override {
    return target_->ListDir(path, names);
  }
  Status ListDirHot(std::string_view path, std::vector<std::string>* names) override {
    return target_->ListDirHot(path, names);
  }
  void CloseHot(std::string_view path) override { target_->CloseHot(path); }
  Status ReadRegular(std::string_view path, size_t max_bytes, std::string* out) override {
    return target_->ReadRegular(path, max_bytes, out);
  }

 private:
  FileReader* target_;
};

class FakeEnv : public EnvWrapper {
 public:
  FakeEnv() : EnvWrapper(Env::Default()) {}

  // Each is the caller's, and must outlive the FakeEnv's users; null: the machine's.
  void set_clock(Clock* clock) { clock_ = clock; }
  void set_http(const HttpClient* http) { http_ = http; }
  // NewFileReader(root) makes `make(root)` instead of a reader of the machine's files.
  void set_files(std::function<std::unique_ptr<FileReader>(const std::string&)> make) {
    files_ = std::move(make);
  }
  // Every reader made is `files` (whatever the root asked for).
  void set_files(FileReader* files) {
    files_ = [files](const std::string&) { return std::make_unique<ForwardingFileReader>(files); };
  }
  // Log lines are kept (level, message) instead of written to stderr.
  void capture_log() { capture_ = true; }
  std::vector<std::pair<LogLevel, std::string>> logged() const {
    std::lock_guard lock(mu_);
    return logged_;
  }

  Clock& clock() override { return clock_ != nullptr ? *clock_ : EnvWrapper::clock(); }
  Result<const HttpClient*> Http() override {
    if (http_ != nullptr) return http_;
    return EnvWrapper::Http();
  }
  std::unique_ptr<FileReader> NewFileReader(const std::string& root) override {
    return files_ ? files_(root) : EnvWrapper::NewFileReader(root);
  }
  void Log(LogLevel level, std::string_view message) override {
    if (!capture_) return EnvWrapper::Log(level, message);
    std::lock_guard lock(mu_);
    logged_.emplace_back(level, std::string(message));
  }

 private:
  Clock* clock_ = nullptr;
  const HttpClient* http_ = nullptr;
  std::function<std::unique_ptr<FileReader>(const std::string&)> files_;
  bool capture_ = false;
  mutable std::mutex mu_;
  std::vector<std::pair<LogLevel, std::string>> logged_;
};

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_ENV_H_
