// Test-only: reading files under tests/fixtures (CGOV_FIXTURES_DIR is set for test targets).
#ifndef CGOV_TESTS_FAKES_FIXTURE_TESTING_H_
#define CGOV_TESTS_FAKES_FIXTURE_TESTING_H_

#include <fstream>
#include <sstream>
#include <string>

namespace cgov::testing {

inline std::string FixturePath(const std::string& relative) {
  return std::string(CGOV_FIXTURES_DIR) + "/" + relative;
}

// The whole file, or "" when it cannot be read (the assertion that follows will say so).
inline std::string ReadFixture(const std::string& relative) {
  std::ifstream in(FixturePath(relative), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline constexpr const char* kVm = "proc/debian12-vm";

// A file of the captured VM tree: VmFile("/proc/stat").
inline std::string VmFile(const std::string& path) { return ReadFixture(std::string(kVm) + path); }

}  // namespace cgov::testing

#endif  // CGOV_TESTS_FAKES_FIXTURE_TESTING_H_
