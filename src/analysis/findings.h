// Findings: what the usage says is wrong, the evidence, and what to change, with an estimated
// recoverable fraction of the spend on one axis. Rules and thresholds: docs/analysis.md. Pure.
#ifndef CGOV_ANALYSIS_FINDINGS_H_
#define CGOV_ANALYSIS_FINDINGS_H_

#include <optional>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/timeline.h"
#include "telemetry/gpu_sample.h"

namespace cgov {

enum class Severity { kInfo, kWarning, kCritical };
enum class Axis { kNone, kUtilization, kRate };
const char* SeverityName(Severity s);  // "info", "warning", "critical"
const char* AxisName(Axis a);          // "none", "utilization", "rate"
// Parses "warning" / "critical" (for --fail-on).
std::optional<Severity> ParseSeverity(std::string_view text);

// A utilization lever's share of one GPU's own known time.
struct GpuShare {
  unsigned gpu = 0;  // index into UsageTotals::gpus
  double fraction = 0;
};

struct Finding {
  std::string id;
  Severity severity = Severity::kInfo;
  std::string title;
  double observed = 0;
  std::string observed_unit;  // "% of GPU-time", "s", "percentage points", ...
  double threshold = 0;
  std::string threshold_text;  // e.g. ">= 5 % of GPU-time or >= 300 s"
  int64_t evidence_gpu_ms = 0;
  int64_t window_start_ms = 0;  // since the start of the run
  int64_t window_end_ms = 0;
  std::vector<unsigned> gpus;
  std::vector<std::string> gpu_names;  // `gpus` as the caller names them (empty: by number)
  std::string recommendation;
  std::vector<std::string> remediations;  // from the fixed vocabulary (docs/analysis.md)
  Axis axis = Axis::kNone;
  double savings_fraction = 0;  // of the run's spend, on `axis`
  // Utilization levers: what each GPU it acts on would recover, of that GPU's known time;
  // savings_fraction is their sum weighted by each GPU's share of the known time. CombineSavings
  // combines the levers per GPU, so two findings never claim one GPU-second twice.
  std::vector<GpuShare> gpu_savings;
  std::string savings_reasoning;
};

// Swinging between a trough and busy at least 4 times, each side >= 15 % of the time, a cycle at
// most 10 minutes: a starved input pipeline (input_pipeline_starvation covers such a GPU's
// idle-held time, idle_held_gpu the rest).
bool IsBurstyGpu(const GpuUsage& g);

// The idle-held figures of one report, reconciled (docs/analysis.md; `cgov run` and `cgov report`
// alike): the phase's GPU-time is the
// short pauses on bursty GPUs (inside busy jobs: input_pipeline_starvation) plus the rest (the
// idle_held_gpu finding); the action list's sessions (an unbroken idle-held stretch of at least
// idle_held_min_ms) hold part of the rest.
struct IdleHeldParts {
  int64_t total_ms = 0;       // the idle-held phase, all GPUs
  int64_t in_bursts_ms = 0;   // of it, on bursty GPUs
  int64_t steady_ms = 0;      // of it, on the other GPUs: total - in_bursts
  int64_t in_actions_ms = 0;  // the idle-held time of the action list's sessions
};

// total_ms, in_bursts_ms and steady_ms of `usage` (in_actions_ms is the history report's).
IdleHeldParts SplitIdleHeld(const UsageTotals& usage);

// The remediation vocabulary, for validation and docs.
const std::vector<std::string>& RemediationVocabulary();

// Findings sorted by severity (critical first), then by savings.
// `gpu_names[i]` names usage.gpus[i] in the text ("3", "node-c/1"); empty: GPUs by position.
std::vector<Finding> Recommend(const UsageTotals& usage, const CostBlock& cost,
                               const std::vector<ResolvedPrice>& prices,
                               const PhaseThresholds& phases = {},
                               const std::vector<std::string>& gpu_names = {},
                               const std::vector<std::optional<MemoryHealth>>& health = {});

}  // namespace cgov

#endif  // CGOV_ANALYSIS_FINDINGS_H_
