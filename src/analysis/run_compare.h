// Comparing runs: this run against one or more baseline runs of the same job (`cgov run
// --baseline`, `cgov compare`), and the figure a regression gate watches. Pure; the runs come
// from their summary.json (report/summary_read.h). docs/ci.md states the rules.
#ifndef CGOV_ANALYSIS_RUN_COMPARE_H_
#define CGOV_ANALYSIS_RUN_COMPARE_H_

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "analysis/findings.h"
#include "analysis/phases.h"
#include "core/status.h"
#include "core/tags.h"

namespace cgov {

struct FindingDigest {
  std::string id;
  Severity severity = Severity::kInfo;
  std::string title;
  std::string evidence;        // "observed 27.3 % of GPU-time (threshold: >= 5 % ...) on GPU 0,1"
  std::string recommendation;  // the finding's advice
};

// What a comparison or a cross-run report reads of one run's summary.json.
struct RunDigest {
  std::string path;  // where it was read from ("" for the run being recorded)
  Tags tags;
  std::optional<int> exit_code;
  std::string started_at;  // RFC 3339
  double duration_s = 0;
  double gpu_hours = 0;
  double effective_gpu_hours = 0;
  std::optional<double> total_usd;  // null when the run was not priced; rounded to the cent
  std::optional<double> price_per_gpu_hour_usd;  // when every GPU had the same price
  double interval_s = 0;                         // the sampling interval (0: unknown)
  size_t gpu_count = 0;                          // GPUs (or MIG instances) sampled
  // The total in micro-dollars as the run priced it (summary.json's cost.total_micro_usd; a
  // summary written before it has none).
  std::optional<int64_t> total_micro_usd;
  // The run's cost before rounding to the cent: its micro-dollars, else GPU-hours x the one
  // price, when there is one. (Compared in cents, a run of two prices read $0.0052 -> $0.0139
  // as "+0.0 %": issue 57, 2.)
  std::optional<double> ExactTotalUsd() const {
    if (total_micro_usd) return static_cast<double>(*total_micro_usd) / 1e6;
    if (price_per_gpu_hour_usd) return gpu_hours * *price_per_gpu_hour_usd;
    return total_usd;
  }
  std::optional<double> waste_usd;
  double waste_pct = 0;  // of GPU capacity unused (summary's cost.waste_fraction x 100)
  std::optional<double> work;
  std::string unit;  // "samples", ...; "" without work
  std::optional<double> cost_per_unit_usd;
  std::array<double, kPhaseCount> phase_share_pct{};
  std::vector<FindingDigest> findings;
  // The run's own comparison with its baseline, when it had one (summary.json's baseline block).
  std::string baseline_figure;  // "cost per sample"; "" without a baseline
  std::optional<double> baseline_change_pct;
  bool baseline_regressed = false;
  std::string baseline_verdict;
};

// The figure a comparison gates on, chosen from what every run has:
// cost per unit of work when all have work in the same unit and a price; else the cost of the run
// when all are priced (the same job doing the same work); else its GPU-hours.
enum class CompareFigure { kCostPerUnit, kCostPerRun, kGpuHoursPerRun };

struct RunComparison {
  CompareFigure figure = CompareFigure::kGpuHoursPerRun;
  std::string figure_name;  // "cost per sample", "cost per run", "GPU-hours per run"
  std::string figure_key;   // "cost_per_unit_usd", "cost_usd", "gpu_hours" (the JSON names)
  std::vector<double> baseline_values;  // each baseline run's figure, in the order given
  double baseline = 0;                  // their median
  double current = 0;
  std::optional<double>
      change_pct;  // (current - baseline) / baseline x 100; null when baseline is 0
  std::optional<double> spread_pct;  // (max - min) / median x 100 over >= 2 baselines
  // What a run's figure cannot tell apart: one sample interval of each GPU (a run's start and end
  // fall anywhere within one), in the figure's unit. A change within it is never a regression.
  double noise_floor = 0;
  double baseline_max = 0;
  double waste_pct_baseline = 0, waste_pct_current = 0;  // baseline: the mean over the baselines
  double waste_change_pp = 0;                            // current - baseline
  std::array<double, kPhaseCount> phase_pct_baseline{}, phase_pct_current{}, phase_change_pp{};
  std::vector<FindingDigest> findings_new;   // in this run, in no baseline
  std::vector<FindingDigest> findings_gone;  // in a baseline, not in this run
  std::vector<std::string> notes;            // tags or units that differ, failed baselines
  // The gate (--fail-on-regression PCT).
  std::optional<double> threshold_pct;
  bool regressed = false;
  std::string verdict;  // one line: what rose by how much, against which rule
};

// The baseline rule: the current figure (unrounded: a cost is GPU-hours x the price, not the
// cents shown) is compared with the baselines' median. It is a regression when it rose by more
// than `threshold_pct` and by more than the noise floor, and, with two or more baselines, also lies
// above the highest of them (beyond the run-to-run spread). InvalidArgument without baselines.
Result<RunComparison> CompareRuns(const std::vector<RunDigest>& baselines, const RunDigest& current,
                                  std::optional<double> threshold_pct);

// A cost per unit as shown: "$0.0123", or per million units below a cent ("$24.68/M").
std::string FormatUnitCost(double usd);

// Tags that identify a CI run rather than the job (branch, commit, ...): a baseline from another
// branch is the point, so these are left out when tags must match.
bool IsRunSpecificTag(const std::string& key);

// The tags two runs must share to be the same job: every tag but the run-specific ones.
bool SameJobTags(const Tags& a, const Tags& b);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_RUN_COMPARE_H_
