// Reads a Prometheus-compatible HTTP API (Prometheus, Thanos, Mimir, VictoriaMetrics): instant
// and range queries over /api/v1/query and /api/v1/query_range, with libcurl. Errors say what
// went wrong in words a user can act on: unreachable, not a Prometheus API, a query error.
// An answer is outside input (docs/security.md): each label value enters display-safe and cut to
// 1 KiB; a point whose time or value is not a finite number, or whose value passes 1e15 in size,
// is left out, and a series left with no point is left out with it.
#ifndef CGOV_STORE_PROMETHEUS_SOURCE_H_
#define CGOV_STORE_PROMETHEUS_SOURCE_H_

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/url.h"
#include "os/env.h"
#include "store/prom_query.h"

namespace cgov {

// What one query cost: for `cgov report --verbose`, and for whoever sizes a fleet's store.
struct QueryTrace {
  std::string_view path;  // /api/v1/query or /api/v1/query_range
  std::string_view expr;
  double seconds = 0;  // the request, answer and parse
  size_t bytes = 0;    // the answer as sent (after gzip, as curl counts it: the text's size)
  size_t series = 0, points = 0;
};

class PrometheusSource : public PromQuery {
 public:
  // `base_url`: "http://127.0.0.1:9090" (a path prefix such as /prometheus is kept). `timeout`:
  // for each query, sent to the server too (its `timeout` parameter). `tenant`:
  // sent as X-Scope-OrgID (Grafana Mimir's and Cortex's tenant), "" for none; at most 150
  // characters of a-z A-Z 0-9 ! - _ . * ' ( ), as Mimir allows. `env`: the HTTP client and
  // the clock each query is timed by.
  static Result<PrometheusSource> Open(std::string base_url,
                                       std::chrono::milliseconds timeout = std::chrono::minutes(2),
                                       std::string tenant = "", Env* env = Env::Default());

  // The instant vector of `expr` at Unix time `time_s`.
  Result<std::vector<PromSeries>> Query(const std::string& expr, double time_s) const override;
  // The range of `expr` from start to end (inclusive) every step seconds.
  Result<std::vector<PromSeries>> QueryRange(const std::string& expr, double start_s, double end_s,
                                             double step_s) const;
  // Each request's answer, in the order asked, from up to parallel() requests at a time (a
  // large store answers independent queries on several cores at once). Any failure fails the
  // batch: the first one in the order asked, and no request of it not yet sent is sent.
  Result<std::vector<std::vector<PromSeries>>> QueryAll(
      const std::vector<PromRequest>& requests) const override;
  // Each request's answer handed to `take` (request index, answer) in the order asked, as soon
  // as it and every one before it are in, while later ones are in flight: up to parallel() at
  // once. The `early` requests are sent first; every other is sent in order, and no more than
  // 2 x parallel() ahead of the last one taken (so a batch holds a few answers at a time, not all
  // of them, besides the early ones'). The first failure in the order asked, or the first error
  // `take` returns, ends the batch: no request not yet sent is sent, and that error is returned
  // (where an early request failed before the requests ahead of it were sent, its failure).
  Status QueryEach(
      const std::vector<PromRequest>& requests,
      const std::function<Status(size_t, std::vector<PromSeries>)>& take) const override;
  // As errors and notes show it: credentials in the URL redacted (core/url.h).
  const std::string& url() const override { return shown_url_; }
  // Called after each answered query, from one thread at a time.
  void set_trace(std::function<void(const QueryTrace&)> trace) { trace_ = std::move(trace); }
  // How many of a batch's requests may be in flight at once (at least 1; default 1).
  void set_parallel(int parallel) { parallel_ = std::max(1, parallel); }
  int parallel() const { return parallel_; }

 private:
  PrometheusSource(std::string base_url, std::chrono::milliseconds timeout, std::string tenant,
                   Env* env)
      : base_url_(std::move(base_url)),
        shown_url_(RedactedUrl(base_url_)),
        timeout_(timeout),
        tenant_(std::move(tenant)),
        env_(env) {}
  Result<std::vector<PromSeries>> Get(
      const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
      const std::string& expr) const;
  std::pair<std::string, std::string> TimeoutParam() const;

  std::string base_url_;   // what curl is given
  std::string shown_url_;  // what every message shows
  std::chrono::milliseconds timeout_;
  std::string tenant_;
  Env* env_;
  std::function<void(const QueryTrace&)> trace_;
  int parallel_ = 1;
};

}  // namespace cgov

#endif  // CGOV_STORE_PROMETHEUS_SOURCE_H_
