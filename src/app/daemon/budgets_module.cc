// --budgets: each budget's spend in its current period, read from the history at start and on
// SIGHUP, then carried on by every tick's credits. /metrics (cgov_budget_*) and the budget
// notices read it through the context.
#include <fmt/format.h>

#include "app/daemon/daemon_config.h"
#include "app/daemon/daemon_modules.h"
#include "app/history/history_load.h"
#include "export/module_series.h"
#include "os/log.h"

namespace cgov {
namespace {

class BudgetsModule : public DaemonModule {
 public:
  explicit BudgetsModule(DaemonContext* d) : d_(*d) {
    d_.budgets = std::make_shared<SharedBudgets>();
    d_.metrics_sections.push_back(std::make_shared<BudgetSeries>(d_.budgets));
  }
  std::string_view name() const override { return "budgets"; }
  // Before the server and the notices, which read them.
  Status Start() override { return Seed(); }
  bool wants_credits() const override { return true; }
  void OnCredit(const TickCredit& credit) override;
  void Reload(std::string* what) override;

 private:
  // Each budget's spend in its period, from the history; the ticks credited after that carry
  // it on.
  Status Seed();

  DaemonContext& d_;
};

void BudgetsModule::OnCredit(const TickCredit& credit) {
  for (const TickCredit::Identity& id : credit.identities) {
    const IdentityRecord* record = d_.IdentityOf(id.identity_id);
    auto price = d_.gpu_price_by_id().find(id.gpu_id);
    if (record == nullptr || price == d_.gpu_price_by_id().end()) continue;
    d_.budgets->Credit(credit.ts_ms, *record, d_.hostname(), price->second, id.attributed_ms);
  }
}

Status BudgetsModule::Seed() {
  const DaemonOptions& o = d_.options();
  const int64_t started_ns = d_.clock().MonotonicNs();
  HistoryStore& store = d_.writer()->store();
  // Up to the last tick written, which the writer, just opened, credits when the next tick
  // comes (for its interval, or the time to the next tick of the same run), as a report reads
  // it; up to now in a history without ticks.
  CGOV_ASSIGN_OR_RETURN(auto range, store.TickRange());
  const int64_t as_of_ms = range ? range->second : d_.NowMs();
  CGOV_ASSIGN_OR_RETURN(HistoryInput in, LoadHistory(store, BudgetDataStartMs(*o.budgets, as_of_ms),
                                                     as_of_ms, PhaseThresholds{}));
  HistoryOptions options;  // priced as the cost counters are
  options.price = o.price;
  options.catalog = &o.catalog;
  CGOV_ASSIGN_OR_RETURN(auto prices, GpuHourlyPrices(in, options));
  d_.budgets->Set(BudgetTracker(EvaluateBudgets(*o.budgets, in, prices, as_of_ms), as_of_ms));
  LogInfo(d_.env(),
          "--budgets: {} budget(s) from {}; their spend so far read from the history in {:.2f} s",
          o.budgets->budgets.size(), o.budgets_path,
          static_cast<double>(d_.clock().MonotonicNs() - started_ns) / 1e9);
  return Status::Ok();
}

void BudgetsModule::Reload(std::string* what) {
  if (d_.writer() == nullptr) return;
  DaemonOptions& o = d_.options();
  Result<BudgetFile> budgets = ReadBudgetsFile(o.budgets_path);
  if (!budgets.ok()) {
    LogWarning(d_.env(), "SIGHUP: keeping the budgets in use: {}", budgets.status().message());
  } else {
    o.budgets = std::move(budgets).value();
    *what += ", budgets " + o.budgets_path + " re-read";
  }
  // From the history, committed by the core's reopen: every credit so far is in it.
  if (Status s = Seed(); !s.ok()) {
    LogWarning(d_.env(), "SIGHUP: budgets: {}", s.message());
  }
}

}  // namespace

std::unique_ptr<DaemonModule> NewBudgetsModule(DaemonContext* context) {
  return std::make_unique<BudgetsModule>(context);
}

}  // namespace cgov
