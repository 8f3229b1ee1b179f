// A raw TCP client on loopback for the HTTP server's tests, unit and end to end: connections
// from any 127/8 address (each is this host's, so one machine plays many clients), and whether
// the server closed one. Header-only: both test binaries include it.
#ifndef CGOV_TESTS_SUPPORT_LOOPBACK_CLIENT_H_
#define CGOV_TESTS_SUPPORT_LOOPBACK_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>

namespace cgov::test_support {

// A connection to 127.0.0.1:`port` from `source` ("127.0.0.2", …), with socket timeouts of
// `timeout_s`; -1 on failure.
inline int ConnectFrom(int port, const char* source, int timeout_s = 5) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Whether the server has closed `fd` (it reads the end, or a reset) within `within`.
inline bool ClosedWithin(int fd, std::chrono::milliseconds within) {
  timeval tv{static_cast<time_t>(within.count() / 1000),
             static_cast<suseconds_t>(within.count() % 1000 * 1000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace cgov::test_support

#endif  // CGOV_TESTS_SUPPORT_LOOPBACK_CLIENT_H_
