#include "app/fleet/fleet_queries.h"

#include <fmt/format.h>

namespace cgov {

// The hourly rule over a counter:
// cgov_gpu_phase_seconds_total -> cgov:gpu_phase_seconds:increase1h; with `fleet`, the fleet's
// (by GPU model and phase) cgov:fleet_gpu_phase_seconds:increase1h.
std::string RuleOf(std::string_view counter, bool fleet) {
  counter.remove_prefix(std::string_view("cgov_").size());
  counter.remove_suffix(std::string_view("_total").size());
  return fmt::format("cgov:{}{}:increase1h", fleet ? "fleet_" : "", counter);
}

// The owners' hourly rule over an identity counter: cgov_identity_held_seconds_total ->
// cgov:owner_held_seconds:increase1h (by host, user, project, team and namespace).
std::string OwnerRuleOf(std::string_view counter) {
  counter.remove_prefix(std::string_view("cgov_identity_").size());
  counter.remove_suffix(std::string_view("_total").size());
  return fmt::format("cgov:owner_{}:increase1h", counter);
}

// The daily rule over a counter: the owners' for an identity counter
// (cgov:owner_held_seconds:increase1d), else the counter's own (cgov:ticks:increase1d).
std::string DailyRuleOf(std::string_view counter) {
  std::string rule = counter.starts_with("cgov_identity_") ? OwnerRuleOf(counter) : RuleOf(counter);
  rule.back() = 'd';  // ...:increase1h -> ...:increase1d
  return rule;
}

const char* GpuCounter(GpuCounterKind kind) {
  switch (kind) {
    case GpuCounterKind::kPhase:
      return "cgov_gpu_phase_seconds_total";
    case GpuCounterKind::kBusy:
      return "cgov_gpu_busy_seconds_total";
    case GpuCounterKind::kPattern:
      return "cgov_gpu_pattern_seconds_total";
    case GpuCounterKind::kSwings:
      return "cgov_gpu_swings_total";
    case GpuCounterKind::kEnergy:
      return "cgov_gpu_phase_energy_joules_total";
    case GpuCounterKind::kEnergyTime:
      return "cgov_gpu_energy_seconds_total";
  }
  return "";
}

std::string OnHosts(const std::string& metric, const std::set<std::string>& hosts) {
  std::string alternatives;
  for (const std::string& host : hosts) {
    if (!alternatives.empty()) alternatives += '|';
    for (char c : host) {
      if (std::string_view(".+*?()|[]{}^$").find(c) != std::string_view::npos) {
        alternatives += "\\\\";  // a backslash for the regex, escaped for the string
      } else if (c == '\\' || c == '"') {
        alternatives += c == '\\' ? "\\\\\\" : "\\";  // a quote or a backslash, escaped
      }
      alternatives += c;
    }
  }
  return fmt::format("{}{{Hostname=~\"{}\"}}", metric, alternatives);
}

// What a counter added in the `range_ms` before the evaluation time, summed by `by`, from the
// scraped values themselves (nothing extrapolated): the last value in the range minus the
// last one before it (0 for a series born in the range). A series that reset in the range (a
// daemon restart) falls back to increase(), which handles resets.
std::string Increase(const std::string& metric, const char* by, int64_t range_ms) {
  const std::string r = fmt::format("[{}ms]", range_ms);
  return fmt::format(
      "sum by ({0}) ((last_over_time({1}{2}) - ({1} offset {3}ms or last_over_time({1}{2}) * 0)) "
      "and (resets({1}{2}) == 0) or increase({1}{2}))",
      by, metric, r, range_ms);
}
std::string GpuIncrease(GpuCounterKind kind, int64_t range_ms) {
  return Increase(GpuCounter(kind), kGpuCounterLabels, range_ms);
}

std::string Restarts(int64_t range_ms) {
  return fmt::format("sum by (Hostname) (resets(cgov_ticks_total[{}ms])) > 0", range_ms);
}

std::string LastValues(std::string_view by, std::string_view metric, std::string_view range) {
  return fmt::format("sum by ({}) (last_over_time({}[{}]))", by, metric, range);
}

std::string RuleSum(std::string_view by, std::string_view rule, int64_t range_ms) {
  return fmt::format("sum by ({}) (sum_over_time({}[{}ms])) > 0", by, rule, range_ms);
}

std::string RuleHour(std::string_view rule, bool by_phase) {
  return by_phase ? fmt::format("sum by (phase) (last_over_time({}[30m]))", rule)
                  : fmt::format("last_over_time({}[30m])", rule);
}

std::string GpuMean(std::string_view metric, int64_t range_ms) {
  return fmt::format("avg by (Hostname, UUID, GPU_I_ID) (avg_over_time({}[{}ms]))", metric,
                     range_ms);
}

std::string PlanStep(std::string_view metric, bool max, int64_t step_ms) {
  return fmt::format("{} by (Hostname, UUID, GPU_I_ID, modelName) ({}_over_time({}[{}ms]))",
                     max ? "max" : "avg", max ? "max" : "avg", metric, step_ms);
}

std::string PlanMemoryTotal(int64_t range_ms) {
  return fmt::format(
      "max by (Hostname, UUID, GPU_I_ID) (max_over_time(cgov_gpu_memory_used_bytes[{0}ms]) + "
      "max_over_time(cgov_gpu_memory_free_bytes[{0}ms]) + (max_over_time("
      "cgov_gpu_memory_reserved_bytes[{0}ms]) or max_over_time(cgov_gpu_memory_used_bytes[{0}ms]) "
      "* 0))",
      range_ms);
}

std::string InstanceIds(int64_t range_ms) {
  return fmt::format(
      "max by (Hostname, instance_id) (last_over_time("
      "cgov_build_info{{instance_id!=\"\"}}[{}ms]))",
      range_ms);
}

std::string Prices(std::string_view metric, int64_t range_ms) {
  return fmt::format("max by (Hostname, UUID, GPU_I_ID, source) (last_over_time({}[{}ms]))", metric,
                     range_ms);
}

std::string OpenCostPrices(int64_t range_ms) {
  return fmt::format("max by (node) (last_over_time(node_gpu_hourly_cost[{}ms]))", range_ms);
}

std::string MarkerSamples(std::string_view marker, int64_t range_ms) {
  return fmt::format("{}[{}ms]", marker, range_ms);
}

std::string AboveZero(const std::string& expr) { return expr + " > 0"; }

std::string PhaseCountersNow() { return "count(cgov_gpu_phase_seconds_total)"; }

std::string PhaseCountersWithinAYear() {
  return "count(last_over_time(cgov_gpu_phase_seconds_total[52w]))";
}

std::string RenamedLabels(int64_t range_ms) {
  std::string expr;
  for (const char* metric : {"cgov_honor_labels_check", "cgov_identity_held_seconds_total"}) {
    for (const char* label : {"exported_namespace", "exported_pod", "exported_container"}) {
      expr += fmt::format("{}group by (Hostname, job) (last_over_time({}{{{}!=\"\"}}[{}ms]))",
                          expr.empty() ? "" : " or ", metric, label, range_ms);
    }
  }
  return expr;
}

}  // namespace cgov
