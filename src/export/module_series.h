// The series two daemon modules serve beside the registry's own (export/daemon_metrics.h's
// MetricsSection): --budgets' cgov_budget_* and --notify's cgov_notice*. Each module makes its
// section and adds it to DaemonContext::metrics_sections; the registry holds no field of theirs.
#ifndef CGOV_EXPORT_MODULE_SERIES_H_
#define CGOV_EXPORT_MODULE_SERIES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>

#include "analysis/budget_tracker.h"
#include "export/daemon_metrics.h"

namespace cgov {

// cgov_budget_usd, _spent_usd, _alert_threshold_usd, _period_start_timestamp_seconds: each
// budget of `budgets` (which the budgets module credits each tick) in its current period.
class BudgetSeries : public MetricsSection {
 public:
  explicit BudgetSeries(std::shared_ptr<const SharedBudgets> budgets)
      : budgets_(std::move(budgets)) {}
  void Render(ExpositionWriter& w, std::string_view host, int64_t now_ms) const override;

 private:
  std::shared_ptr<const SharedBudgets> budgets_;
};

// What the notifier delivered, failed, dropped and holds, all sinks.
struct NoticeCounts {
  int64_t sent = 0, failed_attempts = 0, dropped = 0, refused = 0, queued = 0;
  bool operator==(const NoticeCounts&) const = default;
};

// cgov_notices_sent_total, cgov_notice_failures_total, cgov_notices_dropped_total{reason},
// cgov_notices_queued. Thread-safe: the notify module sets, the HTTP threads render.
class NoticeSeries : public MetricsSection {
 public:
  void Set(const NoticeCounts& counts);
  void Render(ExpositionWriter& w, std::string_view host, int64_t now_ms) const override;
  uint64_t generation() const override { return generation_.load(); }

 private:
  mutable std::mutex mu_;
  NoticeCounts counts_;
  std::atomic<uint64_t> generation_{0};
};

}  // namespace cgov

#endif  // CGOV_EXPORT_MODULE_SERIES_H_
