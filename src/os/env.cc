#include "os/env.h"

#include "os/input_file.h"

namespace cgov {
namespace {

class DefaultEnv : public Env {
 public:
  Clock& clock() override { return clock_; }
  std::unique_ptr<FileReader> NewFileReader(const std::string& root) override {
    return std::make_unique<RootedFileReader>(root);
  }
  Result<std::string> ReadUserFile(const std::string& path, size_t max_bytes,
                                   std::string_view what) override {
    return ReadInputFile(path, max_bytes, what);
  }
  Result<const HttpClient*> Http() override { return CurlHttpClient(); }
  Result<PlainHttpResponse> PlainHttp(std::string_view method, const std::string& url,
                                      const std::vector<std::string>& headers,
                                      std::chrono::milliseconds timeout) override {
    return PlainHttpRequest(method, url, headers, timeout);
  }
  void Log(LogLevel level, std::string_view message) override { ::cgov::Log(level, message); }

 private:
  SystemClock clock_;
};

}  // namespace

Env* Env::Default() {
  static Env* const env = new DefaultEnv;  // never destroyed: threads may outlive main's return
  return env;
}

}  // namespace cgov
