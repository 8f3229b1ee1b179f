// An HttpClient for tests (os/http_client.h): each request is recorded and answered by the
// test's function, which may call the request's on_header and on_data as libcurl would.
#ifndef CGOV_TESTS_FAKES_FAKE_HTTP_CLIENT_H_
#define CGOV_TESTS_FAKES_FAKE_HTTP_CLIENT_H_

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "os/http_client.h"

namespace cgov {

class FakeHttpClient : public HttpClient {
 public:
  using Answer = std::function<Result<HttpResponse>(const HttpRequest&)>;
  explicit FakeHttpClient(Answer answer) : answer_(std::move(answer)) {}

  Result<HttpResponse> Send(const HttpRequest& request) const override {
    {
      std::lock_guard lock(mu_);
      sent_.push_back(request);
    }
    return answer_(request);
  }
  // What was sent, in order (callbacks included, for inspection only).
  std::vector<HttpRequest> sent() const {
    std::lock_guard lock(mu_);
    return sent_;
  }

  // An answer of `status` with `headers` ("Name: value") and `body`, handed to the request's
  // callbacks as libcurl hands them over.
  static HttpResponse Reply(const HttpRequest& request, long status,
                            const std::vector<std::string>& headers, std::string_view body) {
    HttpResponse r;
    r.end = HttpResponse::End::kComplete;
    r.status = status;
    if (request.on_header) {
      request.on_header("HTTP/1.1 " + std::to_string(status) + " X\r\n");
      for (const std::string& h : headers) request.on_header(h + "\r\n");
    }
    if (request.on_data) {
      if (!body.empty() && !request.on_data(body)) r.end = HttpResponse::End::kRefused;
    } else {
      r.body = std::string(body.substr(0, request.max_body));
    }
    return r;
  }

 private:
  Answer answer_;
  mutable std::mutex mu_;
  mutable std::vector<HttpRequest> sent_;
};

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_HTTP_CLIENT_H_
