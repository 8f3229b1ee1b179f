// The embedded HTTP endpoint of `cgov daemon --listen`: libmicrohttpd with an event loop (a slow
// client holds a connection slot, never a thread), a connection limit overall and per client
// address, an idle timeout and a total deadline for each request head (a client dripping a byte
// at a time is cut off however it paces them), a per-connection memory limit (oversized headers
// are refused), no request bodies, GET and HEAD only, optional basic auth and TLS.
#ifndef CGOV_EXPORT_HTTP_SERVER_H_
#define CGOV_EXPORT_HTTP_SERVER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "export/basic_auth.h"
#include "os/env.h"

struct MHD_Daemon;

namespace cgov {

struct ListenAddress {
  std::string host;  // numeric IPv4 or IPv6 (without brackets)
  uint16_t port = 0;
  bool ipv6 = false;
  bool IsLoopback() const;
};
// "127.0.0.1:9400", "[::1]:9400", "localhost:9400" (= 127.0.0.1), "0.0.0.0:9400". Port 0 picks one.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// USER and PASSWORD from an Authorization header "Basic base64(USER:PASSWORD)" (RFC 7617: the
// scheme is case-insensitive; the password is every byte after the first colon, NULs included).
// nullopt when the header is anything else.
std::optional<std::pair<std::string, std::string>> ParseBasicAuthorization(std::string_view header);

// What a PEM certificate (the first one in `pem`) says of itself, for the daemon's warnings.
struct CertificateInfo {
  int64_t not_before_s = 0;  // Unix seconds
  int64_t not_after_s = 0;
  std::string subject;  // its distinguished name, SafeText
};
// Errors when `pem` holds no X.509 certificate that GnuTLS can read (the server would then not
// start, so the daemon says why first).
Result<CertificateInfo> ReadCertificateInfo(std::string_view pem);

// The contents of a --basic-auth-file: one line "USER:PASSWORD" (a final newline allowed; the
// password is every byte after the first colon). Errors say what is wrong ("line 1: …").
Result<std::pair<std::string, std::string>> ParseBasicAuthFile(std::string_view text);

struct HttpServerOptions {
  ListenAddress address;
  unsigned connection_limit = 128;
  // Connections one client address may hold at once; more are closed as they come. A scraper
  // needs one (two for an HA pair): 130 slow connections from one address hold 16 slots, not all.
  unsigned per_address_limit = 16;
  unsigned timeout_s = 10;  // a connection that sends nothing this long is closed
  // A request head must be whole this long after it could start (the connection opened or the
  // previous answer went), however its bytes are paced; then the connection is closed. When more
  // than half the slots are taken, the deadline is `pressed_head_deadline_ms` instead: a real
  // client sends its head in one packet. And an eighth of the slots is kept for heads that come
  // whole: past 7/8 of them waiting, the oldest waiting heads are cut off at once.
  unsigned head_deadline_s = 10;
  unsigned pressed_head_deadline_ms = 2000;
  size_t memory_limit_bytes = 32768;  // per connection: the request head must fit
  unsigned threads = 2;
  std::vector<BasicAuthUser> users;  // empty: no authentication
  // Paths answered without credentials even when authentication is on (liveness probes send
  // none): they must say nothing secret.
  std::vector<std::string> open_paths;
  bool tls = false;          // HTTPS: TLS 1.2 or 1.3, or the server does not start
  std::string tls_cert_pem;  // both set: HTTPS
  std::string tls_key_pem;
  Env* env = Env::Default();  // the clocks of the head deadlines and of the bcrypt budget
};

struct ServedRequest {
  std::string path;
  std::string accept;
  std::map<std::string, std::string> query;  // URL query arguments, decoded
};

struct ServedResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string content_encoding;  // "gzip" once the server compressed `body`
};

// Whether an Accept-Encoding header (RFC 9110 12.5.3) takes gzip: named (or x-gzip), or `*`,
// with a q-value above 0; an explicit gzip;q=0 refuses it whatever `*` says.
bool AcceptsGzip(std::string_view accept_encoding);

// Bodies smaller than this are served as they are: the gzip framing would outweigh the saving.
inline constexpr size_t kGzipMinBytes = 1024;

using ServedHandler = std::function<ServedResponse(const ServedRequest&)>;

class HttpServer {
 public:
  // Binds and starts serving on its own threads; errors name the address.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                   ServedHandler handler);
  ~HttpServer();  // stops: open connections are closed
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const { return port_; }
  // Requests answered and refused so far, and connections cut off for a late head (for tests
  // and the daemon's own metrics).
  uint64_t answered() const;
  uint64_t refused() const;
  uint64_t cut_off() const;

  struct State;  // shared with the libmicrohttpd callbacks

 private:
  HttpServer() = default;
  MHD_Daemon* daemon_ = nullptr;
  std::unique_ptr<State> state_;
  uint16_t port_ = 0;
};

}  // namespace cgov

#endif  // CGOV_EXPORT_HTTP_SERVER_H_
