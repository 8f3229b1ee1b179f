#include "validate/load_pattern.h"

#include <charconv>

#include <fmt/format.h>

namespace cgov::validate {
namespace {

constexpr int64_t kDutyCycleMs = 100;  // well under NVML's ~1/6 s utilization sample period

LoadPattern Busy(std::string name, std::string description, int64_t busy_ms, int64_t idle_ms,
                 uint64_t hold_bytes) {
  LoadPattern p;
  p.name = std::move(name);
  p.description = std::move(description);
  p.busy_ms = busy_ms;
  p.idle_ms = idle_ms;
  p.context = true;
  p.hold_bytes = hold_bytes;
  p.expected_util_pct =
      100.0 * static_cast<double>(busy_ms) / static_cast<double>(busy_ms + idle_ms);
  return p;
}

}  // namespace

Result<LoadPattern> ParsePattern(std::string_view name, uint64_t hold_bytes) {
  LoadPattern p;
  if (name == "idle") {
    p = {"idle", "no CUDA context at all", 0, 1000, false, 0, 0, 5, Phase::kTrulyIdle, 90};
  } else if (name == "held") {
    p = {"held",
         fmt::format("a context holding {} MiB, no kernel", hold_bytes >> 20),
         0,
         1000,
         true,
         hold_bytes,
         0,
         5,
         Phase::kIdleHeld,
         90};
  } else if (name == "full") {
    p = Busy("full", "kernels back to back on every SM", 1000, 0, hold_bytes);
    p.util_tolerance_pct = 5;
    p.expected_phase = Phase::kComputeBound;
    p.expected_phase_min_share_pct = 90;
  } else if (name == "bursty") {
    p = Busy("bursty", "2 s of kernels, then 3 s of nothing (a starved data loader)", 2000, 3000,
             hold_bytes);
    p.util_tolerance_pct = 12;  // a 5 s cycle over a 20-30 s run
    p.expected_phase = Phase::kComputeBound;
    p.expected_phase_min_share_pct = 25;  // ~40 % of the time, edges blurred by the sampling
  } else if (name.starts_with("duty")) {
    int pct = 0;
    const std::string_view digits = name.substr(4);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pct);
    if (ec != std::errc() || end != digits.data() + digits.size() || pct < 5 || pct > 95) {
      return InvalidArgument(fmt::format(
          "pattern '{}': dutyNN needs NN from 5 to 95 (idle, held, duty5..duty95, bursty, full)",
          name));
    }
    p = Busy(std::string(name), fmt::format("a kernel {} ms of every {} ms", pct, kDutyCycleMs),
             pct, kDutyCycleMs - pct, hold_bytes);
    p.util_tolerance_pct = 10;
    p.expected_phase =
        pct < 70 ? Phase::kUnderutilized : (pct < 90 ? Phase::kProductive : Phase::kComputeBound);
    p.expected_phase_min_share_pct = 60;
  } else {
    return InvalidArgument(
        fmt::format("unknown pattern '{}' (idle, held, duty5..duty95, bursty, full)", name));
  }
  return p;
}

std::vector<std::string> DefaultPatternNames() {
  return {"idle", "held", "duty30", "duty60", "bursty", "full"};
}

std::vector<Segment> Schedule(const LoadPattern& pattern, int64_t duration_ms) {
  std::vector<Segment> out;
  auto add = [&](bool busy, int64_t ms) {
    if (ms <= 0) return;
    if (!out.empty() && out.back().busy == busy) {
      out.back().ms += ms;
    } else {
      out.push_back({busy, ms});
    }
  };
  const int64_t cycle = pattern.busy_ms + pattern.idle_ms;
  if (cycle <= 0) return out;
  for (int64_t t = 0; t < duration_ms;) {
    const int64_t busy = std::min(pattern.busy_ms, duration_ms - t);
    add(true, busy);
    t += busy;
    const int64_t idle = std::min(pattern.idle_ms, duration_ms - t);
    add(false, idle);
    t += idle;
  }
  return out;
}

double BusyPct(const std::vector<Segment>& segments) {
  int64_t busy = 0, total = 0;
  for (const Segment& s : segments) {
    total += s.ms;
    if (s.busy) busy += s.ms;
  }
  return total > 0 ? 100.0 * static_cast<double>(busy) / static_cast<double>(total) : 0.0;
}

}  // namespace cgov::validate
