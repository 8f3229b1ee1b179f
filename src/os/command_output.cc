#include "os/command_output.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/text.h"

extern char** environ;

namespace cgov {

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout, size_t max_bytes) {
  if (argv.empty()) return InvalidArgument("no command");
  const std::string name = SafeText(argv[0]);
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0)
    return IoError(fmt::format("{}: pipe: {}", name, std::strerror(errno)));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return IoError(fmt::format("{}: pipe: {}", name, std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  if (spawned != 0) {
    close(out[0]);
    close(err[0]);
    return spawned == ENOENT ? NotFound(fmt::format("{}: not found on PATH", name))
                             : IoError(fmt::format("{}: {}", name, std::strerror(spawned)));
  }
  CommandOutput result;
  bool too_much = false, timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string& to = i == 0 ? result.out : result.err;
      to.append(buffer, static_cast<size_t>(n));
      if (i == 1 && to.size() > 8192) to.erase(0, to.size() - 4096);
      if (i == 0 && to.size() > max_bytes) {
        too_much = true;
        open_fds = 0;
      }
    }
  }
  for (pollfd& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (timed_out || too_much) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (result.err.size() > 4096) result.err.erase(0, result.err.size() - 4096);
  if (timed_out) {
    return Unavailable(
        fmt::format("{}: no answer within {} s; killed", name, timeout.count() / 1000));
  }
  if (too_much) {
    return InvalidArgument(fmt::format("{}: printed more than {} MiB", name, max_bytes >> 20));
  }
  std::string_view raw = result.err;
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == ' ')) raw.remove_suffix(1);
  const std::string tail = SafeText(raw);
  if (WIFSIGNALED(status)) {
    return Unavailable(fmt::format("{}: ended by signal {}{}{}", name, WTERMSIG(status),
                                   tail.empty() ? "" : ": ", tail));
  }
  if (WEXITSTATUS(status) != 0) {
    return Unavailable(fmt::format("{}: exited {}{}{}", name, WEXITSTATUS(status),
                                   tail.empty() ? "" : ": ", tail));
  }
  return result;
}

}  // namespace cgov
