#include "analysis/savings.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace cgov {
namespace {

// Whether the levers are weighed in dollars: every GPU priced, and a spend to divide.
bool BySpend(const CostBlock& cost, const UsageTotals& usage) {
  return cost.priced && cost.exact_total > 0 && cost.gpu_known_cost.size() == usage.gpus.size();
}

// The per-GPU rows before any lever: every GPU with known time, by index. A GPU's weight is its
// share of the spend when priced (what its known time cost, of the run's micro-dollars: a lever
// on a $0.80 L4 beside a $5.44 H100 claims the L4's dollars, not half the spend: issue 57, 1),
// else its share of the known GPU-time.
std::map<unsigned, GpuSavings> GpuRows(const CostBlock& cost, const UsageTotals& usage,
                                       const std::vector<std::string>& names) {
  std::map<unsigned, GpuSavings> rows;
  const int64_t known = usage.KnownMs();
  const bool by_spend = BySpend(cost, usage);
  for (unsigned i = 0; i < usage.gpus.size(); ++i) {
    const GpuUsage& g = usage.gpus[i];
    if (g.KnownMs() <= 0) continue;
    GpuSavings& r = rows[i];
    r.gpu = i;
    r.name = i < names.size() ? names[i] : fmt::format("{}", i);
    r.weight = by_spend ? static_cast<double>(cost.gpu_known_cost[i]) /
                              static_cast<double>(cost.exact_total)
                        : static_cast<double>(g.KnownMs()) / static_cast<double>(known);
    r.waste_fraction = std::clamp(1.0 - g.MeanUtilPct().value_or(100) / 100.0, 0.0, 1.0);
  }
  return rows;
}

// Adds a utilization lever to the GPUs it acts on.
void AddLever(const Finding& f, std::map<unsigned, GpuSavings>* rows) {
  if (f.gpu_savings.empty()) {  // a lever with one fraction for every GPU
    for (auto& [gpu, row] : *rows) row.levers.push_back({f.id, f.axis, f.savings_fraction});
    return;
  }
  for (const GpuShare& share : f.gpu_savings) {
    auto row = rows->find(share.gpu);
    if (row == rows->end() || share.fraction <= 0) continue;
    row->second.levers.push_back({f.id, f.axis, std::clamp(share.fraction, 0.0, 1.0)});
  }
}

}  // namespace

SavingsBlock CombineSavings(const std::vector<Finding>& findings, const CostBlock& cost,
                            const UsageTotals& usage, const std::vector<std::string>& gpu_names) {
  SavingsBlock s;
  s.by_spend = BySpend(cost, usage);
  std::map<unsigned, GpuSavings> rows = GpuRows(cost, usage, gpu_names);
  // The measured waste the levers are capped by, weighed as the GPUs are.
  double waste = 0;
  for (const auto& [gpu, row] : rows) waste += row.weight * row.waste_fraction;
  const bool per_gpu = !rows.empty();
  if (!per_gpu) {  // no per-GPU data: the whole spend is one row
    GpuSavings& all = rows[0];
    all.name = "all";
    all.weight = 1;
    all.waste_fraction = std::clamp(cost.waste_fraction, 0.0, 1.0);
    waste = all.waste_fraction;
  }
  double keep_rate = 1;
  for (const Finding& f : findings) {
    if (f.axis == Axis::kNone || f.savings_fraction <= 0) continue;
    s.levers.push_back({f.id, f.axis, f.savings_fraction});
    if (f.axis == Axis::kRate) {
      keep_rate *= 1 - f.savings_fraction;
    } else {
      AddLever(f, &rows);
    }
  }
  // A utilization lever's own fraction of the spend: what it would recover of each GPU it acts
  // on, weighed as the GPUs are (the finding's is weighed by time).
  for (SavingsLever& lever : s.levers) {
    if (lever.axis == Axis::kRate || !per_gpu) continue;
    double spend = 0;
    for (const auto& [gpu, row] : rows) {
      for (const SavingsLever& l : row.levers) {
        if (l.finding_id == lever.finding_id) spend += row.weight * l.fraction;
      }
    }
    lever.fraction = std::min(spend, 1.0);
  }
  for (auto& [gpu, row] : rows) {
    if (row.levers.empty()) continue;
    double keep = 1;
    for (const SavingsLever& l : row.levers) keep *= 1 - l.fraction;
    row.uncapped = 1 - keep;
    row.fraction = std::min(row.uncapped, row.waste_fraction);
    s.utilization_uncapped += row.weight * row.uncapped;
    s.utilization_fraction += row.Contribution();
    s.gpus.push_back(std::move(row));
  }
  s.waste_fraction = std::clamp(waste, 0.0, 1.0);
  // The per-GPU caps add up to the measured waste; a rounding step never lifts the sum above it.
  s.utilization_fraction = std::min(s.utilization_fraction, s.waste_fraction);
  s.rate_fraction = 1 - keep_rate;
  s.combined_fraction = 1 - (1 - s.utilization_fraction) * (1 - s.rate_fraction);
  if (cost.priced) {
    // Of the exact spend, then to the cent as every shown figure: a share of the rounded total
    // showed $0.04 of savings beside $0.03 of waste (issue 57).
    s.combined_usd = RoundToCent(static_cast<MicroUsd>(
        std::llround(static_cast<double>(cost.exact_total) * s.combined_fraction)));
  }
  return s;
}

void SpendFractionsOntoFindings(const SavingsBlock& savings, std::vector<Finding>* findings) {
  for (Finding& f : *findings) {
    if (f.axis == Axis::kRate || f.axis == Axis::kNone) continue;
    for (const SavingsLever& l : savings.levers) {
      if (l.finding_id == f.id) f.savings_fraction = l.fraction;
    }
  }
}

}  // namespace cgov
