#include "report/summary_json.h"

#include "core/time_format.h"
#include "store/sample_record.h"

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

}  // namespace

json SummaryJson(const RunSummary& s) {
  json gpus = json::array();
  for (const GpuRunSummary& g : s.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"memory_total_bytes", Opt(g.memory_total_bytes)},
                    {"lost", g.lost},
                    {"used_by_job", g.used_by_job},
                    {"metrics", MetricsJson(g.metrics, true)}});
  }
  const bool gpu_data = s.gpu_unavailable_reason.empty();
  return {
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
      {"sampling", {{"interval_s", Round3(s.interval_s)}, {"samples", s.samples}}},
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
      {"warnings", s.warnings},
  };
}

}  // namespace cgov
