#include "os/job_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/text.h"

extern char** environ;

namespace cgov {

int ExitCodeFromWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

const std::vector<int>& ForwardedSignals() {
  static const std::vector<int> signals = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  return signals;
}

bool ShouldForward(const siginfo_t& info) {
  return info.si_code == SI_USER || info.si_code == SI_QUEUE || info.si_code == SI_TKILL;
}

namespace {

// Where posix_spawnp finds `file`: itself when it names a path, else the first executable
// regular file of that name in $PATH. Empty when there is none.
std::string FindExecutable(const std::string& file) {
  auto usable = [](const std::string& path) {
    struct stat st {};
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (file.find('/') != std::string::npos) return usable(file) ? file : "";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/bin:/usr/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + file;
    if (usable(candidate)) return candidate;
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

// The interpreter a "#!" first line names (its first word), or empty when the file has none.
std::string ShebangInterpreter(const std::string& path) {
  char head[256] = {};
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  const ssize_t n = read(fd, head, sizeof(head));
  close(fd);
  if (n < 3 || head[0] != '#' || head[1] != '!') return "";
  std::string_view line(head + 2, static_cast<size_t>(n) - 2);
  line = line.substr(0, line.find('\n'));
  const size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) return "";
  line.remove_prefix(start);
  return std::string(line.substr(0, line.find_first_of(" \t\r")));
}

}  // namespace

int ExitCodeForSpawnError(StatusCode code) {
  return code == StatusCode::kNotFound ? kExitCommandNotFound : kExitCannotExecute;
}

namespace {
bool g_job_gets_default_xfsz = false;  // IgnoreFileSizeSignal() found the default action
}  // namespace

void IgnoreFileSizeSignal() {
  struct sigaction xfsz {};
  if (sigaction(SIGXFSZ, nullptr, &xfsz) == 0 && xfsz.sa_handler == SIG_DFL) {
    signal(SIGXFSZ, SIG_IGN);
    g_job_gets_default_xfsz = true;
  }
}

JobSupervisor::JobSupervisor() {
  sigemptyset(&waited_);
  for (int sig : ForwardedSignals()) sigaddset(&waited_, sig);
  sigaddset(&waited_, SIGCHLD);
  sigset_t block = waited_;
  sigaddset(&block, SIGPIPE);  // a closed stderr must not kill cgov and orphan the job
  pthread_sigmask(SIG_BLOCK, &block, &original_mask_);
  // SIGCHLD ignored by our parent would make the kernel reap the job before we can see its status.
  signal(SIGCHLD, SIG_DFL);
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  IgnoreFileSizeSignal();
}

JobSupervisor::~JobSupervisor() { pthread_sigmask(SIG_SETMASK, &original_mask_, nullptr); }

Result<pid_t> JobSupervisor::Spawn(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setsigmask(&attr, &original_mask_);
  sigset_t defaults;
  sigemptyset(&defaults);
  if (g_job_gets_default_xfsz) sigaddset(&defaults, SIGXFSZ);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  pid_t pid = -1;
  int err = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (err == 0) {
    job_pid_ = pid;
    return pid;
  }
  std::string message = fmt::format("cgov: cannot run '{}': {}", argv[0], std::strerror(err));
  if (err == ENOENT) {
    // ENOENT also means that the file exists but what it needs to start does not: the
    // interpreter of its #! line, or an executable's dynamic loader. Say which, as a shell does.
    const std::string found = FindExecutable(argv[0]);
    if (found.empty()) return NotFound(fmt::format("cgov: command not found: {}", argv[0]));
    const std::string interpreter = ShebangInterpreter(found);
    return NotFound(
        interpreter.empty()
            ? fmt::format(
                  "cgov: cannot run '{}': the file exists, but a file it needs to start (its "
                  "dynamic loader) was not found",
                  found)
            : fmt::format("cgov: cannot run '{}': its interpreter '{}' (line 1, #!) was not found",
                          found, SafeText(interpreter)));
  }
  if (err == EACCES || err == EPERM) return PermissionDenied(message);
  return InvalidArgument(message);
}

JobOutcome JobSupervisor::Wait(const std::function<void(int signal)>& on_signal) {
  JobOutcome outcome;
  bool job_done = false;
  while (!job_done) {
    // Reap first: the job may have ended before we got here, its SIGCHLD already consumed.
    for (;;) {
      int status = 0;
      pid_t reaped = waitpid(-1, &status, WNOHANG);
      if (reaped <= 0) break;
      if (reaped == job_pid_) {
        outcome.wait_status = status;
        outcome.exit_code = ExitCodeFromWaitStatus(status);
        job_done = true;
      }
    }
    if (job_done) break;
    siginfo_t info{};
    int sig = sigwaitinfo(&waited_, &info);
    if (sig < 0 || sig == SIGCHLD) continue;
    if (!ShouldForward(info)) continue;
    kill(job_pid_, sig);
    outcome.forwarded.push_back(sig);
    if (on_signal) on_signal(sig);
  }
  return outcome;
}

}  // namespace cgov
