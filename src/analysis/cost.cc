#include "analysis/cost.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace cgov {
namespace {

// Cents are allocated once, here: the phases (and the time of unknown utilization) add up to the
// total to the cent, and the phases' waste to the waste; every view shows these figures.
void AllocateOnce(CostBlock* c) {
  std::vector<MicroUsd> parts(c->phase_cost.begin(), c->phase_cost.end());
  MicroUsd phases = 0;
  for (MicroUsd p : parts) phases = AddUsd(phases, p);
  parts.push_back(std::max<MicroUsd>(0, c->total - phases));  // held, utilization unknown
  std::vector<int64_t> cents = AllocateCents(parts, c->total);
  for (size_t p = 0; p < kPhaseCount; ++p) c->phase_cost[p] = cents[p] * kMicroPerCent;
  c->total = RoundToCent(c->total);
  cents = AllocateCents({c->phase_waste.begin(), c->phase_waste.end()}, c->waste);
  for (size_t p = 0; p < kPhaseCount; ++p) c->phase_waste[p] = cents[p] * kMicroPerCent;
  c->waste = RoundToCent(c->waste);
}

}  // namespace

CostBlock ComputeCost(const UsageTotals& usage, const std::vector<ResolvedPrice>& prices,
                      std::optional<double> work, const std::string& unit) {
  CostBlock c;
  const int64_t known_ms = usage.KnownMs();
  c.gpu_hours = static_cast<double>(usage.HeldMs()) / 3.6e6;
  c.effective_gpu_hours = static_cast<double>(usage.UtilMsX100()) / 100.0 / 3.6e6;
  c.waste_fraction = known_ms > 0 ? 1.0 - static_cast<double>(usage.UtilMsX100()) /
                                              (100.0 * static_cast<double>(known_ms))
                                  : 0.0;
  c.work = work;
  c.unit = unit;
  if (work && *work > 0 && c.gpu_hours > 0) c.units_per_gpu_hour = *work / c.gpu_hours;

  bool all_priced = !usage.gpus.empty() && prices.size() == usage.gpus.size();
  std::map<std::string, std::vector<std::string>> sources;  // source -> the parts priced from it
  std::set<MicroUsd> distinct;
  for (const ResolvedPrice& p : prices) {
    std::vector<std::string>& parts = sources[p.source];
    if (!p.part.empty()) parts.push_back(p.part);
    if (!p.per_gpu_hour) {
      all_priced = false;
    } else {
      distinct.insert(*p.per_gpu_hour);
    }
  }
  for (auto& [source, parts] : sources) {
    std::sort(parts.begin(), parts.end());
    c.price_source += (c.price_source.empty() ? "" : "; ") + source;
    if (!parts.empty()) {
      c.price_source += fmt::format(" (MIG instances at their share of the GPU's memory: {})",
                                    fmt::join(parts, ", "));
    }
  }
  if (!all_priced) return c;
  c.priced = true;
  if (distinct.size() == 1) c.price_per_gpu_hour = *distinct.begin();
  for (size_t i = 0; i < usage.gpus.size(); ++i) {
    const GpuUsage& g = usage.gpus[i];
    const MicroUsd price = *prices[i].per_gpu_hour;
    c.total = AddUsd(c.total, CostOf(price, g.HeldMs()));
    c.gpu_known_cost.push_back(CostOf(price, g.KnownMs()));
    for (size_t p = 0; p < kPhaseCount; ++p) {
      c.phase_cost[p] = AddUsd(c.phase_cost[p], CostOf(price, g.phase_ms[p]));
      const MicroUsd waste_x100 = CostOf(price, g.waste_ms_x100[p]);
      c.phase_waste[p] = AddUsd(c.phase_waste[p], waste_x100 / 100 + (waste_x100 % 100 >= 50));
    }
  }
  for (MicroUsd w : c.phase_waste) c.waste = AddUsd(c.waste, w);
  // Rates come from the micro-dollars, not the cents: a 3 s job's $0.004 is not $0.00 an hour.
  const MicroUsd exact_total = c.total;
  c.exact_total = exact_total;
  AllocateOnce(&c);
  c.per_effective_gpu_hour = Divide(exact_total, c.effective_gpu_hours);
  if (auto hourly = Divide(exact_total, static_cast<double>(usage.covered_ms) / 3.6e6)) {
    c.hourly = RoundToCent(*hourly);
    c.daily = MulUsd(*c.hourly, 24);
    c.monthly = MulUsd(*c.hourly, 24 * 30);
    c.yearly = MulUsd(*c.hourly, 24 * 365);
  }
  if (work && *work > 0) {
    c.per_unit_usd = static_cast<double>(exact_total) / kMicroPerUsd / *work;
  }
  return c;
}

}  // namespace cgov
