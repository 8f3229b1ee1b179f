// What the GPU time of a run cost, from the usage totals and a price per GPU. Pure.
#ifndef CGOV_ANALYSIS_COST_H_
#define CGOV_ANALYSIS_COST_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "analysis/phases.h"
#include "analysis/pricing.h"
#include "analysis/timeline.h"
#include "core/money.h"

namespace cgov {

struct CostBlock {
  // Time (always known).
  double gpu_hours = 0;  // held GPU time the samples stand for (unknown utilization included)
  double effective_gpu_hours = 0;  // sum of time x utilization
  double waste_fraction = 0;       // 1 - effective / known GPU time (0 when none is known)
  // Money: set only when every GPU has a price.
  bool priced = false;
  std::string price_source;                    // one line per distinct source
  std::optional<MicroUsd> price_per_gpu_hour;  // when the same for every GPU
  MicroUsd total = 0;
  MicroUsd waste = 0;  // sum over phases of time x (1 - utilization) x price
  std::array<MicroUsd, kPhaseCount> phase_cost{};
  std::array<MicroUsd, kPhaseCount> phase_waste{};
  std::optional<MicroUsd> per_effective_gpu_hour;
  // What each GPU of the usage cost over its known time (utilization known), and all GPUs over
  // all their time, in micro-dollars before any rounding to the cent: what a utilization lever
  // may claim of each GPU (savings.h). Empty when not priced.
  std::vector<MicroUsd> gpu_known_cost;
  MicroUsd exact_total = 0;
  // "If this pattern ran continuously": hourly is total / covered hours, rounded to the cent;
  // the others are exact multiples of it.
  std::optional<MicroUsd> hourly, daily, monthly, yearly;
  // Unit economics (--work or the progress file).
  std::optional<double> work;
  std::string unit;
  std::optional<double> per_unit_usd;  // a ratio, not a ledger amount: not rounded to micro-USD
  std::optional<double> units_per_gpu_hour;
};

// `prices`: one per GPU of `usage`.
CostBlock ComputeCost(const UsageTotals& usage, const std::vector<ResolvedPrice>& prices,
                      std::optional<double> work, const std::string& unit);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_COST_H_
