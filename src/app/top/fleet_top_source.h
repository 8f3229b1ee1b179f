// `cgov top --prometheus URL`: a fleet's frame from the Prometheus that scrapes its daemons. A
// row per node (each GPU's phase now, utilization, power, its price now and the idle part) and
// the users wasting most today. The day's figures (the fleet's, each node's, each user's) come
// from the very load and summary `cgov report --prometheus --since DAY --until NOW` makes, so
// the two agree; "now" is the counters' growth between their last two scrapes (a phase: the one
// a GPU's phase counters grew most in), gauges as last scraped.
#ifndef CGOV_APP_TOP_FLEET_TOP_SOURCE_H_
#define CGOV_APP_TOP_FLEET_TOP_SOURCE_H_

#include <functional>
#include <memory>
#include <optional>

#include "analysis/history_summary.h"
#include "app/report/history_report_service.h"
#include "app/top/top_source.h"
#include "store/prom_query.h"

namespace cgov {

struct FleetTopOptions {
  // --prometheus and the flags `cgov report` takes with it (tenant, timeout).
  ReportOptions report;
  // How often the day is summarized again (the nodes now are read every frame): a day of a
  // fleet is many queries.
  int64_t day_refresh_ms = 60'000;
  std::function<int64_t()> wall_ms;  // now (Unix ms); the system clock when empty
};

class FleetTopSource : public TopFrames {
 public:
  static Result<std::unique_ptr<FleetTopSource>> Open(const FleetTopOptions& options);
  Result<TopFrame> Frame(int64_t now_mono_ms) override;

 private:
  FleetTopOptions options_;
  PriceCatalog catalog_;
  HistoryOptions history_options_;
  std::unique_ptr<PromQuery> prometheus_;
  std::optional<HistorySummary> day_;
  int64_t day_read_mono_ms_ = 0;
};

// The nodes now and the wasters' GPUs now, from the six instant queries' answers (in the order
// FleetNowQueries lists them), into `frame` (its day figures already set). Pure.
std::vector<std::string> FleetNowQueries();
void FillFleetNow(const std::vector<std::vector<PromSeries>>& answers, TopFrame* frame);

}  // namespace cgov

#endif  // CGOV_APP_TOP_FLEET_TOP_SOURCE_H_
