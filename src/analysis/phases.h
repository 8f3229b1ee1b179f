// The five phases of a GPU-sample (DESIGN.md), by SM utilization u and the GPU memory m held by
// compute processes:
//   truly_idle     u < idle_util_pct and m <= held_memory_bytes
//   idle_held      u < idle_util_pct and m >  held_memory_bytes   (memory held, SM cold)
//   underutilized  idle_util_pct <= u < productive_util_pct
//   productive     productive_util_pct <= u < compute_bound_util_pct
//   compute_bound  u >= compute_bound_util_pct
// Graphics-only memory (Xorg) never makes a GPU idle-held. A GPU the kubelet allocated to a pod
// (cgov daemon --pod-resources) is held whatever memory it has: idle, it is idle-held.
#ifndef CGOV_ANALYSIS_PHASES_H_
#define CGOV_ANALYSIS_PHASES_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace cgov {

enum class Phase : uint8_t { kTrulyIdle, kIdleHeld, kUnderutilized, kProductive, kComputeBound };
inline constexpr size_t kPhaseCount = 5;
std::string_view PhaseKey(Phase p);                       // "truly_idle", ...
std::optional<Phase> PhaseFromKey(std::string_view key);  // PhaseKey's inverse
std::string_view PhaseLabel(Phase p);                     // "truly idle", ...
// Idle phases are what other tools call "unused"; underutilized is partly used.
inline bool IsIdle(Phase p) { return p == Phase::kTrulyIdle || p == Phase::kIdleHeld; }

struct PhaseThresholds {
  double idle_util_pct = 10;
  double productive_util_pct = 70;
  double compute_bound_util_pct = 90;
  uint64_t held_memory_bytes = 100ull << 20;  // 100 MiB
};

// REQUIRES: util_pct known. `compute_memory_bytes` unknown (no process list) is taken as not held;
// `allocated`: a pod was given the GPU, which no one else can then use.
Phase Classify(double util_pct, std::optional<uint64_t> compute_memory_bytes,
               const PhaseThresholds& t, bool allocated = false);

// Shares in percent with `decimals` places that sum to exactly 100 (largest remainder: each share
// is floored, then the units left go to the largest remainders, ties to the earlier phase).
// All zero when the total is zero.
std::array<double, kPhaseCount> SharesPct(const std::array<int64_t, kPhaseCount>& ms,
                                          int decimals = 1);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_PHASES_H_
