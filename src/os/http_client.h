// HTTP behind one seam: every request cgov makes through libcurl (the fleet report's queries,
// the Kubernetes API's list and watch, the kubelet's gRPC call, the webhooks) is an HttpRequest
// sent by an HttpClient. The real one loads libcurl at first use (os/curl_library.h); tests use
// tests/fakes/fake_http_client.h, which answers from the test and records what was asked. (The
// opt-in cloud-metadata GET of `cgov run` is os/http_get.h's own small client: a GPU host's
// `cgov run` loads no HTTP library.)
#ifndef CGOV_OS_HTTP_CLIENT_H_
#define CGOV_OS_HTTP_CLIENT_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct HttpRequest {
  std::string url;
  std::string post_body;  // sent as a POST when `post` is set
  bool post = false;
  std::vector<std::string> headers;    // "Name: value"
  std::string unix_socket;             // connect through this socket instead of the URL's host
  bool http2_prior_knowledge = false;  // HTTP/2 without an upgrade (gRPC over a unix socket)
  std::string ca_file;                 // the server's CA; "" = the system's
  std::chrono::milliseconds timeout{30'000}, connect_timeout{10'000};
  bool accept_encoding = false;  // offer gzip and deflate, decoded before on_data sees the body
  const char* protocols = "http,https";
  // The body as it arrives; false ends the transfer (End::kRefused). Unset: the body is kept in
  // HttpResponse::body, up to `max_body` bytes (the rest dropped, End::kComplete all the same).
  std::function<bool(std::string_view)> on_data;
  size_t max_body = 1 << 20;
  // Each header line of the answer as it arrives ("Retry-After: 5\r\n").
  std::function<void(std::string_view)> on_header;
  // Set from another thread, it ends the transfer within a fraction of a second (End::kStopped).
  const std::atomic<bool>* stop = nullptr;
};

struct HttpResponse {
  // kRefused: on_data ended it; kNoConnection: nothing accepted the connection.
  enum class End { kComplete, kTimedOut, kStopped, kRefused, kNoConnection, kFailed };
  End end = End::kFailed;
  long status = 0;    // the HTTP status once one was read (0: none)
  std::string body;   // without on_data
  std::string error;  // what went wrong, in libcurl's words (kTimedOut, kFailed)
  bool complete() const { return end == End::kComplete; }
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // The exchange, however it ended; an error only when no transfer could be made at all (no
  // libcurl, an option the library refuses: HTTP/2 without nghttp2).
  virtual Result<HttpResponse> Send(const HttpRequest& request) const = 0;
};

// The libcurl client, loaded at first use; Unavailable (naming the package) without libcurl.
Result<const HttpClient*> CurlHttpClient();

// `text` percent-encoded for a URL's query (RFC 3986: all but A-Z a-z 0-9 - . _ ~).
std::string UrlEncode(std::string_view text);

}  // namespace cgov

#endif  // CGOV_OS_HTTP_CLIENT_H_
