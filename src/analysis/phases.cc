#include "analysis/phases.h"

#include "core/money.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace cgov {

std::string_view PhaseKey(Phase p) {
  switch (p) {
    case Phase::kTrulyIdle:
      return "truly_idle";
    case Phase::kIdleHeld:
      return "idle_held";
    case Phase::kUnderutilized:
      return "underutilized";
    case Phase::kProductive:
      return "productive";
    case Phase::kComputeBound:
      return "compute_bound";
  }
  return "";
}

std::optional<Phase> PhaseFromKey(std::string_view key) {
  for (size_t p = 0; p < kPhaseCount; ++p) {
    if (PhaseKey(static_cast<Phase>(p)) == key) return static_cast<Phase>(p);
  }
  return std::nullopt;
}

std::string_view PhaseLabel(Phase p) {
  switch (p) {
    case Phase::kTrulyIdle:
      return "truly idle";
    case Phase::kIdleHeld:
      return "idle, memory held";
    case Phase::kUnderutilized:
      return "underutilized";
    case Phase::kProductive:
      return "productive";
    case Phase::kComputeBound:
      return "compute-bound";
  }
  return "";
}

Phase Classify(double u, std::optional<uint64_t> m, const PhaseThresholds& t, bool allocated) {
  if (u < t.idle_util_pct) {
    return allocated || (m && *m > t.held_memory_bytes) ? Phase::kIdleHeld : Phase::kTrulyIdle;
  }
  if (u < t.productive_util_pct) return Phase::kUnderutilized;
  if (u < t.compute_bound_util_pct) return Phase::kProductive;
  return Phase::kComputeBound;
}

std::array<double, kPhaseCount> SharesPct(const std::array<int64_t, kPhaseCount>& ms,
                                          int decimals) {
  std::array<double, kPhaseCount> out{};
  const int64_t total = std::accumulate(ms.begin(), ms.end(), int64_t{0});
  if (total <= 0) return out;
  int64_t units = 100;
  for (int i = 0; i < decimals; ++i) units *= 10;  // 1000 units of 0.1 %
  std::array<int64_t, kPhaseCount> floor{};
  std::array<Int128, kPhaseCount> remainder{};
  int64_t given = 0;
  for (size_t i = 0; i < kPhaseCount; ++i) {
    const Int128 scaled = static_cast<Int128>(ms[i]) * units;
    floor[i] = static_cast<int64_t>(scaled / total);
    remainder[i] = scaled % total;
    given += floor[i];
  }
  std::array<size_t, kPhaseCount> order{0, 1, 2, 3, 4};
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return remainder[a] > remainder[b]; });
  for (size_t k = 0; given < units; ++k, ++given) ++floor[order[k % kPhaseCount]];
  double scale = std::pow(10.0, decimals);
  for (size_t i = 0; i < kPhaseCount; ++i) out[i] = static_cast<double>(floor[i]) / scale;
  return out;
}

}  // namespace cgov
