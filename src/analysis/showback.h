// Showback and chargeback: every billed dollar lands on a row. A bill's lines are matched to
// hosts, each line's cost spread over the GPU time recorded inside its span (proration): to the
// identities whose processes held it, to idle capacity for the time no one held, and to
// "unmatched" for a line of no host cgov saw or with no GPU time recorded in it. Without a bill,
// the same table from the resolved prices, labelled an estimate. All in integer micro-dollars
// with largest-remainder rounding: the rows, idle and unmatched add up to the billed total
// exactly, and their cents to the total's cents. docs/billing.md.
#ifndef CGOV_ANALYSIS_SHOWBACK_H_
#define CGOV_ANALYSIS_SHOWBACK_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/history_summary.h"
#include "billing/billing.h"
#include "core/money.h"

namespace cgov {

// "unallocated", "proportional" or "owner:KEY=VALUE".
Result<IdleCostPolicy> ParseIdleCostPolicy(std::string_view text);

// Shares `total` in proportion to `weights` (all >= 0), exactly: the floors of the exact shares,
// then one unit each to the largest remainders (ties to the lower index). A zero total weight
// leaves everything at 0. A negative total (a credit) is shared as its magnitude, negated.
std::vector<int64_t> LargestRemainder(int64_t total, const std::vector<int64_t>& weights);

// From a bill: `resource_host` (--billing-map) says which host a resource is, then the instance
// ids the daemons recorded (in.resource_hosts); a resource named like a host, or whose last path
// segment is a host's name, needs neither.
Showback BillShowback(const HistoryInput& in, HistoryBy by, const Bill& bill,
                      const std::map<std::string, std::string>& resource_host,
                      const IdleCostPolicy& policy);

// From the resolved prices of a summary: each row its attributed cost, idle the rest.
Showback EstimateShowback(const HistorySummary& summary, const IdleCostPolicy& policy);

// The key a report groups an identity by (--by).
std::string HistoryKey(HistoryBy by, const IdentityRecord& identity, const std::string& hostname);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_SHOWBACK_H_
