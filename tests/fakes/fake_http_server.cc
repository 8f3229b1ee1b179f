#include "fakes/fake_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

namespace cgov {

FakeHttpServer::FakeHttpServer(int status, std::string body, int delay_ms, int max_requests)
    : status_(status), body_(std::move(body)), delay_ms_(delay_ms), max_requests_(max_requests) {
  Listen();
}

FakeHttpServer::FakeHttpServer(Handler handler, int max_requests)
    : handler_(std::move(handler)), delay_ms_(0), max_requests_(max_requests) {
  Listen();
}

void FakeHttpServer::Listen() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;  // any free port
  bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  listen(listen_fd_, 8);
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

FakeHttpServer::~FakeHttpServer() {
  stop_ = true;
  thread_.join();
  close(listen_fd_);
}

std::string FakeHttpServer::url(const std::string& path) const {
  return fmt::format("http://127.0.0.1:{}{}", port_, path);
}

std::vector<std::string> FakeHttpServer::requests() {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void FakeHttpServer::Serve() {
  for (int served = 0; served < max_requests_ && !stop_;) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++served;
    std::string request;
    char buffer[4096];
    for (int i = 0; i < 100 && request.find("\r\n\r\n") == std::string::npos; ++i) {
      pollfd q{fd, POLLIN, 0};
      if (poll(&q, 1, 20) <= 0) continue;
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      request.append(buffer, static_cast<size_t>(n));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(request);
    }
    for (int waited = 0; waited < delay_ms_ && !stop_; waited += 10) usleep(10'000);
    const auto [status, body] = handler_ ? handler_(request) : std::pair(status_, body_);
    std::string response =
        fmt::format("HTTP/1.1 {} X\r\nContent-Length: {}\r\n\r\n{}", status, body.size(), body);
    send(fd, response.data(), response.size(), MSG_NOSIGNAL);
    close(fd);
  }
}

}  // namespace cgov
