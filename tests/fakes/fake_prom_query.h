// A Prometheus for the fleet loader's tests without HTTP: each request is answered by the test's
// function (series built with Series()), in the order asked, and every request is recorded.
#ifndef CGOV_TESTS_FAKES_FAKE_PROM_QUERY_H_
#define CGOV_TESTS_FAKES_FAKE_PROM_QUERY_H_

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/prom_query.h"

namespace cgov {

class FakePromQuery : public PromQuery {
 public:
  using Answer = std::function<Result<std::vector<PromSeries>>(const PromRequest&)>;
  explicit FakePromQuery(Answer answer, std::string url = "fake://prometheus")
      : answer_(std::move(answer)), url_(std::move(url)) {}

  Result<std::vector<PromSeries>> Query(const std::string& expr, double time_s) const override;
  Result<std::vector<std::vector<PromSeries>>> QueryAll(
      const std::vector<PromRequest>& requests) const override;
  Status QueryEach(
      const std::vector<PromRequest>& requests,
      const std::function<Status(size_t, std::vector<PromSeries>)>& take) const override;
  const std::string& url() const override { return url_; }

  // What was asked, in order.
  std::vector<PromRequest> requests() const;

 private:
  Result<std::vector<PromSeries>> Ask(const PromRequest& request) const;

  Answer answer_;
  std::string url_;
  mutable std::mutex mu_;
  mutable std::vector<PromRequest> requests_;
};

// One series with `labels` and its (Unix seconds, value) points.
PromSeries Series(const std::vector<std::pair<std::string, std::string>>& labels,
                  std::vector<std::pair<double, double>> points);

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_PROM_QUERY_H_
