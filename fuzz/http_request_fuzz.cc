// The daemon's HTTP server as a scraper (or anyone who can reach --listen) meets it: any bytes on
// a TCP connection to a real HttpServer on loopback (libmicrohttpd and cgov's own request
// handling: method and body checks, basic auth, query arguments), then end of input. The first
// byte picks a server with or without basic auth. Properties: the server answers or closes
// within 20 s (its idle timeout is 2 s; a close after 3 s is logged as "slow close"), every answer
// is HTTP, and it keeps serving the next connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "export/http_server.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

namespace {

std::unique_ptr<HttpServer> StartServer(bool auth) {
  HttpServerOptions o;
  o.address = *ParseListenAddress("127.0.0.1:0");
  o.timeout_s = 2;
  if (auth) {
    o.users = {{"prom", "s3cret", false}};
  }
  auto server = HttpServer::Start(o, [](const ServedRequest& r) {
    ServedResponse response;
    if (r.path == "/missing") response.status = 404;
    response.body = "path=" + r.path + " accept=" + r.accept + "\n";
    for (const auto& [key, value] : r.query) response.body += key + "=" + value + "\n";
    return response;
  });
  FUZZ_CHECK(server.ok());
  return std::move(server).value();
}

// A connected socket to 127.0.0.1:`port`. At thousands of connections a second the loopback's
// ephemeral ports run out for a moment (the server's side of each closed connection sits in
// TIME_WAIT), and connect() fails with EADDRNOTAVAIL: that is the harness, not the server, so it
// waits and tries again (for up to 5 s) before it calls the property broken.
int Connect(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int error = 0;
  for (int attempt = 0; attempt < 250; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(fd >= 0);
    timeval tv{20, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    // Closed with a reset, not into TIME_WAIT on this side.
    linger reset{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    error = errno;
    close(fd);
    if (error != EADDRNOTAVAIL && error != EAGAIN && error != EINTR) break;
    usleep(20'000);
  }
  std::fprintf(stderr, "connect: %s\n", std::strerror(error));
  FUZZ_CHECK(!"connect to the server on loopback");
  return -1;
}

// Sends `request`, closes the sending side, and returns everything answered until close.
std::string Exchange(uint16_t port, std::string_view request) {
  const int fd = Connect(port);
  for (size_t sent = 0; sent < request.size();) {
    const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the server may close first (a refused request): fine
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  const auto start = std::chrono::steady_clock::now();
  std::string out;
  char buffer[8192];
  ssize_t n = 0;
  // EINTR: libFuzzer's once-a-second SIGALRM (its time limits) interrupts a waiting recv.
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) out.append(buffer, static_cast<size_t>(n));
  }
  const int error = n < 0 ? errno : 0;
  const bool closed = n == 0 || error == ECONNRESET;
  close(fd);
  if (!closed) std::fprintf(stderr, "recv: %s\n", std::strerror(error));
  FUZZ_CHECK(closed);  // not a 20 s receive timeout: the server answered and closed
  // The server's idle timeout is 2 s: a close later than that is said (not a failure: a loaded
  // machine can be that late), so a slow path shows in the log without failing the run.
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (seconds > 3) std::fprintf(stderr, "slow close: %.1f s after the input ended\n", seconds);
  return out;
}

}  // namespace

CGOV_FUZZ_TARGET(http_request_fuzz) {
  static std::unique_ptr<HttpServer> open_server = StartServer(false);
  static std::unique_ptr<HttpServer> auth_server = StartServer(true);
  if (size == 0) return 0;
  HttpServer& server = (data[0] & 1) ? *auth_server : *open_server;
  const std::string answer =
      Exchange(server.port(), std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  FUZZ_CHECK(answer.empty() || answer.starts_with("HTTP/1."));
  static unsigned calls = 0;
  if (++calls % 16 == 0) {  // still serving (every 16th input: the check costs a connection)
    const std::string health = Exchange(server.port(),
                                        "GET /health HTTP/1.1\r\nHost: x\r\n"
                                        "Authorization: Basic cHJvbTpzM2NyZXQ=\r\n\r\n");
    FUZZ_CHECK(health.starts_with("HTTP/1.1 200"));
  }
  return 0;
}
