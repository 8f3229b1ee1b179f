#include "analysis/savings.h"

#include <algorithm>
#include <cmath>

namespace cgov {

SavingsBlock CombineSavings(const std::vector<Finding>& findings, const CostBlock& cost) {
  SavingsBlock s;
  double keep_utilization = 1, keep_rate = 1;
  for (const Finding& f : findings) {
    if (f.axis == Axis::kNone || f.savings_fraction <= 0) continue;
    s.levers.push_back({f.id, f.axis, f.savings_fraction});
    (f.axis == Axis::kUtilization ? keep_utilization : keep_rate) *= 1 - f.savings_fraction;
  }
  s.utilization_uncapped = 1 - keep_utilization;
  s.waste_fraction = std::clamp(cost.waste_fraction, 0.0, 1.0);
  s.utilization_fraction = std::min(s.utilization_uncapped, s.waste_fraction);
  s.rate_fraction = 1 - keep_rate;
  s.combined_fraction = 1 - (1 - s.utilization_fraction) * (1 - s.rate_fraction);
  if (cost.priced) {
    s.combined_usd = static_cast<MicroUsd>(std::llround(static_cast<double>(cost.total) *
                                                        s.combined_fraction));
  }
  return s;
}

}  // namespace cgov
