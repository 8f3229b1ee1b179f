#include "export/module_series.h"

#include <string>
#include <vector>

#include "analysis/budget.h"
#include "analysis/history_by.h"

namespace cgov {
namespace {

double BudgetUsd(MicroUsd micro) { return static_cast<double>(micro) / kMicroPerUsd; }

// Gauges, not counters: a period's spend starts again from 0 when the next period begins.
void RenderBudgetRows(ExpositionWriter& w, std::string_view host,
                      const std::vector<BudgetTracker::Row>& rows) {
  if (rows.empty()) return;
  auto labels = [&](const BudgetTracker::Row& r) {
    return Labels{{"scope", HistoryByName(r.budget->scope)},
                  {"name", r.budget->name},
                  {"period", BudgetPeriodName(r.budget->period)},
                  {"Hostname", host}};
  };
  w.Family("cgov_budget_usd", MetricType::kGauge,
           "A budget's amount for each period (cgov daemon --budgets FILE, docs/budgets.md).");
  for (const auto& r : rows) w.Sample(labels(r), BudgetUsd(r.budget->amount));
  w.Family("cgov_budget_spent_usd", MetricType::kGauge,
           "What this host's GPU time attributed to the budget's key cost in its current period "
           "(UTC), from the history at start and each tick since; sum over hosts for a fleet.");
  for (const auto& r : rows) w.Sample(labels(r), BudgetUsd(r.spent));
  w.Family("cgov_budget_alert_threshold_usd", MetricType::kGauge,
           "The spend at which each of the budget's alert thresholds (pct, of the amount) fires.");
  for (const auto& r : rows) {
    for (int pct : r.budget->alert_pcts) {
      const std::string pct_text = std::to_string(pct);
      Labels l = labels(r);
      l.emplace_back("pct", pct_text);
      w.Sample(l, BudgetUsd(r.budget->amount) * pct / 100.0);
    }
  }
  w.Family("cgov_budget_period_start_timestamp_seconds", MetricType::kGauge,
           "Unix time at which the budget's current period began.");
  for (const auto& r : rows) w.Sample(labels(r), static_cast<double>(r.period.start_ms) / 1000.0);
}

}  // namespace

void BudgetSeries::Render(ExpositionWriter& w, std::string_view host, int64_t now_ms) const {
  budgets_->Read(now_ms, [&](const std::vector<BudgetTracker::Row>& rows) {
    RenderBudgetRows(w, host, rows);
  });
}

void NoticeSeries::Set(const NoticeCounts& counts) {
  std::lock_guard lock(mu_);
  if (counts_ == counts) return;  // a scrape between two ticks stays a copy
  counts_ = counts;
  generation_.fetch_add(1);
}

void NoticeSeries::Render(ExpositionWriter& w, std::string_view host, int64_t) const {
  std::lock_guard lock(mu_);
  const NoticeCounts& n = counts_;
  w.Family("cgov_notices_sent_total", MetricType::kCounter,
           "Notices delivered (answered 2xx), all sinks (cgov daemon --notify).");
  w.Sample({{"Hostname", host}}, static_cast<double>(n.sent));
  w.Family("cgov_notice_failures_total", MetricType::kCounter,
           "Delivery attempts that failed and will be tried again (no answer, 5xx, 429, ...).");
  w.Sample({{"Hostname", host}}, static_cast<double>(n.failed_attempts));
  w.Family("cgov_notices_dropped_total", MetricType::kCounter,
           "Notices that will never be delivered: pushed out of a full queue (queue_max), or "
           "refused by the receiver as malformed (400, 413, 422).");
  w.Sample({{"Hostname", host}, {"reason", "queue_full"}}, static_cast<double>(n.dropped));
  w.Sample({{"Hostname", host}, {"reason", "refused"}}, static_cast<double>(n.refused));
  w.Family("cgov_notices_queued", MetricType::kGauge,
           "Deliveries waiting in the notifications state database, all sinks.");
  w.Sample({{"Hostname", host}}, static_cast<double>(n.queued));
}

}  // namespace cgov
