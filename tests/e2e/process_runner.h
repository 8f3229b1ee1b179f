// Runs the real cgov binary (or any program) for end-to-end tests and captures what it did.
#ifndef CGOV_TESTS_E2E_PROCESS_RUNNER_H_
#define CGOV_TESTS_E2E_PROCESS_RUNNER_H_

#include <sys/types.h>

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

// A program started and not yet waited for.
// A started program. One that was not waited for (a test that stopped at a failed ASSERT) is
// killed and reaped when this goes away, so it cannot hold a port or a lock for the next test.
// Movable, not copyable.
struct Started {
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  double start_s = 0;
  std::string spawn_error;

  Started() = default;
  Started(Started&& other) noexcept { *this = std::move(other); }
  Started& operator=(Started&& other) noexcept;
  Started(const Started&) = delete;
  Started& operator=(const Started&) = delete;
  ~Started();
};

using Env = std::map<std::string, std::string>;

// Starts argv[0] (a path) with the current environment plus `env` (an empty value unsets) and
// `stdin_text` on its stdin.
Started StartProgram(const std::vector<std::string>& argv, const Env& env,
                     const std::string& stdin_text = "");
// How much longer every timeout of the tests is: CGOV_TEST_TIME_SCALE (1 to 20; default 1).
// make sanitize sets 4: its binaries run 10 to 45 times slower than the optimized tree's, eight
// tests at a time on two cores, and a timeout is an upper bound on waiting, never a speed test
// (speed lives in bench/, docs/benchmarks.md).
double TimeScale();

// Collects output until exit; kills it `timeout_s` × TimeScale() after this call (exit_code
// then 128 + SIGKILL).
RunResult WaitProgram(Started& started, double timeout_s = 30);

inline RunResult RunProgram(const std::vector<std::string>& argv, const Env& env,
                            double timeout_s = 30, const std::string& stdin_text = "") {
  Started s = StartProgram(argv, env, stdin_text);
  return WaitProgram(s, timeout_s);
}

// The binaries under test, the fake NVML variants, scenarios, fixtures.
std::string CgovBinary();
std::string BuildDir();  // the directory the binaries under test were built in
std::string TestJob();
std::string FakeNvml(const std::string& variant);  // "full", "legacy", ...
std::string Scenario(const std::string& name);     // "h100x8" -> .../h100x8.json
std::string Fixture(const std::string& name);
std::string DocsFile(const std::string& name);

// A fresh directory under /tmp, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& content);

// Polls `predicate` until it holds, for at most `timeout_s` × TimeScale() of sleeping (the
// predicate's own time is not counted); returns its last value. The pause starts at 10 ms and
// grows by half up to 100 ms: most predicates start a curl or open a database, and a daemon
// answers each /metrics, so polling every 10 ms for seconds was a fifth of the suites' CPU.
template <typename P>
bool WaitFor(P predicate, double timeout_s = 10);

}  // namespace cgov::e2e

#include <unistd.h>

#include <algorithm>

template <typename P>
bool cgov::e2e::WaitFor(P predicate, double timeout_s) {
  const double budget_us = timeout_s * TimeScale() * 1e6;
  double pause_us = 10'000;
  for (double slept_us = 0; slept_us < budget_us;) {
    if (predicate()) return true;
    const double pause = std::min(pause_us, budget_us - slept_us);
    usleep(static_cast<useconds_t>(pause));
    slept_us += pause;
    pause_us = std::min(pause_us * 1.5, 100'000.0);
  }
  return predicate();
}

#endif  // CGOV_TESTS_E2E_PROCESS_RUNNER_H_
