// Combining the findings' estimated savings without double counting (docs/analysis.md §5). Pure.
#ifndef CGOV_ANALYSIS_SAVINGS_H_
#define CGOV_ANALYSIS_SAVINGS_H_

#include <optional>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/findings.h"
#include "analysis/timeline.h"

namespace cgov {

struct SavingsLever {
  std::string finding_id;
  Axis axis = Axis::kNone;
  double fraction = 0;  // in SavingsBlock::levers: of the spend; in GpuSavings: of that GPU's
};

// One GPU's step of the utilization arithmetic: the levers that act on it (each a fraction of
// this GPU's known time), combined as 1 - prod(1 - f), capped by this GPU's own waste, weighted
// by its share of the known GPU-time.
struct GpuSavings {
  unsigned gpu = 0;   // index into UsageTotals::gpus
  std::string name;   // as the report names it ("3", "node-c/1")
  double weight = 0;  // this GPU's known time / all GPUs' known time
  std::vector<SavingsLever> levers;
  double uncapped = 0;        // 1 - prod(1 - f_i) over this GPU's levers
  double waste_fraction = 0;  // 1 - effective / known time, of this GPU
  double fraction = 0;        // min(uncapped, waste_fraction)
  double Contribution() const { return weight * fraction; }  // of the spend
};

// The arithmetic, every step shown. A utilization lever acts on named GPUs: per GPU the levers
// overlap, so they combine as 1 - prod(1 - f_i) and are capped by that GPU's measured waste; the
// GPUs then add, weighted by their share of the spend (of the GPU-time when not priced), so no
// GPU-second is claimed twice and no lever claims a dollar of a GPU it does not act on.
// Rate levers combine as 1 - prod(1 - r_j) and compose multiplicatively with the result:
// combined = 1 - (1 - U)(1 - R).
struct SavingsBlock {
  bool by_spend = false;  // GPUs weighed by their share of the spend (priced), else of the time
  std::vector<SavingsLever> levers;  // each lever's fraction of the spend, weighed as the GPUs
  std::vector<GpuSavings> gpus;      // the GPUs with a utilization lever, by index
  double utilization_uncapped = 0;   // sum of weight x uncapped over the GPUs
  double waste_fraction = 0;         // the measured waste of all GPUs (sum of weight x waste):
                                     // of the spend when by_spend, else of the GPU-time
  double utilization_fraction = 0;   // sum of weight x min(uncapped, waste) over the GPUs
  double rate_fraction = 0;          // 1 - prod(1 - r_j) over rate levers
  double combined_fraction = 0;
  std::optional<MicroUsd> combined_usd;  // when priced
};

// `usage` gives each GPU's weight and waste. A utilization finding without per-GPU fractions
// acts with its fraction on every GPU with data; with no GPU data at all (a hand-made case) the
// levers act on the whole spend, capped by `cost.waste_fraction`. `gpu_names[i]` names GPU i.
SavingsBlock CombineSavings(const std::vector<Finding>& findings, const CostBlock& cost,
                            const UsageTotals& usage,
                            const std::vector<std::string>& gpu_names = {});

// Each utilization finding's savings_fraction set to its lever's fraction of the spend as
// CombineSavings weighed it (the findings weigh GPUs by time; with GPUs at different prices the
// spend is what "of the spend" must mean).
void SpendFractionsOntoFindings(const SavingsBlock& savings, std::vector<Finding>* findings);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_SAVINGS_H_
