#include "export/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include "core/base64.h"
#include "core/text.h"
#include "export/http_libraries.h"
#include "os/worker.h"
#include "os/zlib_library.h"

namespace cgov {

// The loaded libmicrohttpd. REQUIRES: LoadMicrohttpd() succeeded (HttpServer::Start checks it
// before any callback can run).
static const MicrohttpdLibrary& Mhd() { return **LoadMicrohttpd(); }

// zlib's level 6 (its default): client_golang's promhttp compresses at gzip's default as well.
constexpr int kGzipLevel = 6;
constexpr char kTlsPriorities[] = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";

struct HttpServer::State {
  ServedHandler handler;
  std::unique_ptr<BasicAuthChecker> auth;
  std::vector<std::string> open_paths;
  std::atomic<uint64_t> answered{0}, refused{0}, cut_off{0};

  // Each open connection, for the head deadline. libmicrohttpd resets its own timeout at every
  // byte, so a client dripping one header line every few seconds would hold its slot forever:
  // the watchdog thread shuts down the socket of a connection whose head is late, and
  // libmicrohttpd, seeing its end, closes it. A connection leaves the map (CLOSED) before
  // libmicrohttpd closes its descriptor, and both happen under `mu`, so the watchdog never shuts
  // down a descriptor that has been reused.
  struct Open {
    int fd = -1;
    std::chrono::steady_clock::time_point since;  // its head could start from here
    bool in_request = false;                      // its head is whole: being answered
    bool cut = false;
  };
  Env* env = nullptr;  // options.env
  std::mutex mu;
  std::unordered_map<MHD_Connection*, Open> open;
  std::chrono::steady_clock::duration head_deadline, pressed_head_deadline;
  size_t pressed_from = 0;   // connections open
  size_t waiting_limit = 0;  // heads not yet whole
  static constexpr std::chrono::milliseconds kEvictAfter{250};
  Worker watchdog;  // woken by each new connection and each answered request

  // One pass over the open connections; how long until the next head falls due.
  Worker::Wait Watch();
  void Stop() { watchdog.Stop(); }
};

Worker::Wait HttpServer::State::Watch() {
  std::lock_guard lock(mu);
  std::vector<std::pair<std::chrono::steady_clock::time_point, Open*>> waiting;
  {
    const auto now = env->SteadyNow();
    const auto deadline = open.size() > pressed_from ? pressed_head_deadline : head_deadline;
    auto next = std::chrono::steady_clock::time_point::max();
    auto cut = [&](Open& o) {
      o.cut = true;
      cut_off.fetch_add(1, std::memory_order_relaxed);  // counted before the client can see it
      shutdown(o.fd, SHUT_RDWR);
    };
    waiting.clear();
    for (auto& [connection, o] : open) {
      if (o.in_request || o.cut) continue;
      if (now - o.since >= deadline) {
        cut(o);
      } else {
        waiting.emplace_back(o.since, &o);
        next = std::min(next, o.since + deadline);
      }
    }
    // Slots kept for heads that come whole at once (a scrape, a probe): past `waiting_limit`
    // heads still waiting, the oldest go first, once they have waited kEvictAfter (a real head
    // is read within milliseconds of the connection), so clients reconnecting as fast as they
    // are cut off never hold every slot for long.
    if (waiting.size() > waiting_limit) {
      std::sort(waiting.begin(), waiting.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (size_t i = 0; i < waiting.size() - waiting_limit; ++i) {
        if (now - waiting[i].first >= kEvictAfter) {
          cut(*waiting[i].second);
        } else {
          next = std::min(next, waiting[i].first + kEvictAfter);
        }
      }
    }
    // Woken by a new connection too: it may bring the pressed deadline.
    if (next == std::chrono::steady_clock::time_point::max()) return Worker::kUntilWoken;
    return std::max<Worker::Wait>(Worker::Wait(0), next - env->SteadyNow());
  }
}

namespace {

int g_first_call_marker = 0;

void NotifyConnection(void* cls, MHD_Connection* connection, void**,
                      MHD_ConnectionNotificationCode code) {
  auto* state = static_cast<HttpServer::State*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const MHD_ConnectionInfo* info =
        Mhd().get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == nullptr) return;
    {
      std::lock_guard lock(state->mu);
      state->open[connection] = {info->connect_fd, state->env->SteadyNow()};
    }
    state->watchdog.Wake();
  } else {
    std::lock_guard lock(state->mu);
    state->open.erase(connection);
  }
}

// A request answered (or abandoned): the connection's next head may start now.
void RequestDone(void* cls, MHD_Connection* connection, void**, MHD_RequestTerminationCode) {
  auto* state = static_cast<HttpServer::State*>(cls);
  std::lock_guard lock(state->mu);
  if (auto it = state->open.find(connection); it != state->open.end()) {
    it->second.in_request = false;
    it->second.since = state->env->SteadyNow();
  }
  state->watchdog.Wake();
}

MHD_Result Queue(MHD_Connection* connection, const ServedResponse& r, bool close = false) {
  MHD_Response* response = Mhd().create_response_from_buffer(
      r.body.size(), const_cast<char*>(r.body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  Mhd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, r.content_type.c_str());
  Mhd().add_response_header(response, "X-Content-Type-Options", "nosniff");
  if (!r.content_encoding.empty()) {
    Mhd().add_response_header(response, MHD_HTTP_HEADER_CONTENT_ENCODING,
                              r.content_encoding.c_str());
  }
  if (r.status == 200) Mhd().add_response_header(response, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
  if (close) Mhd().add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  if (r.status == 405) Mhd().add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  if (r.status == 429) Mhd().add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  const MHD_Result ret =
      Mhd().queue_response(connection, static_cast<unsigned>(r.status), response);
  Mhd().destroy_response(response);
  return ret;
}

MHD_Result Refuse(HttpServer::State* state, MHD_Connection* connection, int status,
                  std::string body) {
  state->refused.fetch_add(1, std::memory_order_relaxed);
  ServedResponse r;
  r.status = status;
  r.body = std::move(body);
  return Queue(connection, r, /*close=*/true);
}

MHD_Result AddArgument(void* cls, MHD_ValueKind, const char* key, const char* value) {
  (*static_cast<std::map<std::string, std::string>*>(cls))[key] = value != nullptr ? value : "";
  return MHD_YES;
}

MHD_Result Answer(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/, size_t* upload_data_size,
                  void** request_state) {
  auto* state = static_cast<HttpServer::State*>(cls);
  // The first call comes right after the request head: a request that is refused is refused
  // then, its body never read, and the connection closed. An accepted request (it has no body)
  // is answered on the next call, once libmicrohttpd has the whole request: an answer queued
  // earlier makes it close the connection, so keep-alive and pipelined requests would get one
  // answer each.
  if (*request_state == nullptr) {
    *request_state = &g_first_call_marker;
    {
      std::lock_guard lock(state->mu);
      if (auto it = state->open.find(connection); it != state->open.end()) {
        it->second.in_request = true;
      }
    }
    const std::string_view m = method;
    if (m != MHD_HTTP_METHOD_GET && m != MHD_HTTP_METHOD_HEAD) {
      return Refuse(state, connection, 405, "only GET and HEAD\n");
    }
    const char* length =
        Mhd().lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char* encoding = Mhd().lookup_connection_value(connection, MHD_HEADER_KIND,
                                                         MHD_HTTP_HEADER_TRANSFER_ENCODING);
    if (encoding != nullptr || (length != nullptr && std::string_view(length) != "0") ||
        *upload_data_size > 0) {
      return Refuse(state, connection, 413, "request bodies are not accepted\n");
    }
    return MHD_YES;
  }
  if (*upload_data_size > 0) {  // not reached: a request with a body was refused above
    *upload_data_size = 0;
    return MHD_YES;
  }
  const bool open_path = std::find(state->open_paths.begin(), state->open_paths.end(),
                                   std::string_view(url)) != state->open_paths.end();
  if (state->auth->enabled() && !open_path) {
    // Decoded here, not by libmicrohttpd: its C strings end a password at an embedded NUL
    // ("pass\0anything" passed as "pass"), and it wants the scheme spelt "Basic".
    size_t header_size = 0;
    const char* header = nullptr;
    const bool found =
        Mhd().lookup_connection_value_n(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION,
                                        std::strlen(MHD_HTTP_HEADER_AUTHORIZATION), &header,
                                        &header_size) == MHD_YES;
    const auto credentials =
        found ? ParseBasicAuthorization(std::string_view(header, header_size)) : std::nullopt;
    const AuthVerdict verdict = credentials
                                    ? state->auth->Check(credentials->first, credentials->second)
                                    : AuthVerdict::kDenied;
    if (verdict == AuthVerdict::kBusy) {
      return Refuse(state, connection, 429, "too many password checks at once; try again\n");
    }
    if (verdict != AuthVerdict::kOk) {
      state->refused.fetch_add(1, std::memory_order_relaxed);
      const std::string body = "authentication required\n";
      MHD_Response* response = Mhd().create_response_from_buffer(
          body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
      if (response == nullptr) return MHD_NO;
      const MHD_Result ret = Mhd().queue_basic_auth_fail_response(connection, "cgov", response);
      Mhd().destroy_response(response);
      return ret;
    }
  }
  ServedRequest request;
  request.path = url;
  Mhd().get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &AddArgument, &request.query);
  if (const char* accept =
          Mhd().lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT)) {
    request.accept = accept;
  }
  ServedResponse response = state->handler(request);
  state->answered.fetch_add(1, std::memory_order_relaxed);
  const char* encodings =
      Mhd().lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
  if (response.status == 200 && response.body.size() >= kGzipMinBytes && encodings != nullptr &&
      AcceptsGzip(encodings)) {
    // zlib is loaded by the first scrape that asks; without it the body goes as it is.
    if (Result<const ZlibLibrary*> zlib = LoadZlib(); zlib.ok()) {
      if (Result<std::string> packed = GzipCompress(**zlib, response.body, kGzipLevel);
          packed.ok()) {
        response.body = std::move(packed).value();
        response.content_encoding = "gzip";
      }
    }
  }
  return Queue(connection, response);
}

void Quiet(void*, const char*, va_list) {}

}  // namespace

namespace {

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool AcceptsGzip(std::string_view accept_encoding) {
  std::optional<bool> gzip, any;
  while (!accept_encoding.empty()) {
    const size_t comma = accept_encoding.find(',');
    std::string_view item = accept_encoding.substr(0, comma);
    accept_encoding =
        comma == std::string_view::npos ? std::string_view() : accept_encoding.substr(comma + 1);
    const size_t semicolon = item.find(';');
    std::string_view name = TrimBlanks(item.substr(0, semicolon));
    bool accepted = true;
    if (semicolon != std::string_view::npos) {
      std::string_view params = TrimBlanks(item.substr(semicolon + 1));
      if (params.size() >= 2 && (params[0] == 'q' || params[0] == 'Q') && params[1] == '=') {
        // q=0, q=0.0, q=0.000: refused; any other value accepts.
        std::string_view q = TrimBlanks(params.substr(2));
        accepted = q.find_first_not_of("0.") != std::string_view::npos;
      }
    }
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "gzip" || lower == "x-gzip") {
      gzip = gzip.value_or(true) && accepted;
    } else if (lower == "*") {
      any = accepted;
    }
  }
  return gzip ? *gzip : any.value_or(false);
}

bool ListenAddress::IsLoopback() const { return host == "::1" || host.starts_with("127."); }

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  ListenAddress a;
  const auto colon = text.rfind(':');
  auto bad = [&](std::string_view why) {
    return InvalidArgument(fmt::format(
        "--listen {}: {} (expected HOST:PORT such as 127.0.0.1:9400, [::1]:9400 or 0.0.0.0:9400)",
        SafeText(text), why));
  };
  if (colon == std::string_view::npos) {
    const bool digits = !text.empty() && text.find_first_not_of("0123456789") == text.npos;
    return digits ? bad(fmt::format("a port alone; name the address too: 127.0.0.1:{} (this host "
                                    "only) or 0.0.0.0:{} (every interface)",
                                    text, text))
                  : bad("no port");
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || port.empty() || value > 65535) {
    return bad("the port is not a number from 0 to 65535");
  }
  a.port = static_cast<uint16_t>(value);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    a.ipv6 = true;
  }
  if (host.empty()) return bad("no host (use 0.0.0.0 to listen on every interface)");
  if (host == "localhost") host = "127.0.0.1";
  a.host = host;
  unsigned char buffer[sizeof(in6_addr)];
  if (inet_pton(a.ipv6 ? AF_INET6 : AF_INET, a.host.c_str(), buffer) != 1) {
    return bad(a.ipv6 ? "not a numeric IPv6 address"
                      : "not a numeric IPv4 address or localhost (IPv6 goes in brackets)");
  }
  return a;
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                      ServedHandler handler) {
  const ListenAddress& a = options.address;
  const std::string where =
      a.ipv6 ? fmt::format("[{}]:{}", a.host, a.port) : fmt::format("{}:{}", a.host, a.port);
  if (Result<const MicrohttpdLibrary*> mhd = LoadMicrohttpd(); !mhd.ok()) return mhd.status();
  const int fd = socket(a.ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Internal(fmt::format("--listen {}: socket: {}", where, std::strerror(errno)));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (a.ipv6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&storage);
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons(a.port);
    inet_pton(AF_INET6, a.host.c_str(), &s6->sin6_addr);
    length = sizeof(*s6);
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&storage);
    s4->sin_family = AF_INET;
    s4->sin_port = htons(a.port);
    inet_pton(AF_INET, a.host.c_str(), &s4->sin_addr);
    length = sizeof(*s4);
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0 || listen(fd, 256) != 0) {
    const int error = errno;
    close(fd);
    return Unavailable(fmt::format("--listen {}: {}", where, std::strerror(error)));
  }
  getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length);
  const uint16_t port = ntohs(a.ipv6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                                     : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);

  std::unique_ptr<HttpServer> server(new HttpServer());
  server->state_ = std::make_unique<State>();
  server->state_->handler = std::move(handler);
  server->state_->auth = std::make_unique<BasicAuthChecker>(options.users, &options.env->clock());
  server->state_->open_paths = options.open_paths;
  server->state_->env = options.env;
  server->state_->head_deadline = std::chrono::seconds(options.head_deadline_s);
  server->state_->pressed_head_deadline =
      std::chrono::milliseconds(options.pressed_head_deadline_ms);
  server->state_->pressed_from = options.connection_limit / 2;
  server->state_->waiting_limit = options.connection_limit - options.connection_limit / 8;
  server->port_ = port;
  // poll(), not epoll: with epoll libmicrohttpd 0.9.75 noticed a client's end of input only at
  // the idle timeout, so a client that half-closed held its slot for 10 s.
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
  if (a.ipv6) flags |= MHD_USE_IPv6;
  const bool tls = options.tls || !options.tls_cert_pem.empty() || !options.tls_key_pem.empty();
  if (tls && (options.tls_cert_pem.empty() || options.tls_key_pem.empty())) {
    close(fd);
    return InvalidArgument("TLS: a certificate and a key are both needed; not serving plain HTTP");
  }
  if (tls) {
    if (Mhd().is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
      close(fd);
      return Unavailable("TLS: this libmicrohttpd was built without TLS support");
    }
    flags |= MHD_USE_TLS;
  }
  MHD_OptionItem tls_options[] = {
      {MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(options.tls_cert_pem.c_str())},
      {MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(options.tls_key_pem.c_str())},
      // GnuTLS priorities: its defaults, less every protocol version but TLS 1.3 and 1.2.
      {MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(kTlsPriorities)},
      {MHD_OPTION_END, 0, nullptr}};
  MHD_OptionItem no_options[] = {{MHD_OPTION_END, 0, nullptr}};
  server->daemon_ = Mhd().start_daemon(
      flags, 0, nullptr, nullptr, &Answer, server->state_.get(), MHD_OPTION_LISTEN_SOCKET, fd,
      MHD_OPTION_CONNECTION_LIMIT, options.connection_limit, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      options.per_address_limit, MHD_OPTION_CONNECTION_TIMEOUT, options.timeout_s,
      MHD_OPTION_NOTIFY_CONNECTION, &NotifyConnection, server->state_.get(),
      MHD_OPTION_NOTIFY_COMPLETED, &RequestDone, server->state_.get(),
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, options.memory_limit_bytes, MHD_OPTION_THREAD_POOL_SIZE,
      options.threads, MHD_OPTION_EXTERNAL_LOGGER, &Quiet, nullptr, MHD_OPTION_ARRAY,
      tls ? tls_options : no_options, MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    close(fd);
    return Unavailable(fmt::format("--listen {}: the HTTP server did not start{}", where,
                                   tls ? " (check the TLS certificate and key)" : ""));
  }
  State* state = server->state_.get();
  // Without its thread the server still answers; only late heads are not cut off.
  (void)state->watchdog.Start("cgov-http-watch", Worker::Wait(0),
                              [state] { return state->Watch(); });
  return server;
}

HttpServer::~HttpServer() {
  // Closes the listening socket and every open connection, and joins the server's threads; then
  // the watchdog, which may still have shut a socket down meanwhile, never one reused.
  if (daemon_ != nullptr) Mhd().stop_daemon(daemon_);
  if (state_) state_->Stop();
}

uint64_t HttpServer::answered() const { return state_->answered.load(); }
uint64_t HttpServer::refused() const { return state_->refused.load(); }
uint64_t HttpServer::cut_off() const { return state_->cut_off.load(); }

Result<std::pair<std::string, std::string>> ParseBasicAuthFile(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size() ||
      text.find('\n') != std::string_view::npos) {
    return InvalidArgument("line 1: expected USER:PASSWORD on one line");
  }
  return std::pair{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

Result<CertificateInfo> ReadCertificateInfo(std::string_view pem) {
  CGOV_ASSIGN_OR_RETURN(const GnutlsLibrary* tls, LoadGnutls());
  gnutls_x509_crt_t crt = nullptr;
  if (tls->crt_init(&crt) != GNUTLS_E_SUCCESS) return Internal("TLS: out of memory");
  gnutls_datum_t data{reinterpret_cast<unsigned char*>(const_cast<char*>(pem.data())),
                      static_cast<unsigned>(std::min<size_t>(pem.size(), UINT32_MAX))};
  const int imported = tls->crt_import(crt, &data, GNUTLS_X509_FMT_PEM);
  if (imported != GNUTLS_E_SUCCESS) {
    tls->crt_deinit(crt);
    return InvalidArgument(
        fmt::format("not a PEM X.509 certificate ({})", tls->strerror(imported)));
  }
  CertificateInfo info;
  info.not_before_s = tls->crt_get_activation_time(crt);
  info.not_after_s = tls->crt_get_expiration_time(crt);
  gnutls_datum_t dn{};
  if (tls->crt_get_dn3(crt, &dn, 0) == GNUTLS_E_SUCCESS) {
    info.subject = SafeText(std::string_view(reinterpret_cast<char*>(dn.data), dn.size));
    (*tls->free)(dn.data);
  }
  tls->crt_deinit(crt);
  return info;
}

std::optional<std::pair<std::string, std::string>> ParseBasicAuthorization(
    std::string_view header) {
  while (!header.empty() && header.front() == ' ') header.remove_prefix(1);
  const size_t space = header.find(' ');
  if (space != 5) return std::nullopt;
  for (size_t i = 0; i < 5; ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != "basic"[i]) return std::nullopt;
  }
  std::string_view token = header.substr(space);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  std::optional<std::string> decoded = Base64Decode(token);
  if (!decoded) return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::pair{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

}  // namespace cgov
