// The known GPU load patterns of the validation kit (scripts/gpu-validate) and their schedules.
//
// A pattern is a repeating cycle of "busy" (a kernel runs) and "idle" (nothing runs) stretches,
// with or without a CUDA context and memory held. NVML's utilization.gpu is the share of its
// sample period in which a kernel ran, so a 100 ms cycle busy for P ms reads as P %. Pure.
#ifndef CGOV_VALIDATE_LOAD_PATTERN_H_
#define CGOV_VALIDATE_LOAD_PATTERN_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/phases.h"
#include "core/status.h"

namespace cgov::validate {

struct LoadPattern {
  std::string name;         // "idle", "held", "duty30", "duty60", "bursty", "full"
  std::string description;  // one line for the report
  int64_t busy_ms = 0;      // per cycle
  int64_t idle_ms = 0;      // per cycle
  bool context = false;     // create a CUDA context (a process on the GPU)
  uint64_t hold_bytes = 0;  // device memory allocated and kept for the whole run
  // What cgov should measure on the loaded GPU.
  double expected_util_pct = 0;
  double util_tolerance_pct = 0;             // |mean measured - expected| allowed
  Phase expected_phase = Phase::kTrulyIdle;  // the phase most GPU-time must fall in
  double expected_phase_min_share_pct = 0;
};

// "idle", "held", "bursty", "full", or "dutyNN" with NN in 5..95 (duty30, duty60).
// `hold_bytes` is what "held" and the busy patterns allocate.
Result<LoadPattern> ParsePattern(std::string_view name, uint64_t hold_bytes);

// The patterns scripts/gpu-validate plays, in order.
std::vector<std::string> DefaultPatternNames();

struct Segment {
  bool busy = false;
  int64_t ms = 0;
};

// The busy/idle stretches that fill `duration_ms` exactly, cycle after cycle (the last one cut
// short); adjacent stretches of the same kind are merged. Empty for duration <= 0.
std::vector<Segment> Schedule(const LoadPattern& pattern, int64_t duration_ms);

// The share of `duration_ms` the schedule is busy, in percent.
double BusyPct(const std::vector<Segment>& segments);

}  // namespace cgov::validate

#endif  // CGOV_VALIDATE_LOAD_PATTERN_H_
