// --budgets: each budget's spend in its current period, read from the history at start and on
// SIGHUP, then carried on by every tick's credits. /metrics (cgov_budget_*) and the budget
// notices read it through the context.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon_config.h"
#include "app/daemon/daemon_modules.h"
#include "app/history/history_load.h"
#include "export/module_series.h"
#include "os/log.h"

namespace cgov {
namespace {

// --budgets' file, as read at start and on SIGHUP (through the module's Env).
Result<BudgetFile> ReadBudgetsFile(Env& env, const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadDaemonFile(env, path, "--budgets"));
  Result<BudgetFile> file = ParseBudgets(text, path);
  if (!file.ok()) return file.status().WithContext("cgov daemon: --budgets");
  return file;
}

class BudgetsModule : public DaemonModule {
 public:
  BudgetsModule(DaemonContext* d, std::string path, BudgetFile file)
      : d_(*d), path_(std::move(path)), file_(std::move(file)) {
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
  std::string path_;  // --budgets, re-read on SIGHUP
  BudgetFile file_;
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
  CGOV_ASSIGN_OR_RETURN(HistoryInput in, LoadHistory(store, BudgetDataStartMs(file_, as_of_ms),
                                                     as_of_ms, PhaseThresholds{}));
  HistoryOptions options;  // priced as the cost counters are
  options.price = o.price;
  options.catalog = &o.catalog;
  CGOV_ASSIGN_OR_RETURN(auto prices, GpuHourlyPrices(in, options));
  d_.budgets->Set(BudgetTracker(EvaluateBudgets(file_, in, prices, as_of_ms), as_of_ms));
  LogInfo(d_.env(),
          "--budgets: {} budget(s) from {}; their spend so far read from the history in {:.2f} s",
          file_.budgets.size(), path_,
          static_cast<double>(d_.clock().MonotonicNs() - started_ns) / 1e9);
  return Status::Ok();
}

void BudgetsModule::Reload(std::string* what) {
  if (d_.writer() == nullptr) return;
  Result<BudgetFile> budgets = ReadBudgetsFile(d_.env(), path_);
  if (!budgets.ok()) {
    LogWarning(d_.env(), "SIGHUP: keeping the budgets in use: {}", budgets.status().message());
  } else {
    file_ = std::move(budgets).value();
    *what += ", budgets " + path_ + " re-read";
  }
  // From the history, committed by the core's reopen: every credit so far is in it.
  if (Status s = Seed(); !s.ok()) {
    LogWarning(d_.env(), "SIGHUP: budgets: {}", s.message());
  }
}

class BudgetsKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "budgets"; }
  void AddFlags(CLI::App* app) override {
    app->add_option("--budgets", path_,
                    "a budgets file (TOML, docs/budgets.md): each budget's spend on this host in "
                    "its current period, for --notify's budget rules and, with --listen, served "
                    "as cgov_budget_*; re-read on SIGHUP")
        ->group("Budgets (--budgets)");
  }
  Status Configure(const CLI::App& app, const DaemonOptions& /*core*/) override {
    if (path_.empty()) return Status::Ok();
    if (!FlagGiven(app, "--listen") && !FlagGiven(app, "--notify")) {
      return InvalidArgument(
          "cgov daemon: --budgets does something with --listen (cgov_budget_* on /metrics) or "
          "--notify (budget rules); give one of them (a report reads budgets from the database "
          "with `cgov report --budgets`)");
    }
    CGOV_ASSIGN_OR_RETURN(file_, ReadBudgetsFile(*Env::Default(), path_));
    return Status::Ok();
  }
  bool enabled() const override { return !path_.empty(); }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<BudgetsModule>(context, path_, std::move(file_));
  }

 private:
  std::string path_;
  BudgetFile file_;
};

}  // namespace

std::unique_ptr<DaemonModuleKind> NewBudgetsModuleKind() { return std::make_unique<BudgetsKind>(); }

}  // namespace cgov
