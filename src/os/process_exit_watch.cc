#include "os/process_exit_watch.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <map>
#include <string>

namespace cgov {
namespace {

#ifndef SYS_pidfd_open
constexpr long SYS_pidfd_open = 434;  // the same number on every architecture (Linux 5.3)
#endif

class PidfdExitWatch : public ProcessExitWatch {
 public:
  ~PidfdExitWatch() override {
    for (const auto& [pid, fd] : fds_) close(fd);
  }

  bool Watch(uint32_t pid) override {
    if (fds_.count(pid) > 0) return true;
    const long fd = syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
    if (fd < 0) return false;  // ESRCH: gone; ENOSYS: an older kernel; EPERM: a sandbox
    fds_[pid] = static_cast<int>(fd);
    return true;
  }

  void Forget(uint32_t pid) override {
    if (auto it = fds_.find(pid); it != fds_.end()) {
      close(it->second);
      fds_.erase(it);
    }
  }

  std::vector<uint32_t> TakeExited() override {
    std::vector<uint32_t> exited;
    if (fds_.empty()) return exited;
    polled_.clear();
    for (const auto& [pid, fd] : fds_) polled_.push_back({fd, POLLIN, 0});
    if (poll(polled_.data(), polled_.size(), 0) <= 0) return exited;
    size_t i = 0;
    for (auto it = fds_.begin(); it != fds_.end(); ++i) {
      if ((polled_[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) == 0) {
        ++it;
        continue;
      }
      exited.push_back(it->first);
      close(it->second);
      it = fds_.erase(it);
    }
    return exited;
  }

 private:
  std::map<uint32_t, int> fds_;  // by pid
  std::vector<pollfd> polled_;   // reused a check
};

}  // namespace

std::unique_ptr<ProcessExitWatch> NewPidfdExitWatch() { return std::make_unique<PidfdExitWatch>(); }

bool ProcIsThisPidNamespace(const std::string& proc_dir) {
  char target[32] = {};
  const ssize_t n = readlink((proc_dir + "/self").c_str(), target, sizeof target - 1);
  return n > 0 && std::string(target, static_cast<size_t>(n)) == std::to_string(getpid());
}

}  // namespace cgov
