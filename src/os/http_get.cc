#include "os/http_get.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace cgov {
namespace {

struct Url {
  std::string host;
  std::string port = "80";
  std::string path = "/";
};

Result<Url> ParseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) {
    return InvalidArgument(fmt::format("{}: only http:// URLs are supported", url));
  }
  std::string rest = url.substr(kScheme.size());
  Url u;
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    u.path = rest.substr(slash);
    rest = rest.substr(0, slash);
  }
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8080
    const size_t close = rest.find(']');
    if (close == std::string::npos) return InvalidArgument(fmt::format("{}: bad IPv6 host", url));
    u.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') u.port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    u.host = rest.substr(0, colon);
    if (colon != std::string::npos) u.port = rest.substr(colon + 1);
  }
  if (u.host.empty()) return InvalidArgument(fmt::format("{}: no host", url));
  return u;
}

using SteadyClock = std::chrono::steady_clock;

int MsLeft(SteadyClock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

}  // namespace

Result<PlainHttpResponse> HttpGet(const std::string& url, const std::vector<std::string>& headers,
                                  std::chrono::milliseconds timeout) {
  return PlainHttpRequest("GET", url, headers, timeout);
}

Result<PlainHttpResponse> PlainHttpRequest(std::string_view method, const std::string& url,
                                           const std::vector<std::string>& headers,
                                           std::chrono::milliseconds timeout) {
  CGOV_ASSIGN_OR_RETURN(Url u, ParseUrl(url));
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* addr = nullptr;
  if (getaddrinfo(u.host.c_str(), u.port.c_str(), &hints, &addr) != 0) {
    return InvalidArgument(fmt::format("{}: the host must be a numeric address", url));
  }
  const SteadyClock::time_point deadline = SteadyClock::now() + timeout;
  int fd = socket(addr->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  auto fail = [&](std::string_view what) -> Status {
    if (fd >= 0) close(fd);
    return Unavailable(fmt::format("{}: {}", url, what));
  };
  if (fd < 0) {
    freeaddrinfo(addr);
    return fail(std::strerror(errno));
  }
  int rc = connect(fd, addr->ai_addr, addr->ai_addrlen);
  freeaddrinfo(addr);
  if (rc != 0 && errno != EINPROGRESS) return fail(std::strerror(errno));
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, MsLeft(deadline)) <= 0) return fail("no connection within the timeout");
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) return fail(std::strerror(err));
  std::string request = fmt::format("{} {} HTTP/1.0\r\nHost: {}\r\n", method, u.path, u.host);
  if (method != "GET" && method != "HEAD") request += "Content-Length: 0\r\n";
  for (const std::string& h : headers) request += h + "\r\n";
  request += "Connection: close\r\n\r\n";
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return fail("could not send the request");
  }
  std::string response;
  for (;;) {
    p = {fd, POLLIN, 0};
    if (poll(&p, 1, MsLeft(deadline)) <= 0) return fail("no complete answer within the timeout");
    char buffer[4096];
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n < 0) return fail(std::strerror(errno));
    if (n == 0) break;
    response.append(buffer, static_cast<size_t>(n));
    if (response.size() > 65536) return fail("answer too large");
  }
  close(fd);
  fd = -1;
  PlainHttpResponse out;
  const size_t header_end = response.find("\r\n\r\n");
  if (response.rfind("HTTP/1.", 0) != 0 || header_end == std::string::npos ||
      std::sscanf(response.c_str(), "HTTP/1.%*d %d", &out.status) != 1) {
    return fail("not an HTTP answer");
  }
  out.body = response.substr(header_end + 4);
  return out;
}

}  // namespace cgov
