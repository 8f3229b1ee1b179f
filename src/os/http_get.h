// One plain-HTTP GET with a hard deadline, for the opt-in cloud metadata lookup. Not a general
// client: http:// with a numeric IPv4 or IPv6 host only (no DNS lookup that could outlast the
// deadline), no redirects, no keep-alive.
#ifndef CGOV_OS_HTTP_GET_H_
#define CGOV_OS_HTTP_GET_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

struct PlainHttpResponse {
  int status = 0;
  std::string body;
};

// GETs `url` ("http://169.254.169.254/latest/meta-data/instance-type") with `headers`
// ("Name: value"), everything (connect, send, receive) within `timeout`. Errors name the URL:
// kInvalidArgument for a URL this client does not take, kUnavailable for refused, timed out or
// malformed answers.
Result<PlainHttpResponse> HttpGet(const std::string& url, const std::vector<std::string>& headers,
                                  std::chrono::milliseconds timeout);

// The same with another method and no body ("PUT" for AWS IMDSv2's token: Content-Length: 0).
Result<PlainHttpResponse> PlainHttpRequest(std::string_view method, const std::string& url,
                                           const std::vector<std::string>& headers,
                                           std::chrono::milliseconds timeout);

}  // namespace cgov

#endif  // CGOV_OS_HTTP_GET_H_
