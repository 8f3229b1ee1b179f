// Runs the real cgov binary (or any program) for end-to-end tests and captures what it did.
#ifndef CGOV_TESTS_E2E_PROCESS_RUNNER_H_
#define CGOV_TESTS_E2E_PROCESS_RUNNER_H_

#include <map>
#include <string>
#include <vector>

namespace cgov::e2e {

struct RunResult {
  int exit_code = -1;  // the exit status, or 128 + signal
  std::string out;     // stdout
  std::string err;     // stderr
  double wall_s = 0;
};

// Runs argv[0] with argv, the current environment plus `env` (an empty value unsets), and no
// stdin. Kills it after `timeout_s` (exit_code then 128 + SIGKILL).
RunResult RunProgram(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
              double timeout_s = 30);

// The cgov binary under test, the fake NVML variants and the scenarios.
std::string CgovBinary();
std::string FakeNvml(const std::string& variant);  // "full", "legacy", ...
std::string Scenario(const std::string& name);     // "h100x8" -> .../h100x8.json
std::string Fixture(const std::string& name);

}  // namespace cgov::e2e

#endif  // CGOV_TESTS_E2E_PROCESS_RUNNER_H_
