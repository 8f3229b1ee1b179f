// Test-only: an HTTP server on 127.0.0.1 that answers every request the same way (or as a handler
// says, request by request) and records what it was asked. Bounded: it serves at most
// `max_requests` and stops when destroyed.
#ifndef CGOV_TESTS_FAKES_FAKE_HTTP_SERVER_H_
#define CGOV_TESTS_FAKES_FAKE_HTTP_SERVER_H_

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cgov {

class FakeHttpServer {
 public:
  // `delay_ms` before answering (a server that hangs: longer than the client's timeout).
  FakeHttpServer(int status, std::string body, int delay_ms = 0, int max_requests = 16);
  // Answers each request head with what `handler` returns for it: {status, body}.
  using Handler = std::function<std::pair<int, std::string>(const std::string& head)>;
  explicit FakeHttpServer(Handler handler, int max_requests = 16);
  ~FakeHttpServer();

  int port() const { return port_; }
  std::string url(const std::string& path) const;
  std::vector<std::string> requests();  // the raw request heads received

 private:
  void Serve();

  void Listen();

  Handler handler_;
  int status_ = 200;
  std::string body_;
  int delay_ms_;
  int max_requests_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_HTTP_SERVER_H_
