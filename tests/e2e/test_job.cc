// A job for end-to-end tests of `cgov run`: each mode does one thing that a test can check.
//
//   exit N                 exit with status N
//   signal N               die of signal N
//   print TEXT             print TEXT and a newline on stdout
//   cat                    copy stdin to stdout
//   env NAME               print the value of $NAME
//   touch FILE             create FILE (to prove the job ran)
//   sleep SECONDS [FILE]   write the pid to FILE, then sleep
//   record FILE MAX LINGER write "ready PID" to FILE, then one line per INT/TERM/HUP/QUIT/USR1/
//                          USR2 received; exit 0 after MAX signals, or LINGER s after the first
//   doublefork FILE        fork a child that forks a grandchild and exits; the grandchild exits at
//                          once; 1 s later write "zombie" or "reaped" for the grandchild to FILE
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

namespace {

int g_record_fd = -1;
volatile sig_atomic_t g_received = 0;

void OnSignal(int sig) {
  const char* name = sig == SIGINT    ? "INT\n"
                     : sig == SIGTERM ? "TERM\n"
                     : sig == SIGHUP  ? "HUP\n"
                     : sig == SIGQUIT ? "QUIT\n"
                     : sig == SIGUSR1 ? "USR1\n"
                                      : "USR2\n";
  if (write(g_record_fd, name, strlen(name)) < 0) _exit(99);
  g_received = g_received + 1;
}

double Now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int Record(const char* file, int max, double linger) {
  g_record_fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0644);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2}) {
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigaction(sig, &sa, nullptr);
  }
  std::string ready = "ready " + std::to_string(getpid()) + "\n";
  if (write(g_record_fd, ready.data(), ready.size()) < 0) return 98;
  const double start = Now();
  double first = 0;
  while (Now() - start < 20) {
    if (g_received >= max) return 0;
    if (g_received > 0 && first == 0) first = Now();
    if (first > 0 && Now() - first > linger) return 0;
    usleep(10'000);
  }
  return 97;  // timed out
}

int DoubleFork(const char* file) {
  int fds[2];
  if (pipe(fds) != 0) return 96;
  pid_t child = fork();
  if (child == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) _exit(0);
    if (write(fds[1], &grandchild, sizeof(grandchild)) < 0) _exit(1);
    _exit(0);  // the grandchild is now an orphan
  }
  waitpid(child, nullptr, 0);
  pid_t grandchild = 0;
  if (read(fds[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild)) return 95;
  sleep(1);
  std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
  std::string line;
  std::getline(stat, line);
  size_t close = line.rfind(')');
  bool zombie = close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z';
  std::ofstream(file) << (zombie ? "zombie" : "reaped") << " " << grandchild << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 64;
  std::string mode = argv[1];
  if (mode == "exit" && argc == 3) return std::atoi(argv[2]);
  if (mode == "signal" && argc == 3) {
    int sig = std::atoi(argv[2]);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    return 90;
  }
  if (mode == "print" && argc == 3) {
    std::cout << argv[2] << "\n";
    return 0;
  }
  if (mode == "cat") {
    std::cout << std::cin.rdbuf();
    return 0;
  }
  if (mode == "env" && argc == 3) {
    const char* value = std::getenv(argv[2]);
    std::cout << (value ? value : "(unset)") << "\n";
    return 0;
  }
  if (mode == "touch" && argc == 3) {
    std::ofstream(argv[2]) << "ran\n";
    return 0;
  }
  if (mode == "sleep" && argc >= 3) {
    if (argc == 4) std::ofstream(argv[3]) << getpid() << "\n";
    usleep(static_cast<useconds_t>(std::atof(argv[2]) * 1e6));
    return 0;
  }
  if (mode == "record" && argc == 5) return Record(argv[2], std::atoi(argv[3]), std::atof(argv[4]));
  if (mode == "doublefork" && argc == 3) return DoubleFork(argv[2]);
  return 64;
}
