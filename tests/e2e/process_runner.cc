#include "process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

extern char** environ;

namespace cgov::e2e {
namespace {

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

std::vector<std::string> MergedEnv(const Env& extra) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry = *e;
    size_t eq = entry.find('=');
    if (eq != std::string::npos) merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : extra) {
    if (v.empty())
      merged.erase(k);
    else
      merged[k] = v;
  }
  std::vector<std::string> out;
  for (const auto& [k, v] : merged) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> ptrs;
  for (std::string& s : strings) ptrs.push_back(s.data());
  ptrs.push_back(nullptr);
  return ptrs;
}

}  // namespace

Started StartProgram(const std::vector<std::string>& argv, const Env& env,
                     const std::string& stdin_text) {
  Started s;
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(in_pipe, O_CLOEXEC) != 0) {
    s.spawn_error = "pipe failed";
    return s;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  std::vector<char*> arg_ptrs = Pointers(args), env_ptrs = Pointers(envs);
  s.start_s = Now();
  int rc =
      posix_spawn(&s.pid, args[0].c_str(), &actions, nullptr, arg_ptrs.data(), env_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(in_pipe[0]);
  if (rc != 0) {
    s.spawn_error = std::string("spawn failed: ") + std::strerror(rc);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(in_pipe[1]);
    s.pid = -1;
    return s;
  }
  // Feed stdin from a thread so a large text cannot deadlock against unread output.
  std::thread([fd = in_pipe[1], text = stdin_text] {
    signal(SIGPIPE, SIG_IGN);
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  }).detach();
  s.out_fd = out_pipe[0];
  s.err_fd = err_pipe[0];
  return s;
}

Started& Started::operator=(Started&& other) noexcept {
  if (this != &other) {
    this->~Started();
    pid = std::exchange(other.pid, -1);
    out_fd = std::exchange(other.out_fd, -1);
    err_fd = std::exchange(other.err_fd, -1);
    start_s = other.start_s;
    spawn_error = std::move(other.spawn_error);
  }
  return *this;
}

Started::~Started() {
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
  for (int* fd : {&out_fd, &err_fd}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

double TimeScale() {
  static const double scale = [] {
    const char* env = std::getenv("CGOV_TEST_TIME_SCALE");
    const double v = env != nullptr ? std::strtod(env, nullptr) : 1;
    return v >= 1 && v <= 20 ? v : 1;
  }();
  return scale;
}

RunResult WaitProgram(Started& s, double timeout_s) {
  timeout_s *= TimeScale();
  RunResult result;
  if (s.pid < 0) {
    result.err = s.spawn_error;
    return result;
  }
  pollfd fds[2] = {{s.out_fd, POLLIN, 0}, {s.err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  bool killed = false;
  // From this call, not from the start: a daemon a test stopped after a minute has its full
  // timeout to exit (it was SIGKILLed at once when the timeout counted from its start).
  const double waiting_since_s = Now();
  while (open_fds > 0) {
    double left = timeout_s - (Now() - waiting_since_s);
    if (left <= 0 && !killed) {
      kill(s.pid, SIGKILL);
      killed = true;
    }
    if (poll(fds, 2, killed ? 1000 : static_cast<int>(left * 1000) + 1) < 0 && errno != EINTR)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buffer[65536];
      ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (killed && Now() - waiting_since_s > timeout_s + 5) break;  // a grandchild holds the pipes
  }
  for (pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  int status = 0;
  waitpid(s.pid, &status, 0);
  s.pid = -1;                // reaped: nothing left for ~Started to stop
  s.out_fd = s.err_fd = -1;  // closed above
  result.wall_s = Now() - s.start_s;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string CgovBinary() { return CGOV_BINARY; }
std::string TestJob() { return CGOV_TEST_JOB; }
std::string FakeNvml(const std::string& variant) {
  return std::string(CGOV_FAKE_NVML_DIR) + "/" + variant + "/libnvidia-ml.so.1";
}

std::string BuildDir() {
  const std::string cgov = CgovBinary();
  return cgov.substr(0, cgov.rfind('/'));
}
std::string Scenario(const std::string& name) {
  return std::string(CGOV_SCENARIOS_DIR) + "/" + name + ".json";
}
std::string Fixture(const std::string& name) { return std::string(CGOV_FIXTURES_DIR) + "/" + name; }
std::string DocsFile(const std::string& name) { return std::string(CGOV_DOCS_DIR) + "/" + name; }

TempDir::TempDir() {
  char tmpl[] = "/tmp/cgov_e2e_XXXXXX";
  path_ = mkdtemp(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::add, ec);
  std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path) << content;
}

}  // namespace cgov::e2e
