#include "report/run_report.h"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "core/duration.h"

namespace cgov {
namespace {

std::string Cell(const std::optional<MetricStats>& s, double MetricStats::*field) {
  return s ? fmt::format("{:.1f}", (*s).*field) : "—";
}

std::string GpuHeadline(const RunSummary& s) {
  if (!s.gpu_unavailable_reason.empty()) {
    return fmt::format("GPU: no GPU data ({})", s.gpu_unavailable_reason);
  }
  if (s.gpus.empty()) return "GPU: none found by the driver";
  std::map<std::string, int> models;  // name -> how many, sorted for stable output
  for (const GpuRunSummary& g : s.gpus) ++models[g.name.empty() ? "unknown GPU" : g.name];
  std::string out = "GPU: ";
  bool first = true;
  for (const auto& [name, n] : models) {
    out += fmt::format("{}{} ×{}", first ? "" : ", ", name, n);
    first = false;
  }
  return out;
}

std::string MetricTable(const RunSummary& s) {
  std::string out =
      "| Metric       |   Min |   P50 |   P95 |   Max |  Mean |\n"
      "|--------------|------:|------:|------:|------:|------:|\n";
  for (size_t i = 0; i < kRunMetricCount; ++i) {
    const auto& m = s.metrics[i];
    out += fmt::format("| {:<12} | {:>5} | {:>5} | {:>5} | {:>5} | {:>5} |\n",
                       RunMetricLabel(static_cast<RunMetric>(i)), Cell(m, &MetricStats::min),
                       Cell(m, &MetricStats::p50), Cell(m, &MetricStats::p95),
                       Cell(m, &MetricStats::max), Cell(m, &MetricStats::mean));
  }
  return out;
}

std::string PerGpuTable(const RunSummary& s) {
  std::string out =
      "\n| GPU | Util % P50 | Util % Mean | Mem % Max | Power W Mean | Temp °C Max | Job |\n"
      "|----:|-----------:|------------:|----------:|-------------:|------------:|:---:|\n";
  for (const GpuRunSummary& g : s.gpus) {
    const auto& m = g.metrics;
    auto at = [&](RunMetric metric) -> const std::optional<MetricStats>& {
      return m[static_cast<size_t>(metric)];
    };
    out += fmt::format("| {:>3} | {:>10} | {:>11} | {:>9} | {:>12} | {:>11} | {:^3} |{}\n",
                       g.index, Cell(at(RunMetric::kGpuUtilPct), &MetricStats::p50),
                       Cell(at(RunMetric::kGpuUtilPct), &MetricStats::mean),
                       Cell(at(RunMetric::kGpuMemPct), &MetricStats::max),
                       Cell(at(RunMetric::kGpuPowerW), &MetricStats::mean),
                       Cell(at(RunMetric::kGpuTempC), &MetricStats::max),
                       g.used_by_job ? "yes" : "", g.lost ? " lost during the run" : "");
  }
  return out;
}

std::string JobLine(const RunSummary& s) {
  std::string ended = s.exit_code ? fmt::format("exited {}", *s.exit_code) : "ended (status unknown)";
  if (s.exit_code && *s.exit_code > 128) ended += fmt::format(" (signal {})", *s.exit_code - 128);
  std::string cpu = s.job_cpu_seconds ? fmt::format(" · job CPU {:.1f} s", *s.job_cpu_seconds) : "";
  std::string rss = s.job_rss_max_bytes
                        ? fmt::format(" · job RSS max {}", FormatBytes(*s.job_rss_max_bytes))
                        : "";
  return fmt::format("{} samples at {:.1f}s intervals · job {}{}{}\n", s.samples, s.interval_s,
                     ended, cpu, rss);
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1ull << 20)) return fmt::format("{:.1f} KiB", b / 1024);
  if (bytes < (1ull << 30)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  return fmt::format("{:.1f} GiB", b / (1ull << 30));
}

std::string RunReportMarkdown(const RunSummary& s, const std::string& out_dir) {
  std::string command;
  for (const std::string& word : s.command) command += (command.empty() ? "" : " ") + word;
  std::string out = fmt::format("## cgov run · {}\n\n", command);
  out += fmt::format("{} · Duration: {} · Agent overhead: {:.2f}% CPU / {} RSS\n\n",
                     GpuHeadline(s),
                     FormatDuration(std::chrono::milliseconds(
                         static_cast<int64_t>(s.duration_s * 1000 + 0.5))),
                     s.agent_cpu_pct, FormatBytes(s.agent_rss_max_bytes));
  out += MetricTable(s);
  if (s.gpus.size() > 1) out += PerGpuTable(s);
  out += "\n" + JobLine(s);
  if (!s.tags.empty()) {
    std::string tags;
    for (const auto& [k, v] : s.tags) tags += fmt::format("{}{}={}", tags.empty() ? "" : " ", k, v);
    out += fmt::format("Tags: {}\n", tags);
  }
  for (const std::string& w : s.warnings) out += fmt::format("Warning: {}\n", w);
  if (!out_dir.empty()) out += fmt::format("Files: {}/ (samples.jsonl, summary.json, report.md)\n", out_dir);
  return out;
}

}  // namespace cgov
