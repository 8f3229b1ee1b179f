// One HTTP POST of a JSON body to a webhook, through the Env's HttpClient (libcurl's, loaded at
// run time, unless a test gives its own). Blocks for at most `timeout_ms`, or until `*stop` becomes
// true.
#ifndef CGOV_NOTIFY_WEBHOOK_POST_H_
#define CGOV_NOTIFY_WEBHOOK_POST_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "os/env.h"

namespace cgov {

struct PostOutcome {
  long http_status = 0;         // 0: no answer (connection refused, timed out, stopped)
  int64_t retry_after_ms = -1;  // the answer's Retry-After (seconds form), -1 when absent
  std::string error;            // why there was no answer, or the start of the answer's body
};

// Never names the URL in `error`: Slack's and Teams' URLs are credentials.
Result<PostOutcome> PostJson(const std::string& url, const std::string& body,
                             const std::string& idempotency_key, int64_t timeout_ms,
                             const std::atomic<bool>* stop, Env* env = Env::Default());

}  // namespace cgov

#endif  // CGOV_NOTIFY_WEBHOOK_POST_H_
