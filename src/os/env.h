// Everything cgov takes from outside its own memory, behind one seam: the clocks, the host's
// files (/proc, /sys), files a user names, HTTP and the log. Production code asks an Env;
// Env::Default() is the machine's, and a test hands a module its own (an EnvWrapper that
// overrides what the test controls: a FakeClock, a FakeHttpClient, a captured tree). The model is
// leveldb's Env/EnvWrapper. tests/layering/check_env.py fails on a clock read, an HTTP client, a
// file opened for reading or a write to stderr anywhere else in src/ (docs/architecture.md,
// "The Env").
#ifndef CGOV_OS_ENV_H_
#define CGOV_OS_ENV_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/status.h"
#include "os/clock.h"
#include "os/file_reader.h"
#include "os/http_client.h"
#include "os/http_get.h"
#include "os/log.h"

namespace cgov {

class Env {
 public:
  virtual ~Env() = default;

  // The machine's: its clocks, files under "/", libcurl (loaded at first use), the process's
  // log (os/log.h). Never destroyed; thread-safe.
  static Env* Default();

  // The clocks. The returned clock is thread-safe for Default().
  virtual Clock& clock() = 0;

  // A reader of the files under `root` ("/": the host; a mounted host root or a captured tree
  // otherwise), for one thread (it keeps hot files open).
  virtual std::unique_ptr<FileReader> NewFileReader(const std::string& root) = 0;

  // A file a user names (os/input_file.h's rules: a regular file of at most `max_bytes`, never
  // blocking on a FIFO; `what` names it in errors: "--price-catalog").
  virtual Result<std::string> ReadUserFile(const std::string& path, size_t max_bytes,
                                           std::string_view what) = 0;

  // The HTTP client; Unavailable (naming the package) when libcurl cannot be loaded.
  virtual Result<const HttpClient*> Http() = 0;
  // One plain-HTTP exchange without libcurl (os/http_get.h: numeric hosts, a hard deadline), for
  // the opt-in cloud metadata lookup of `cgov run`, which loads no HTTP library.
  virtual Result<PlainHttpResponse> PlainHttp(std::string_view method, const std::string& url,
                                              const std::vector<std::string>& headers,
                                              std::chrono::milliseconds timeout) = 0;

  // One event to the log, at `level` (dropped when the log's level is above it).
  virtual void Log(LogLevel level, std::string_view message) = 0;

  // Shorthands over clock().
  int64_t MonotonicNs() { return clock().MonotonicNs(); }
  int64_t WallMs() { return clock().WallNs() / 1'000'000; }
  // The monotonic clock as std::chrono's steady clock (both are CLOCK_MONOTONIC on Linux), for
  // deadlines handed to waits.
  std::chrono::steady_clock::time_point SteadyNow() {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(MonotonicNs()));
  }
};

// One event to `env`'s log, formatted only when the log takes its level: what code given an Env
// logs through (the free LogWarning(...) of os/log.h is the process's log, Env::Default()'s).
template <typename... Args>
void LogDebug(Env& env, fmt::format_string<Args...> f, Args&&... args) {
  if (LogEnabled(LogLevel::kDebug)) {
    env.Log(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
  }
}
template <typename... Args>
void LogInfo(Env& env, fmt::format_string<Args...> f, Args&&... args) {
  if (LogEnabled(LogLevel::kInfo))
    env.Log(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void LogWarning(Env& env, fmt::format_string<Args...> f, Args&&... args) {
  if (LogEnabled(LogLevel::kWarning)) {
    env.Log(LogLevel::kWarning, fmt::format(f, std::forward<Args>(args)...));
  }
}
template <typename... Args>
void LogError(Env& env, fmt::format_string<Args...> f, Args&&... args) {
  env.Log(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}

// An Env that hands every call to another; a test derives from it and overrides what it fakes.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Clock& clock() override { return target_->clock(); }
  std::unique_ptr<FileReader> NewFileReader(const std::string& root) override {
    return target_->NewFileReader(root);
  }
  Result<std::string> ReadUserFile(const std::string& path, size_t max_bytes,
                                   std::string_view what) override {
    return target_->ReadUserFile(path, max_bytes, what);
  }
  Result<const HttpClient*> Http() override { return target_->Http(); }
  Result<PlainHttpResponse> PlainHttp(std::string_view method, const std::string& url,
                                      const std::vector<std::string>& headers,
                                      std::chrono::milliseconds timeout) override {
    return target_->PlainHttp(method, url, headers, timeout);
  }
  void Log(LogLevel level, std::string_view message) override { target_->Log(level, message); }

 private:
  Env* target_;
};

}  // namespace cgov

#endif  // CGOV_OS_ENV_H_
