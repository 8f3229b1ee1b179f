// The fleet report's PromQL, as pure functions of what is asked: the label sets it sums by, the
// recording rules' names (deploy/prometheus/cgov-rules.yml), the counters' differences over a
// range and the hosts a query is narrowed to. fleet_load.cc plans the window and asks them.
#ifndef CGOV_APP_FLEET_FLEET_QUERIES_H_
#define CGOV_APP_FLEET_FLEET_QUERIES_H_

#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <string_view>

namespace cgov {

// The per-GPU counters the report reads: GPU-seconds by phase, busy (effective) seconds by phase,
// pattern seconds by pattern (what the findings read beyond the phases: analysis/timeline.h
// kUsagePatterns), swings, energy by phase and the seconds whose energy is known (by basis:
// a power reading, the driver's counter).
enum class GpuCounterKind : uint8_t { kPhase, kBusy, kPattern, kSwings, kEnergy, kEnergyTime };
inline constexpr GpuCounterKind kGpuCounterKinds[] = {
    GpuCounterKind::kPhase,  GpuCounterKind::kBusy,   GpuCounterKind::kPattern,
    GpuCounterKind::kSwings, GpuCounterKind::kEnergy, GpuCounterKind::kEnergyTime};
inline constexpr size_t kGpuCounterKindCount = std::size(kGpuCounterKinds);
// What every GPU counter is summed by: the GPU, and its phase, pattern or basis where it has one.
inline constexpr char kGpuCounterLabels[] =
    "Hostname, UUID, gpu, modelName, pci_bus_id, GPU_I_ID, GPU_I_PROFILE, phase, pattern, basis";
inline constexpr char kIdentityLabels[] =
    "Hostname, user, project, team, namespace, pod, container, pod_uid, slurm_job";
// Without pods: what every --by but pod, container and slurm_job needs (namespace says a pod
// was described).
inline constexpr char kIdentityLabelsWithoutPods[] = "Hostname, user, project, team, namespace";

inline constexpr char kEvaluations[] = "cgov:hourly_rules:evaluation_time_seconds";
// The rule file's version, recorded with each evaluation: from 2 on, the owners' identity rules
// (cgov:owner_*: identities summed by host, user, project, team and namespace) are recorded.
inline constexpr char kRulesVersion[] = "cgov:hourly_rules:version";
inline constexpr double kOwnerRulesVersion = 2;
// From 3 on, the GPUs' pattern and swing rules (cgov:gpu_pattern_seconds, cgov:gpu_swings).
inline constexpr double kPatternRulesVersion = 3;
// From 4 on, the energy rules (cgov:gpu_phase_energy_joules, cgov:gpu_energy_seconds and the
// identities' and owners' energy).
inline constexpr double kEnergyRulesVersion = 4;
// The daily rules (group cgov-daily): each evaluation's own time, and how many hourly
// evaluations it summed (those between 24.5 h and 0.5 h before it).
inline constexpr char kDailyEvaluations[] = "cgov:daily_rules:evaluation_time_seconds";
inline constexpr char kDailyHours[] = "cgov:daily_rules:hours";

// cgov_gpu_phase_seconds_total -> cgov:gpu_phase_seconds:increase1h; with `fleet`, the
// fleet's (by GPU model and phase) cgov:fleet_gpu_phase_seconds:increase1h.
std::string RuleOf(std::string_view counter, bool fleet = false);
// cgov_identity_held_seconds_total -> cgov:owner_held_seconds:increase1h (by host, user,
// project, team and namespace).
std::string OwnerRuleOf(std::string_view counter);
// The owners' daily rule for an identity counter (cgov:owner_held_seconds:increase1d), else the
// counter's own (cgov:ticks:increase1d).
std::string DailyRuleOf(std::string_view counter);
// The counter of a kind (cgov_gpu_phase_seconds_total, ...).
const char* GpuCounter(GpuCounterKind kind);
// `metric` narrowed to `hosts` (a regex alternation, each name's metacharacters escaped).
std::string OnHosts(const std::string& metric, const std::set<std::string>& hosts);
// What a counter added in the `range_ms` before the evaluation time, summed by `by`, from the
// scraped values themselves (nothing extrapolated); a series that reset in the range (a daemon
// restart) falls back to increase(), which handles resets.
std::string Increase(const std::string& metric, const char* by, int64_t range_ms);
// A per-GPU counter over `range_ms`, by GPU and phase or pattern.
std::string GpuIncrease(GpuCounterKind kind, int64_t range_ms);

// The hosts whose daemon restarted within `range_ms` (their tick counter reset).
std::string Restarts(int64_t range_ms);
// Each sum by `by` of `metric`'s last value within `range` ("1h", "3600000ms").
std::string LastValues(std::string_view by, std::string_view metric, std::string_view range);
// A recording rule's evaluations within `range_ms`, summed by `by` where they add to something.
std::string RuleSum(std::string_view by, std::string_view rule, int64_t range_ms);
// A rule's series as recorded at each hourly evaluation (within the half hour before it); with
// `by_phase`, summed by phase.
std::string RuleHour(std::string_view rule, bool by_phase = false);
// A gauge's mean over `range_ms`, by GPU (memory, power; or their rules').
std::string GpuMean(std::string_view metric, int64_t range_ms);
// The right-size plan's range queries (report --plan): a gauge by GPU over each step, its
// highest (`max`: memory, so that no peak between two points is missed) or its mean (compute).
std::string PlanStep(std::string_view metric, bool max, int64_t step_ms);
// Each GPU's whole memory over `range_ms`: used + free (+ the driver's reservation, when served).
std::string PlanMemoryTotal(int64_t range_ms);
// The instance ids the daemons were given (--instance-id), over `range_ms`.
std::string InstanceIds(int64_t range_ms);
// Each daemon's price by GPU and source: the raw gauge's last value, or a price rule's.
std::string Prices(std::string_view metric, int64_t range_ms);
// OpenCost's node_gpu_hourly_cost by node.
std::string OpenCostPrices(int64_t range_ms);
// The series whose cgov labels a scrape renamed (exported_namespace/pod/container) within
// `range_ms`: a scrape without honor_labels.
std::string RenamedLabels(int64_t range_ms);
// A rule marker's samples over `range_ms` (its evaluations: kEvaluations, kRulesVersion, ...).
std::string MarkerSamples(std::string_view marker, int64_t range_ms);
// Only the series of `expr` above zero (an increase by host: the hosts that added anything).
std::string AboveZero(const std::string& expr);
// How many GPU phase counters the store has at the evaluation time, and within the year before
// it: which of "no cgov metrics" and "none in this window" a report without GPUs says.
std::string PhaseCountersNow();
std::string PhaseCountersWithinAYear();

}  // namespace cgov

#endif  // CGOV_APP_FLEET_FLEET_QUERIES_H_
