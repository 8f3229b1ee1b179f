#include "report/phase_table.h"

#include <fmt/format.h>

#include "core/duration.h"

namespace cgov {

std::vector<PhaseColumn> PhaseColumns() {
  using K = PhaseColumn::Kind;
  return {
      {"Phase", K::kPhase}, {"Share %", K::kShare}, {"GPU-hours", K::kHours}, {"Cost", K::kCost}};
}

std::vector<Phase> PhaseRows() {
  std::vector<Phase> out;
  for (size_t p = 0; p < kPhaseCount; ++p) out.push_back(static_cast<Phase>(p));
  return out;
}

std::string PhaseCellText(const PhaseFigures& f, const PhaseColumn& c, Phase p) {
  const size_t i = static_cast<size_t>(p);
  switch (c.kind) {
    case PhaseColumn::Kind::kPhase:
      return std::string(PhaseLabel(p)) +
             (p == Phase::kIdleHeld ? " (the one other tools miss)" : "");
    case PhaseColumn::Kind::kShare:
      return fmt::format("{:.1f}", f.share_pct[i]);
    case PhaseColumn::Kind::kHours:
      return fmt::format("{:.3f}", HoursOf(f.ms[i]));
    case PhaseColumn::Kind::kCost:
      return f.cost.priced ? FormatUsd(f.cost.phase_cost[i]) : "—";
  }
  return "";
}

std::string PhaseCellPointer(const PhaseColumn& c, Phase p, double* scale) {
  *scale = 1;
  const std::string at = fmt::format("/phases/{}/", PhaseKey(p));
  switch (c.kind) {
    case PhaseColumn::Kind::kPhase:
      return "";
    case PhaseColumn::Kind::kShare:
      return at + "share_pct";
    case PhaseColumn::Kind::kHours:
      *scale = 1.0 / 3600;
      return at + "gpu_seconds";
    case PhaseColumn::Kind::kCost:
      return at + "cost_usd";
  }
  return "";
}

}  // namespace cgov
