// Test-only: drives the fake libnvidia-ml.so.1 (tests/fake_nvml) from unit tests.
//
// Holding the library open keeps its state (frozen time, counters) across the NvmlSource objects
// a test opens and closes; the real loader still dlopens it by path, as in production.
#ifndef CGOV_TESTS_FAKES_NVML_TESTING_H_
#define CGOV_TESTS_FAKES_NVML_TESTING_H_

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace cgov::testing {

inline std::string FakeNvmlPath(const std::string& variant) {
  return std::string(CGOV_FAKE_NVML_DIR) + "/" + variant + "/libnvidia-ml.so.1";
}

class FakeNvml {
 public:
  // Loads `variant` and points it at `scenario_json` (written to a temp file), time frozen at t.
  FakeNvml(const std::string& variant, const std::string& scenario_json, double t = 0)
      : path_(FakeNvmlPath(variant)) {
    char name[] = "/tmp/cgov_scenario_XXXXXX";
    int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    scenario_path_ = name;
    std::ofstream(scenario_path_) << scenario_json;
    setenv("CGOV_FAKE_NVML_SCENARIO", scenario_path_.c_str(), 1);
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    set_time_ = reinterpret_cast<void (*)(double)>(Sym("fakeNvmlSetTime"));
    count_ = reinterpret_cast<unsigned long long (*)(const char*)>(Sym("fakeNvmlCallCount"));
    reset_ = reinterpret_cast<void (*)()>(Sym("fakeNvmlResetCounts"));
    SetTime(t);
    ResetCounts();
  }
  ~FakeNvml() {
    SetTime(-1);
    if (handle_) dlclose(handle_);
    unlink(scenario_path_.c_str());
  }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  bool loaded() const { return handle_ && set_time_ && count_ && reset_; }
  const std::string& path() const { return path_; }
  void SetTime(double t) {
    if (set_time_) set_time_(t);
  }
  unsigned long long Calls(const char* function) const { return count_ ? count_(function) : 0; }
  void ResetCounts() {
    if (reset_) reset_();
  }

 private:
  void* Sym(const char* name) { return handle_ ? dlsym(handle_, name) : nullptr; }

  std::string path_;
  std::string scenario_path_;
  void* handle_ = nullptr;
  void (*set_time_)(double) = nullptr;
  unsigned long long (*count_)(const char*) = nullptr;
  void (*reset_)() = nullptr;
};

}  // namespace cgov::testing

#endif  // CGOV_TESTS_FAKES_NVML_TESTING_H_
