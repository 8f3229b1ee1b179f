#include "fakes/fake_prom_query.h"

namespace cgov {

Result<std::vector<PromSeries>> FakePromQuery::Ask(const PromRequest& request) const {
  {
    std::lock_guard lock(mu_);
    requests_.push_back(request);
  }
  return answer_(request);
}

Result<std::vector<PromSeries>> FakePromQuery::Query(const std::string& expr, double time_s) const {
  PromRequest r;
  r.expr = expr;
  r.time_s = time_s;
  return Ask(r);
}

Result<std::vector<std::vector<PromSeries>>> FakePromQuery::QueryAll(
    const std::vector<PromRequest>& requests) const {
  std::vector<std::vector<PromSeries>> out;
  for (const PromRequest& r : requests) {
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> answer, Ask(r));
    out.push_back(std::move(answer));
  }
  return out;
}

Status FakePromQuery::QueryEach(
    const std::vector<PromRequest>& requests,
    const std::function<Status(size_t, std::vector<PromSeries>)>& take) const {
  for (size_t i = 0; i < requests.size(); ++i) {
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> answer, Ask(requests[i]));
    CGOV_RETURN_IF_ERROR(take(i, std::move(answer)));
  }
  return Status::Ok();
}

std::vector<PromRequest> FakePromQuery::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

PromSeries Series(const std::vector<std::pair<std::string, std::string>>& labels,
                  std::vector<std::pair<double, double>> points) {
  PromSeries s;
  for (const auto& [name, value] : labels) s.AddLabel(name, value);
  s.points = std::move(points);
  return s;
}

}  // namespace cgov
