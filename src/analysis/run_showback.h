// Cross-run showback (`cgov runs DIR...`): many runs' summary.json (CI artifacts downloaded in
// bulk) grouped by a tag, with GPU-hours, dollars, waste and cost per unit, and the findings that
// recur across them. Pure. Dollars add up in cents: every group's and the total are sums of the
// runs' own rounded totals, so the groups add up to the total exactly.
#ifndef CGOV_ANALYSIS_RUN_SHOWBACK_H_
#define CGOV_ANALYSIS_RUN_SHOWBACK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_compare.h"

namespace cgov {

struct RunGroupRow {
  std::string key;  // the tag's value; "(untagged)" for runs without it
  int runs = 0;
  int failed_runs = 0;  // exit status other than 0
  double gpu_hours = 0;
  double effective_gpu_hours = 0;
  int64_t cents = 0;  // priced runs only
  int64_t waste_cents = 0;
  int unpriced_runs = 0;
  // Cost per unit when every run of the group did work in the same unit and was priced.
  std::optional<double> work;
  std::string unit;
  std::optional<double> cost_per_unit_usd;
  double WastePct() const;  // of GPU capacity unused: 1 - effective / GPU-hours
};

struct RecurringFinding {
  std::string id;
  Severity severity = Severity::kInfo;  // the worst seen
  std::string title;
  int runs = 0;  // runs it fired in
};

struct RunShowback {
  std::string by;                          // the tag key grouped by
  std::vector<RunGroupRow> rows;           // by dollars, then GPU-hours, descending
  RunGroupRow total;                       // key "total"
  std::vector<RecurringFinding> findings;  // by runs, then severity, descending
};

RunShowback AggregateRuns(const std::vector<RunDigest>& runs, const std::string& by);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_RUN_SHOWBACK_H_
