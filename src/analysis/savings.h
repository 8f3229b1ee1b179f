// Combining the findings' estimated savings without double counting (docs/analysis.md §5). Pure.
#ifndef CGOV_ANALYSIS_SAVINGS_H_
#define CGOV_ANALYSIS_SAVINGS_H_

#include <optional>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/findings.h"

namespace cgov {

struct SavingsLever {
  std::string finding_id;
  Axis axis = Axis::kNone;
  double fraction = 0;
};

// The arithmetic, every step shown: utilization levers overlap, so they combine as
// 1 - prod(1 - f_i) and are capped by the measured waste; rate levers combine the same way and
// compose multiplicatively with the result: combined = 1 - (1 - U)(1 - R).
struct SavingsBlock {
  std::vector<SavingsLever> levers;
  double utilization_uncapped = 0;  // 1 - prod(1 - f_i) over utilization levers
  double waste_fraction = 0;        // the cap
  double utilization_fraction = 0;  // min(uncapped, waste)
  double rate_fraction = 0;         // 1 - prod(1 - r_j) over rate levers
  double combined_fraction = 0;
  std::optional<MicroUsd> combined_usd;  // when priced
};

SavingsBlock CombineSavings(const std::vector<Finding>& findings, const CostBlock& cost);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_SAVINGS_H_
