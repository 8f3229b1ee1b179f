#include "report/run_report.h"

#include <algorithm>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "analysis/phases.h"
#include "core/duration.h"
#include "report/compare_report.h"
#include "report/metric_table.h"
#include "report/phase_table.h"
#include "report/run_gpu_table.h"
#include "report/text_style.h"

namespace cgov {
namespace {

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

// The distribution table (metric_table.h).
std::string MetricTable(const RunSummary& s, const TextStyle& st) {
  auto cell = [&](const MetricColumn& c, RunMetric m) { return MetricCellText(s.metrics, c, m); };
  return DeclaredTextTable(MetricColumns(), MetricRows(s.metrics), cell, st.markdown);
}

std::string PerGpuTable(const RunSummary& s, const TextStyle& st) {
  return "\n" + DeclaredTextTable(RunGpuColumns(s), s.gpus, RunGpuCellText, st.markdown);
}

std::string JobLine(const RunSummary& s) {
  std::string ended =
      s.exit_code ? fmt::format("exited {}", *s.exit_code) : "ended (status unknown)";
  if (s.exit_code && *s.exit_code > 128) ended += fmt::format(" (signal {})", *s.exit_code - 128);
  std::string cpu = s.job_cpu_seconds ? fmt::format(" · job CPU {:.1f} s", *s.job_cpu_seconds) : "";
  std::string rss = s.job_rss_max_bytes
                        ? fmt::format(" · job RSS max {}", FormatBytes(*s.job_rss_max_bytes))
                        : "";
  return fmt::format("{} samples at {:.1f}s intervals · job {}{}{}\n", s.samples, s.interval_s,
                     ended, cpu, rss);
}

}  // namespace

// One character per 2 % of GPU-time, widths from the shares (which sum to 100).
std::string PhaseBar(const std::array<double, kPhaseCount>& shares) {
  static const char* kGlyph[kPhaseCount] = {"·", "░", "▒", "▓", "█"};
  std::array<int64_t, kPhaseCount> tenths{};
  for (size_t p = 0; p < kPhaseCount; ++p) tenths[p] = static_cast<int64_t>(shares[p] * 10 + 0.5);
  const std::array<double, kPhaseCount> cells = SharesPct(tenths, 0);  // 0..100, whole
  std::string bar = "[";
  for (size_t p = 0; p < kPhaseCount; ++p) {
    for (int k = 0; k < static_cast<int>(cells[p] / 2 + 0.5); ++k) bar += kGlyph[p];
  }
  return bar + "]";
}

namespace {

// When part of the idle-held phase is pauses on bursty GPUs, the table's idle-held share and the
// idle_held_gpu finding's observed value differ: one line says how they add up. The finding's
// part in tenths as it shows it, the bursts' part the rest of the table's share.
std::string IdleHeldReconciled(const RunSummary& s) {
  const IdleHeldParts& h = s.idle_held;
  const int64_t known = s.usage.KnownMs();
  if (h.in_bursts_ms <= 0 || known <= 0) return "";
  const auto total = static_cast<int64_t>(
      std::llround(s.phase_share_pct[static_cast<size_t>(Phase::kIdleHeld)] * 10));
  const auto steady = std::min<int64_t>(
      total, std::llround(1000.0 * static_cast<double>(h.steady_ms) / static_cast<double>(known)));
  auto pct = [](int64_t tenths) {
    return fmt::format("{:.1f} %", static_cast<double>(tenths) / 10);
  };
  return "\n" +
         IdleHeldReconciledSentence(pct(total) + " of GPU-time", pct(total - steady), pct(steady)) +
         ".\n";
}

// The run's energy in one line (issue 62), when its GPUs reported power.
std::string EnergyLine(const RunSummary& s) {
  const EnergyBlock& e = s.energy;
  if (e.known_ms <= 0) return "";
  return fmt::format("\nEnergy (power x time): {} · idle {} (truly idle {}, idle-held {})\n",
                     FormatEnergy(e.total_mj), FormatEnergy(e.idle_mj),
                     FormatEnergy(e.phase_mj[static_cast<size_t>(Phase::kTrulyIdle)]),
                     FormatEnergy(e.phase_mj[static_cast<size_t>(Phase::kIdleHeld)])) +
         Co2eLine(e) + ElectricityLine(e);
}

std::string CostSection(const RunSummary& s, const TextStyle& st) {
  const CostBlock& c = s.cost;
  const std::array<int64_t, kPhaseCount>& ms = s.phase_ms;
  if (s.usage.KnownMs() <= 0) return "";
  const std::array<double, kPhaseCount>& shares = s.phase_share_pct;
  std::string out = TextHeading("Where the GPU-time went", st, 3);
  out += PhaseBar(shares) +
         "  · truly idle ░ idle, memory held ▒ underutilized ▓ productive █ compute-bound\n\n";
  const PhaseFigures figures{shares, ms, c};
  auto cell = [&](const PhaseColumn& column, Phase p) { return PhaseCellText(figures, column, p); };
  out += DeclaredTextTable(PhaseColumns(), PhaseRows(), cell, st.markdown);
  out += IdleHeldReconciled(s) + EnergyLine(s);
  if (s.usage.gap_ms > 0) {
    out += fmt::format(
        "\nNo data for {:.1f} s (gaps longer than twice the interval are not filled).\n",
        static_cast<double>(s.usage.gap_ms) / 1000.0);
  }
  return out + CostText(c, st);
}

// The per-GPU steps, the largest first; a fleet's long tail is summed in one line.
std::string SavingsGpuLines(const SavingsBlock& v) {
  constexpr size_t kShown = 16;
  std::vector<const GpuSavings*> rows;
  for (const GpuSavings& g : v.gpus) rows.push_back(&g);
  std::stable_sort(rows.begin(), rows.end(), [](const GpuSavings* a, const GpuSavings* b) {
    return a->Contribution() > b->Contribution();
  });
  std::string out;
  double rest = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const GpuSavings& g = *rows[i];
    if (i >= kShown) {
      rest += g.Contribution();
      continue;
    }
    std::string levers;
    for (const SavingsLever& l : g.levers) {
      levers +=
          fmt::format("{}{} {:.1f} %", levers.empty() ? "" : ", ", l.finding_id, l.fraction * 100);
    }
    out += fmt::format(
        "   GPU {} ({:.1f} % of {}): {} → {:.1f} %, capped by its waste {:.1f} % → {:.1f} % = "
        "{:.1f} % of the spend\n",
        g.name, g.weight * 100, v.by_spend ? "the spend" : "GPU-time", levers, g.uncapped * 100,
        g.waste_fraction * 100, g.fraction * 100, g.Contribution() * 100);
  }
  if (rows.size() > kShown) {
    out += fmt::format("   … {} more GPUs: {:.1f} % of the spend (summary.json has every step)\n",
                       rows.size() - kShown, rest * 100);
  }
  return out;
}

std::string SavingsText(const SavingsBlock& v, const TextStyle& st) {
  std::string out =
      "\nSavings (estimate). On each GPU its utilization levers combine as 1 − Π(1 − f), capped "
      "by that GPU's measured waste; the GPUs add by their share of the " +
      std::string(v.by_spend ? "spend" : "GPU-time") + ":\n";
  out += SavingsGpuLines(v);
  out += fmt::format(
      "Utilization levers: {:.1f} % of the spend (uncapped {:.1f} %; the measured waste is {:.1f} "
      "%); rate levers {:.1f} %; combined 1 − (1 − {:.1f} %)(1 − {:.1f} %) = {}{}.\n",
      v.utilization_fraction * 100, v.utilization_uncapped * 100, v.waste_fraction * 100,
      v.rate_fraction * 100, v.utilization_fraction * 100, v.rate_fraction * 100,
      Strong(fmt::format("{:.1f} %", v.combined_fraction * 100), st),
      v.combined_usd ? fmt::format(" ≈ {}", FormatUsd(*v.combined_usd)) : "");
  return out;
}

}  // namespace

std::string CostText(const CostBlock& c, const TextStyle& st) {
  std::string out =
      fmt::format("\nGPU-time: {:.3f} GPU-hours, {:.3f} effective (time × utilization).\n",
                  c.gpu_hours, c.effective_gpu_hours);
  if (!c.priced) return out + fmt::format("Cost: unknown — {}.\n", c.price_source);
  out += fmt::format(
      "Cost (estimate; {}): {} total · {} wasted ({:.1f} % of GPU capacity unused) · {} per "
      "effective GPU-hour\n",
      c.price_source, Strong(FormatUsd(c.total), st), FormatUsd(c.waste), c.waste_fraction * 100,
      c.per_effective_gpu_hour ? FormatUsd(*c.per_effective_gpu_hour) : "—");
  if (c.hourly) {
    out += fmt::format("If this pattern ran continuously: {}/hour · {}/day · {}/month · {}/year\n",
                       FormatUsd(*c.hourly), FormatUsd(*c.daily), FormatUsd(*c.monthly),
                       FormatUsd(*c.yearly));
  }
  if (c.work && c.per_unit_usd) {
    out += fmt::format(
        "Unit cost: ${:.4g} per {} · ${:.4g} per million ({:.0f} {} in the run, {:.1f} per "
        "GPU-hour)\n",
        *c.per_unit_usd, c.unit.substr(0, c.unit.size() - 1), *c.per_unit_usd * 1e6, *c.work,
        c.unit, c.units_per_gpu_hour.value_or(0));
  }
  return out;
}

std::string FindingsText(const std::vector<Finding>& findings, const SavingsBlock& v, bool has_data,
                         const TextStyle& st) {
  if (findings.empty()) return has_data ? "\nNo findings: nothing crossed a threshold.\n" : "";
  std::string out = TextHeading("Findings", st, 3);
  int n = 0;
  for (const Finding& f : findings) {
    std::string gpus;
    if (f.gpu_names.empty()) {
      for (unsigned g : f.gpus) gpus += fmt::format("{}{}", gpus.empty() ? "" : ",", g);
    } else {
      for (const std::string& g : f.gpu_names) gpus += (gpus.empty() ? "" : ",") + g;
    }
    // Markdown bolds the tag and the title together; a terminal colours the tag by severity.
    const std::string head = st.markdown
                                 ? fmt::format("**[{}] {}**", SeverityName(f.severity), f.title)
                                 : SeverityTag(f.severity, st) + " " + Strong(f.title, st);
    out += fmt::format("{}. {} — observed {:.1f} {} (threshold: {}){}\n   {}\n", ++n, head,
                       f.observed, f.observed_unit, f.threshold_text,
                       gpus.empty() ? "" : fmt::format(" on GPU {}", gpus), f.recommendation);
    if (f.axis != Axis::kNone && f.savings_fraction > 0) {
      out += fmt::format("   Estimated recoverable: {:.1f} % of the spend ({} lever: {}).\n",
                         f.savings_fraction * 100, AxisName(f.axis), f.savings_reasoning);
    }
  }
  if (!v.levers.empty()) out += SavingsText(v, st);
  return out;
}

std::string FormatBytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1ull << 20)) return fmt::format("{:.1f} KiB", b / 1024);
  if (bytes < (1ull << 30)) return fmt::format("{:.1f} MiB", b / (1 << 20));
  return fmt::format("{:.1f} GiB", b / (1ull << 30));
}

std::string RunReportText(const RunSummary& s, const std::string& out_dir, const TextStyle& st,
                          const std::vector<std::string>& files) {
  std::string command;
  for (const std::string& word : s.command) command += (command.empty() ? "" : " ") + word;
  const std::string title = "cgov run · " + command;
  std::string out = st.markdown ? "## " + title + "\n\n" : Strong(title, st) + "\n\n";
  const std::string duration =
      FormatDuration(std::chrono::milliseconds(static_cast<int64_t>(s.duration_s * 1000 + 0.5)));
  if (s.TooShortToMeasure()) {
    // cgov's start-up is most of such a run: its CPU share and the cost of a sample or two are
    // no measurement.
    out += fmt::format(
        "{} · Duration: {} · too short to measure: {} sample{} (one every {}). Run a longer job, "
        "or sample faster with --interval 200ms.\n",
        GpuHeadline(s), duration, s.samples, s.samples == 1 ? "" : "s",
        FormatDuration(std::chrono::milliseconds(static_cast<int64_t>(s.interval_s * 1000 + 0.5))));
  } else {
    out +=
        fmt::format("{} · Duration: {} · Agent overhead: {:.2f}% CPU / {} RSS\n\n", GpuHeadline(s),
                    duration, s.agent_cpu_pct, FormatBytes(s.agent_rss_max_bytes));
    out += MetricTable(s, st);
    if (s.gpus.size() > 1) out += PerGpuTable(s, st);
    out += CostSection(s, st);
    out += FindingsText(s.findings, s.savings, s.usage.KnownMs() > 0, st);
  }
  if (s.baseline) out += ComparisonText(*s.baseline, s.baseline_paths, st);
  out += "\n" + JobLine(s);
  if (!s.tags.empty()) {
    std::string tags;
    for (const auto& [k, v] : s.tags) tags += fmt::format("{}{}={}", tags.empty() ? "" : " ", k, v);
    out += fmt::format("Tags: {}\n", tags);
  }
  for (const std::string& w : s.warnings) out += fmt::format("Warning: {}\n", w);
  if (!out_dir.empty()) {
    std::string names;
    for (const std::string& f : files) names += (names.empty() ? "" : ", ") + f;
    out += files.empty() ? fmt::format("Files: none written in {}/\n", out_dir)
                         : fmt::format("Files: {}/ ({})\n", out_dir, names);
  }
  return out;
}

}  // namespace cgov
