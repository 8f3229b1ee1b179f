// The floor under any 1 Hz sampler on this machine: a process that only wakes on a timer (as the
// daemon does, in sigtimedwait), and optionally reads some /proc files each time (kept open,
// pread at offset 0, as HostReader does). bench/daemon_overhead.py measures it from outside,
// exactly as it measures the daemon, so the daemon's figure can be read against it.
//
// Usage: cgov_wake_floor INTERVAL_MS [FILE]...   (runs until SIGTERM)
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const long interval_ms = std::atol(argv[1]);
  if (interval_ms <= 0) return 2;
  std::vector<int> files;
  for (int i = 2; i < argc; ++i) {
    const int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    files.push_back(fd);
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  static char buffer[1 << 16];
  for (;;) {
    for (int fd : files) {
      if (pread(fd, buffer, sizeof(buffer), 0) < 0) return 1;
    }
    timespec wait{interval_ms / 1000, (interval_ms % 1000) * 1'000'000};
    if (sigtimedwait(&stop, nullptr, &wait) > 0) return 0;
  }
}
