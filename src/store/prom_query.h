// What the fleet report asks of a Prometheus-compatible store, behind a seam: the real client
// is prometheus_source.h's (libcurl); tests/fakes/fake_prom_query.h answers from the test and
// records what was asked.
#ifndef CGOV_STORE_PROM_QUERY_H_
#define CGOV_STORE_PROM_QUERY_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace cgov {

// One series of an answer. A fleet's answer holds hundreds of thousands of them, so the labels
// are packed into one string (each name and value length-prefixed, in name order) instead of a
// map of strings per series: ~200 bytes a series instead of ~1 KiB.
class PromSeries {
 public:
  std::vector<std::pair<double, double>> points;  // (Unix seconds, value); one for instant queries

  // The value of label `name`, "" when the series has none.
  std::string Label(std::string_view name) const;
  // Adds name=value, kept in name order; a name the series has already keeps its first value.
  void AddLabel(std::string_view name, std::string_view value);
  // The labels in name order.
  std::vector<std::pair<std::string_view, std::string_view>> Labels() const;
  // The label set as one string, equal for equal label sets whatever order they came in: a key.
  const std::string& LabelKey() const { return packed_; }
  // No labels and no points, keeping the memory they had (a reader reuses one series).
  void Clear() {
    packed_.clear();
    points.clear();
  }

 private:
  std::string packed_;
};

// One query of a batch: instant at `time_s`, or over a range when `step_s` > 0.
struct PromRequest {
  std::string expr;
  double time_s = 0;
  double start_s = 0, end_s = 0, step_s = 0;
  // Sent with a batch's first requests, ahead of its place (QueryEach): a query known to be slow,
  // so that it is not the last one answered while the server's other cores have nothing to do.
  bool early = false;
};

class PromQuery {
 public:
  virtual ~PromQuery() = default;
  // The instant vector of `expr` at Unix time `time_s`.
  virtual Result<std::vector<PromSeries>> Query(const std::string& expr, double time_s) const = 0;
  // Each request's answer, in the order asked. Any failure fails the batch.
  virtual Result<std::vector<std::vector<PromSeries>>> QueryAll(
      const std::vector<PromRequest>& requests) const = 0;
  // Each request's answer handed to `take` (request index, answer) in the order asked; the
  // first failure, or the first error `take` returns, ends the batch and is returned.
  virtual Status QueryEach(
      const std::vector<PromRequest>& requests,
      const std::function<Status(size_t, std::vector<PromSeries>)>& take) const = 0;
  // Where the answers come from, as errors name it.
  virtual const std::string& url() const = 0;
};

}  // namespace cgov

#endif  // CGOV_STORE_PROM_QUERY_H_
