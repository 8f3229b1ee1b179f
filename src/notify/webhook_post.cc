#include "notify/webhook_post.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <memory>

#include <fmt/format.h>

#include "core/text.h"
#include "store/curl_library.h"

namespace cgov {
namespace {

struct Transfer {
  const std::atomic<bool>* stop = nullptr;
  std::string body;  // the first KiB of the answer, for the log
  int64_t retry_after_ms = -1;
};

size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  if (t->body.size() < 1024) t->body.append(data, std::min(size * n, 1024 - t->body.size()));
  return size * n;
}

// Retry-After in its delta-seconds form (RFC 9110 10.2.3); an HTTP date is taken as absent.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  const bool match = line.size() > kName.size() &&
                     std::equal(kName.begin(), kName.end(), line.begin(), [](char a, char b) {
                       return a == std::tolower(static_cast<unsigned char>(b));
                     });
  if (match) {
    std::string_view value = line.substr(kName.size());
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    int64_t seconds = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc() && seconds >= 0 && seconds < 86'400) t->retry_after_ms = seconds * 1000;
  }
  return size * n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const std::atomic<bool>* stop = static_cast<Transfer*>(user)->stop;
  return stop != nullptr && stop->load() ? 1 : 0;  // non-zero aborts
}

}  // namespace

Result<PostOutcome> PostJson(const std::string& url, const std::string& body,
                             const std::string& idempotency_key, int64_t timeout_ms,
                             const std::atomic<bool>* stop) {
  CGOV_ASSIGN_OR_RETURN(const CurlLibrary* lib, LoadCurl());
  std::unique_ptr<CURL, decltype(lib->easy_cleanup)> curl(lib->easy_init(), lib->easy_cleanup);
  if (!curl) return Internal("libcurl: cannot start a transfer");
  curl_slist* headers = lib->slist_append(nullptr, "Content-Type: application/json");
  headers = lib->slist_append(headers, ("Idempotency-Key: " + idempotency_key).c_str());
  headers = lib->slist_append(headers, "Expect:");  // no 100-continue round trip
  Transfer t{stop, {}, -1};
  char error[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  lib->easy_setopt(c, CURLOPT_URL, url.c_str());
  lib->easy_setopt(c, CURLOPT_POST, 1L);
  lib->easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
  lib->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  lib->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  lib->easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnData);
  lib->easy_setopt(c, CURLOPT_WRITEDATA, &t);
  lib->easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  lib->easy_setopt(c, CURLOPT_HEADERDATA, &t);
  lib->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  lib->easy_setopt(c, CURLOPT_XFERINFODATA, &t);
  lib->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  lib->easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  lib->easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
  lib->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout_ms));
  lib->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  lib->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  lib->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // a redirect would resend the body elsewhere
  lib->easy_setopt(c, CURLOPT_USERAGENT, "cgov/" CGOV_VERSION);
  const CURLcode code = lib->easy_perform(c);
  lib->slist_free_all(headers);
  PostOutcome out;
  if (code != CURLE_OK) {
    out.error = stop != nullptr && stop->load()
                    ? "stopped"
                    : SafeText(error[0] != 0 ? error : lib->easy_strerror(code));
    // curl's message may quote the URL: its path is the secret.
    if (size_t at = out.error.find(url); at != std::string::npos) {
      out.error.replace(at, url.size(), "(the sink's URL)");
    }
    return out;
  }
  lib->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.http_status);
  out.retry_after_ms = t.retry_after_ms;
  out.error = SafeText(t.body.substr(0, 200));
  return out;
}

}  // namespace cgov
