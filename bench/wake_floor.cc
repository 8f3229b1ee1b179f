// The floor under any 1 Hz sampler on this machine: a process that only wakes on a timer (as the
// daemon does, in sigtimedwait), and optionally reads some /proc files each time (kept open,
// pread at offset 0, as HostReader does). bench/daemon_overhead.py measures it from outside,
// exactly as it measures the daemon, so the daemon's figure can be read against it.
//
// --resident-kib N first makes N KiB of anonymous memory resident (4 KiB pages, touched once
// and never again): on a VM whose wake-up costs more the more pages a process has mapped, a
// floor as large as the daemon separates what its size costs from what its tick does.
//
// Usage: cgov_wake_floor INTERVAL_MS [--resident-kib N] [FILE]...   (INTERVAL_MS 1 to a day, N
// up to 64 GiB; runs until SIGTERM; exit 2 for a bad INTERVAL_MS or N, 1 for a FILE that cannot
// be opened or read)
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

// N KiB of anonymous memory, each 4 KiB page written once; false when it cannot be mapped.
bool MakeResident(long kib) {
  const size_t bytes = static_cast<size_t>(kib) * 1024;
  if (bytes == 0) return true;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return false;
  madvise(memory, bytes, MADV_NOHUGEPAGE);  // 4 KiB pages, as the daemon's heap and text are
  char* bytes_at = static_cast<char*>(memory);
  for (size_t i = 0; i < bytes; i += 4096) bytes_at[i] = 1;
  return true;
}

// A whole number in [min, max] (decimal, nothing after it) into *out: anything else is a usage
// error, never a silently different floor ("12x" read as 12, "abc" as 0).
bool ParseWhole(const char* text, long min, long max, long* out) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min || value > max) return false;
  *out = value;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  long interval_ms = 0;
  if (!ParseWhole(argv[1], 1, 86'400'000, &interval_ms)) return 2;
  int first_file = 2;
  if (argc > 2 && std::strcmp(argv[2], "--resident-kib") == 0) {
    if (argc < 4) return 2;
    long kib = 0;
    if (!ParseWhole(argv[3], 0, 64L << 20, &kib) || !MakeResident(kib)) return 2;  // <= 64 GiB
    first_file = 4;
  }
  std::vector<int> files;
  for (int i = first_file; i < argc; ++i) {
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
