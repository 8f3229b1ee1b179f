#include "report/history_gpu_table.h"

#include <fmt/format.h>

#include "report/text_style.h"

namespace cgov {

std::vector<HistoryGpuColumn> HistoryGpuColumns(const HistorySummary& s) {
  using K = HistoryGpuColumn::Kind;
  bool gpm = false;
  for (const HistoryGpuRow& g : s.gpus) gpm = gpm || g.mean_sm_active_pct.has_value();
  std::vector<HistoryGpuColumn> out = {{"GPU", K::kGpu}, {"Model", K::kModel}};
  const char* const kShares[kPhaseCount] = {"Truly idle %", "Idle-held %", "Under %",
                                            "Productive %", "Bound %"};
  for (size_t p = 0; p < kPhaseCount; ++p) {
    out.push_back({kShares[p], K::kPhaseShare, static_cast<Phase>(p)});
  }
  out.push_back({"Util %", K::kUtil});
  if (gpm) out.insert(out.end(), {{"SM active %", K::kSmActive}, {"Tensor %", K::kTensor}});
  out.insert(out.end(), {{"Mem used MiB", K::kMemUsed}, {"Power W", K::kPower}});
  if (s.energy.known_ms > 0) out.push_back({"Energy kWh", K::kEnergy});
  out.push_back({"Cost", K::kCost});
  return out;
}

std::string HistoryGpuCellText(const HistoryGpuColumn& c, const HistoryGpuRow& g) {
  using K = HistoryGpuColumn::Kind;
  auto fixed = [](const std::optional<double>& v, int decimals) {
    return v ? fmt::format("{:.{}f}", *v, decimals) : std::string("—");
  };
  switch (c.kind) {
    case K::kGpu:
      return g.label;
    case K::kModel:
      return g.gpu.name;
    case K::kPhaseShare:
      return fmt::format("{:.1f}", g.share_pct[static_cast<size_t>(c.phase)]);
    case K::kUtil:
      return fixed(g.mean_util_pct, 1);
    case K::kSmActive:
      return fixed(g.mean_sm_active_pct, 1);
    case K::kTensor:
      return fixed(g.mean_tensor_active_pct, 1);
    case K::kMemUsed:
      return fixed(g.mean_mem_used_mib, 0);
    case K::kPower:
      return fixed(g.mean_power_w, 0);
    case K::kEnergy:
      return FormatKwh(g.totals.usage.EnergyMj());
    case K::kCost:
      return g.price.per_gpu_hour ? FormatUsd(g.cost) : "—";
  }
  return "";
}

std::string HistoryGpuCellPointer(const HistoryGpuColumn& c, size_t gpu, double* scale) {
  using K = HistoryGpuColumn::Kind;
  *scale = 1;
  const std::string at = fmt::format("/gpus/{}/", gpu);
  switch (c.kind) {
    case K::kGpu:
    case K::kModel:
      return "";
    case K::kPhaseShare:
      return at + "phase_share_pct/" + std::string(PhaseKey(c.phase));
    case K::kUtil:
      return at + "mean_util_pct";
    case K::kSmActive:
      return at + "mean_sm_active_pct";
    case K::kTensor:
      return at + "mean_tensor_active_pct";
    case K::kMemUsed:
      return at + "mean_mem_used_mib";
    case K::kPower:
      return at + "mean_power_w";
    case K::kEnergy:
      *scale = 1.0 / 3.6e6;  // the JSON's joules, shown as kWh
      return at + "energy_joules";
    case K::kCost:
      return at + "cost_usd";
  }
  return "";
}

}  // namespace cgov
