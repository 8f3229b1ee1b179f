#include "report/summary_json.h"

#include <cmath>

#include "core/json_writer.h"
#include "core/time_format.h"
#include "report/compare_report.h"
#include "telemetry/gpu_json.h"

namespace cgov {
namespace {

using nlohmann::json;

json StatsJson(const std::optional<MetricStats>& s) {
  if (!s) return nullptr;
  return {{"min", Round3(s->min)}, {"p50", Round3(s->p50)},   {"p95", Round3(s->p95)},
          {"max", Round3(s->max)}, {"mean", Round3(s->mean)}, {"count", s->count}};
}

json MetricsJson(const MetricSet& metrics, bool gpu_only) {
  json out = json::object();
  for (size_t i = 0; i < kRunMetricCount; ++i) {
    auto m = static_cast<RunMetric>(i);
    if (gpu_only && (m == RunMetric::kCpuPct || m == RunMetric::kMemPct)) continue;
    out[RunMetricKey(m)] = StatsJson(metrics[i]);
  }
  return out;
}

template <typename T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json Usd(std::optional<MicroUsd> v, int decimals = 2) {
  return v ? json(UsdNumber(*v, decimals)) : json(nullptr);
}

json PhasesJson(const RunSummary& s) {
  const std::array<int64_t, kPhaseCount>& ms = s.phase_ms;
  const std::array<double, kPhaseCount>& shares = s.phase_share_pct;
  json out = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p) {
    out[std::string(PhaseKey(static_cast<Phase>(p)))] = {
        {"gpu_seconds", Round3(static_cast<double>(ms[p]) / 1000.0)},
        {"share_pct", shares[p]},
        {"cost_usd", s.cost.priced ? Usd(s.cost.phase_cost[p]) : json(nullptr)},
        {"waste_usd", s.cost.priced ? Usd(s.cost.phase_waste[p]) : json(nullptr)}};
  }
  return out;
}

}  // namespace

json CostJson(const CostBlock& c) {
  auto priced = [&](std::optional<MicroUsd> v, int decimals = 2) {
    return c.priced ? Usd(v, decimals) : json(nullptr);
  };
  json work = nullptr;
  if (c.work) {
    work = {
        {"units", *c.work},
        {"unit", c.unit},
        {"cost_per_unit_usd", c.priced && c.per_unit_usd ? json(*c.per_unit_usd) : json(nullptr)},
        {"units_per_gpu_hour",
         c.units_per_gpu_hour ? json(Round3(*c.units_per_gpu_hour)) : json(nullptr)}};
  }
  return {{"estimate", true},
          {"priced", c.priced},
          {"price_source", c.price_source},
          {"price_per_gpu_hour_usd", priced(c.price_per_gpu_hour, 6)},
          {"gpu_hours", Round6(c.gpu_hours)},
          {"effective_gpu_hours", Round6(c.effective_gpu_hours)},
          {"waste_fraction", Round3(c.waste_fraction)},
          {"total_usd", priced(c.total)},
          {"total_micro_usd", c.priced ? json(c.exact_total) : json(nullptr)},
          {"waste_usd", priced(c.waste)},
          {"cost_per_effective_gpu_hour_usd", priced(c.per_effective_gpu_hour)},
          {"hourly_usd", priced(c.hourly)},
          {"daily_usd", priced(c.daily)},
          {"monthly_usd", priced(c.monthly)},
          {"yearly_usd", priced(c.yearly)},
          {"projection", "if this pattern ran continuously"},
          {"work", work}};
}

json FindingsJson(const std::vector<Finding>& findings) {
  json out = json::array();
  for (const Finding& f : findings) {
    out.push_back({{"id", f.id},
                   {"severity", SeverityName(f.severity)},
                   {"title", f.title},
                   {"observed", {{"value", Round3(f.observed)}, {"unit", f.observed_unit}}},
                   {"threshold", {{"value", Round3(f.threshold)}, {"rule", f.threshold_text}}},
                   {"evidence",
                    {{"gpu_seconds", Round3(static_cast<double>(f.evidence_gpu_ms) / 1000.0)},
                     {"window_start_s", Round3(static_cast<double>(f.window_start_ms) / 1000.0)},
                     {"window_end_s", Round3(static_cast<double>(f.window_end_ms) / 1000.0)},
                     {"gpus", f.gpus}}},
                   {"recommendation", f.recommendation},
                   {"remediations", f.remediations},
                   {"axis", AxisName(f.axis)},
                   {"savings_fraction", Round3(f.savings_fraction)},
                   {"savings_reasoning", f.savings_reasoning}});
    // The history report names GPUs ("3", "node-c/1"); summary.json's findings have no names.
    if (!f.gpu_names.empty()) out.back()["evidence"]["gpu_names"] = f.gpu_names;
  }
  return out;
}

json SavingsJson(const SavingsBlock& s) {
  json levers = json::array();
  for (const SavingsLever& l : s.levers) {
    levers.push_back(
        {{"finding", l.finding_id}, {"axis", AxisName(l.axis)}, {"fraction", Round3(l.fraction)}});
  }
  json gpus = json::array();
  for (const GpuSavings& g : s.gpus) {
    json on = json::array();
    for (const SavingsLever& l : g.levers) {
      on.push_back({{"finding", l.finding_id}, {"fraction", Round3(l.fraction)}});
    }
    gpus.push_back({{"gpu", g.gpu},
                    {"name", g.name},
                    {"weight_fraction", Round3(g.weight)},
                    {"levers", on},
                    {"uncapped_fraction", Round3(g.uncapped)},
                    {"waste_fraction", Round3(g.waste_fraction)},
                    {"fraction", Round3(g.fraction)},
                    {"contribution_fraction", Round3(g.Contribution())}});
  }
  return {{"estimate", true},
          {"levers", levers},
          {"gpus", gpus},
          {"utilization_uncapped_fraction", Round3(s.utilization_uncapped)},
          {"waste_fraction", Round3(s.waste_fraction)},
          {"utilization_fraction", Round3(s.utilization_fraction)},
          {"rate_fraction", Round3(s.rate_fraction)},
          {"combined_fraction", Round3(s.combined_fraction)},
          {"combined_usd", Usd(s.combined_usd)}};
}

namespace {

json UsageJson(const UsageTotals& u) {
  auto s = [](int64_t ms) { return Round3(static_cast<double>(ms) / 1000.0); };
  return {{"covered_s", s(u.covered_ms)},
          {"gap_s", s(u.gap_ms)},
          {"idle_head_s", s(u.idle_head_ms)},
          {"idle_tail_s", s(u.idle_tail_ms)},
          {"graphics_only_gpu_seconds", s(u.GraphicsOnlyMs())},
          {"unknown_gpu_seconds", s(u.UnknownMs())}};
}

}  // namespace

json EnergyJson(const EnergyBlock& e) {
  auto joules = [](int64_t mj) { return Round3(static_cast<double>(mj) / 1e3); };
  json phases = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p) {
    phases[std::string(PhaseKey(static_cast<Phase>(p)))] = joules(e.phase_mj[p]);
  }
  auto co2e = [&](int64_t mj) {
    const std::optional<double> kg = e.Co2eKg(mj);
    return kg ? json(Round3(*kg)) : json(nullptr);
  };
  auto usd = [&](int64_t mj) {
    const std::optional<MicroUsd> cost = e.CostOf(mj);
    return cost ? json(UsdNumber(*cost)) : json(nullptr);
  };
  return {
      {"joules", joules(e.total_mj)},
      {"kwh", Round3(EnergyBlock::Kwh(e.total_mj))},
      {"phase_joules", phases},
      {"unknown_phase_joules", joules(e.unknown_phase_mj)},
      {"idle_joules", joules(e.idle_mj)},
      {"power_known_gpu_seconds", Round3(static_cast<double>(e.known_ms) / 1e3)},
      // CO2e and cost only at the intensity and price given (none is assumed).
      {"grid_g_per_kwh", e.grid_g_per_kwh ? json(*e.grid_g_per_kwh) : json(nullptr)},
      {"co2e_kg", co2e(e.total_mj)},
      {"idle_co2e_kg", co2e(e.idle_mj)},
      {"price_usd_per_kwh", e.price_per_kwh ? json(UsdNumber(*e.price_per_kwh, 6)) : json(nullptr)},
      {"cost_usd", usd(e.total_mj)},
      {"idle_cost_usd", usd(e.idle_mj)}};
}

json SummaryJson(const RunSummary& s) {
  json gpus = json::array();
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const GpuRunSummary& g = s.gpus[i];
    const int64_t energy_mj = i < s.usage.gpus.size() ? s.usage.gpus[i].EnergyMj() : 0;
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"memory_total_bytes", Opt(g.memory_total_bytes)},
                    {"lost", g.lost},
                    {"used_by_job", g.used_by_job},
                    {"metrics", MetricsJson(g.metrics, true)},
                    {"util_histogram", {{"bin_width_pct", 10}, {"counts", g.util_histogram}}},
                    {"energy_joules", Round3(static_cast<double>(energy_mj) / 1e3)}});
    if (g.mig) gpus.back()["mig"] = MigInstanceJson(*g.mig);
    gpus.back()["memory_health"] =
        g.memory_health ? MemoryHealthJson(*g.memory_health) : json(nullptr);
  }
  const bool gpu_data = s.gpu_unavailable_reason.empty();
  json out = {
      {"schema_version", RunSummary::kSchemaVersion},
      {"run",
       {{"command", s.command},
        {"exit_code", Opt(s.exit_code)},
        {"started_at", FormatRfc3339Utc(s.started_at_ns)},
        {"ended_at", FormatRfc3339Utc(s.ended_at_ns)},
        {"duration_s", Round3(s.duration_s)},
        {"tags", s.tags},
        {"host",
         {{"hostname", s.host.hostname},
          {"kernel", s.host.kernel},
          {"cpus", s.host.cpus},
          {"mem_total_bytes", Opt(s.host.mem_total_bytes)}}}}},
      {"sampling",
       {{"interval_s", Round3(s.interval_s)},
        {"samples", s.samples},
        {"too_short_to_measure", s.TooShortToMeasure()}}},
      {"gpu_data",
       {{"available", gpu_data},
        {"reason", gpu_data ? json(nullptr) : json(s.gpu_unavailable_reason)},
        {"driver_version", s.driver_version.empty() ? json(nullptr) : json(s.driver_version)}}},
      {"gpus", gpus},
      {"metrics", MetricsJson(s.metrics, false)},
      {"job",
       {{"cpu_seconds", s.job_cpu_seconds ? json(Round3(*s.job_cpu_seconds)) : json(nullptr)},
        {"rss_max_bytes", Opt(s.job_rss_max_bytes)}}},
      {"agent",
       {{"cpu_pct", Round3(s.agent_cpu_pct)},
        {"cpu_seconds", Round3(s.agent_cpu_seconds)},
        {"rss_max_bytes", s.agent_rss_max_bytes}}},
      {"phases", PhasesJson(s)},
      {"idle_held_reconciled",
       {{"gpu_seconds", Round3(static_cast<double>(s.idle_held.total_ms) / 1000.0)},
        {"in_bursts_gpu_seconds", Round3(static_cast<double>(s.idle_held.in_bursts_ms) / 1000.0)},
        {"steady_gpu_seconds", Round3(static_cast<double>(s.idle_held.steady_ms) / 1000.0)}}},
      {"energy", EnergyJson(s.energy)},
      {"cost", CostJson(s.cost)},
      {"findings", FindingsJson(s.findings)},
      {"savings", SavingsJson(s.savings)},
      {"usage", UsageJson(s.usage)},
      {"warnings", s.warnings},
  };
  if (s.baseline) out["baseline"] = ComparisonJson(*s.baseline, s.baseline_paths);
  out["gate"] = s.gate ? json{{"fired", s.gate->fired},
                              {"exit_status", s.gate->exit_status},
                              {"reason", s.gate->fired ? json(s.gate->reason) : json(nullptr)}}
                       : json(nullptr);
  return out;
}

}  // namespace cgov
