#include "notify/webhook_post.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "core/text.h"
#include "os/env.h"

namespace cgov {
namespace {

// Retry-After in its delta-seconds form (RFC 9110 10.2.3); an HTTP date is taken as absent.
void ReadRetryAfter(std::string_view line, int64_t* retry_after_ms) {
  constexpr std::string_view kName = "retry-after:";
  const bool match = line.size() > kName.size() &&
                     std::equal(kName.begin(), kName.end(), line.begin(), [](char a, char b) {
                       return a == std::tolower(static_cast<unsigned char>(b));
                     });
  if (!match) return;
  std::string_view value = line.substr(kName.size());
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  int64_t seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec == std::errc() && seconds >= 0 && seconds < 86'400) *retry_after_ms = seconds * 1000;
}

}  // namespace

Result<PostOutcome> PostJson(const std::string& url, const std::string& body,
                             const std::string& idempotency_key, int64_t timeout_ms,
                             const std::atomic<bool>* stop, Env* env) {
  CGOV_ASSIGN_OR_RETURN(const HttpClient* client, env->Http());
  PostOutcome out;
  HttpRequest request;
  request.url = url;
  request.post = true;
  request.post_body = body;
  request.headers = {"Content-Type: application/json", "Idempotency-Key: " + idempotency_key,
                     "Expect:"};  // no 100-continue round trip
  request.timeout = request.connect_timeout = std::chrono::milliseconds(timeout_ms);
  request.max_body = 1024;  // the first KiB of the answer, for the log
  request.on_header = [&out](std::string_view line) { ReadRetryAfter(line, &out.retry_after_ms); };
  request.stop = stop;
  CGOV_ASSIGN_OR_RETURN(HttpResponse answer, client->Send(request));
  if (!answer.complete()) {
    out.retry_after_ms = -1;
    out.error = answer.end == HttpResponse::End::kStopped ? "stopped" : answer.error;
    // curl's message may quote the URL: its path is the secret.
    if (size_t at = out.error.find(url); at != std::string::npos) {
      out.error.replace(at, url.size(), "(the sink's URL)");
    }
    return out;
  }
  out.http_status = answer.status;
  out.error = SafeText(answer.body.substr(0, 200));
  return out;
}

}  // namespace cgov
