#include "os/http_client.h"

#include <memory>

#include <fmt/format.h>

#include "core/text.h"
#include "os/curl_library.h"

namespace cgov {
namespace {

struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
};

size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t bytes = size * n;
  if (t->request->on_data) {
    if (!t->request->on_data(std::string_view(data, bytes))) {
      t->response->end = HttpResponse::End::kRefused;
      return 0;  // curl ends the transfer
    }
    return bytes;
  }
  std::string& body = t->response->body;
  if (body.size() < t->request->max_body) {
    body.append(data, std::min(bytes, t->request->max_body - body.size()));
  }
  return bytes;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->request->on_header) t->request->on_header(std::string_view(data, size * n));
  return size * n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const std::atomic<bool>* stop = static_cast<Transfer*>(user)->request->stop;
  return stop != nullptr && stop->load() ? 1 : 0;  // non-zero aborts
}

class CurlClient : public HttpClient {
 public:
  explicit CurlClient(const CurlLibrary* lib) : lib_(lib) {}
  Result<HttpResponse> Send(const HttpRequest& request) const override;

 private:
  // False when the transfer could not be held to its protocols (it must not run then).
  bool SetOptions(CURL* c, const HttpRequest& r, curl_slist* headers, Transfer* t,
                  char* error) const;
  const CurlLibrary* lib_;
};

bool CurlClient::SetOptions(CURL* c, const HttpRequest& r, curl_slist* headers, Transfer* t,
                            char* error) const {
  const CurlLibrary& lib = *lib_;
  lib.easy_setopt(c, CURLOPT_URL, r.url.c_str());
  if (headers != nullptr) lib.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (r.post) {
    lib.easy_setopt(c, CURLOPT_POST, 1L);
    lib.easy_setopt(c, CURLOPT_POSTFIELDS, r.post_body.data());
    lib.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.post_body.size()));
  }
  if (!r.unix_socket.empty()) lib.easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, r.unix_socket.c_str());
  if (!r.ca_file.empty()) lib.easy_setopt(c, CURLOPT_CAINFO, r.ca_file.c_str());
  if (r.accept_encoding) lib.easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  lib.easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnData);
  lib.easy_setopt(c, CURLOPT_WRITEDATA, t);
  lib.easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  lib.easy_setopt(c, CURLOPT_HEADERDATA, t);
  if (r.stop != nullptr) {
    lib.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    lib.easy_setopt(c, CURLOPT_XFERINFODATA, t);
    lib.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  }
  lib.easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  lib.easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(r.timeout.count()));
  lib.easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(r.connect_timeout.count()));
  lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  // A redirect would resend a POST's body, or a bearer token, elsewhere: never followed.
  lib.easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  lib.easy_setopt(c, CURLOPT_USERAGENT, "cgov/" CGOV_VERSION);
  return RestrictProtocols(lib, c, r.protocols);
}

Result<HttpResponse> CurlClient::Send(const HttpRequest& request) const {
  const CurlLibrary& lib = *lib_;
  std::unique_ptr<CURL, decltype(lib.easy_cleanup)> curl(lib.easy_init(), lib.easy_cleanup);
  if (!curl) return Internal("libcurl: cannot start a transfer");
  if (request.http2_prior_knowledge &&
      lib.easy_setopt(curl.get(), CURLOPT_HTTP_VERSION,
                      long{CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE}) != CURLE_OK) {
    return Unavailable("this libcurl was built without HTTP/2 (nghttp2)");
  }
  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = lib.slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, decltype(lib.slist_free_all)> header_list(headers,
                                                                        lib.slist_free_all);
  HttpResponse response;
  response.end = HttpResponse::End::kComplete;
  Transfer t{&request, &response};
  char error[CURL_ERROR_SIZE] = {0};
  if (!SetOptions(curl.get(), request, headers, &t, error)) {
    return Unavailable(fmt::format("libcurl: cannot limit a transfer to the protocols {}",
                                   SafeText(request.protocols)));
  }
  const CURLcode code = lib.easy_perform(curl.get());
  lib.easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &response.status);
  if (code == CURLE_OK || response.end == HttpResponse::End::kRefused) return response;
  if (request.stop != nullptr && request.stop->load()) {
    response.end = HttpResponse::End::kStopped;
  } else {
    response.end = code == CURLE_OPERATION_TIMEDOUT ? HttpResponse::End::kTimedOut
                   : code == CURLE_COULDNT_CONNECT  ? HttpResponse::End::kNoConnection
                                                    : HttpResponse::End::kFailed;
  }
  response.error = SafeText(error[0] != 0 ? error : lib.easy_strerror(code));
  return response;
}

}  // namespace

Result<const HttpClient*> CurlHttpClient() {
  CGOV_ASSIGN_OR_RETURN(const CurlLibrary* lib, LoadCurl());
  static const CurlClient client(lib);
  return &client;
}

std::string UrlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace cgov
