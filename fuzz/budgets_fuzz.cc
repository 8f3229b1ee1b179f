// Budgets: the --budgets TOML file an operator writes. Properties: an accepted file has names
// safe to print and serve as label values, amounts above 0, thresholds sorted, unique and within
// 1-1000, a forecast window of 1-90 days and no key budgeted twice for a period; a refusal names
// the file and is safe to print. Each accepted budget, evaluated over no data, spent nothing.
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "analysis/budget.h"
#include "analysis/history_summary.h"
#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(budgets_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<BudgetFile> file = ParseBudgets(text, "budgets.toml");
  if (!file.ok()) {
    const std::string& message = file.status().message();
    FUZZ_CHECK(message.starts_with("budgets.toml:"));
    FUZZ_CHECK(SafeText(message) == message);
    return 0;
  }
  FUZZ_CHECK(file->forecast_days >= 1 && file->forecast_days <= 90);
  std::set<std::tuple<HistoryBy, std::string, BudgetPeriod>> keys;
  for (const Budget& b : file->budgets) {
    FUZZ_CHECK(!b.name.empty() && IsSafeText(b.name));
    FUZZ_CHECK(b.amount > 0);
    FUZZ_CHECK(b.scope == HistoryBy::kProject || b.scope == HistoryBy::kTeam ||
               b.scope == HistoryBy::kNamespace || b.scope == HistoryBy::kUser);
    for (size_t i = 0; i < b.alert_pcts.size(); ++i) {
      FUZZ_CHECK(b.alert_pcts[i] >= 1 && b.alert_pcts[i] <= 1000);
      FUZZ_CHECK(i == 0 || b.alert_pcts[i - 1] < b.alert_pcts[i]);
    }
    FUZZ_CHECK(keys.emplace(b.scope, b.name, b.period).second);
  }
  const int64_t as_of = 1'795'564'800'000;  // 2026-11-25T00:00Z
  HistoryInput nothing;
  nothing.since_ms = BudgetDataStartMs(*file, as_of);
  nothing.until_ms = as_of;
  for (const BudgetStatus& s : EvaluateBudgets(*file, nothing, {}, as_of)) {
    FUZZ_CHECK(s.spent == 0 && s.alert_pct == 0 && !s.crossed_hour_ms);
    FUZZ_CHECK(s.period.start_ms < as_of && as_of <= s.period.end_ms);
  }
  return 0;
}
