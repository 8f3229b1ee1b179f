#include "report/html_report.h"

#include <chrono>
#include <map>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/money.h"
#include "core/time_format.h"
#include "report/budget_report.h"
#include "report/compare_report.h"
#include "report/history_gpu_table.h"
#include "report/history_report.h"
#include "report/history_who_table.h"
#include "report/html.h"
#include "report/idle_tables.h"
#include "report/metric_table.h"
#include "report/phase_table.h"
#include "report/plan_report.h"
#include "report/policy_report.h"
#include "report/run_gpu_table.h"
#include "report/showback_table.h"
#include "report/text_style.h"

namespace cgov {
namespace {

using html::Esc;
using html::Num;

std::string F1(double v) { return fmt::format("{:.1f}", v); }
std::string F2(double v) { return fmt::format("{:.2f}", v); }

std::string Kpi(std::string_view label, const std::string& value_html) {
  return fmt::format("<div class=\"kpi\">{}<b>{}</b></div>", Esc(label), value_html);
}

using html::FillDeclaredTable;

// The phase section shared by both reports: the bar, then the phase table (phase_table.h).
std::string PhaseSection(const PhaseFigures& f) {
  std::array<std::string, kPhaseCount> costs;
  for (size_t p = 0; p < kPhaseCount; ++p) {
    costs[p] = f.cost.priced ? FormatUsd(f.cost.phase_cost[p]) : "";
  }
  html::Table t;
  t.caption = "GPU-time by phase";
  const std::vector<Phase> rows = PhaseRows();
  FillDeclaredTable(
      PhaseColumns(), rows.size(),
      [&](const PhaseColumn& c, size_t i) { return PhaseCellText(f, c, rows[i]); },
      [&](const PhaseColumn& c, size_t i, double* scale) {
        return PhaseCellPointer(c, rows[i], scale);
      },
      &t);
  return "<section id=\"phases\"><h2>Where the GPU-time went</h2>\n" +
         html::PhaseBarSvg(f.share_pct, costs) + t.Render() + "</section>\n";
}

std::string CostKpis(const CostBlock& c) {
  std::string out = "<div class=\"kpis\">";
  out += Kpi("GPU-hours", Num(F2(c.gpu_hours), "/cost/gpu_hours"));
  out += Kpi("effective GPU-hours", Num(F2(c.effective_gpu_hours), "/cost/effective_gpu_hours"));
  out +=
      Kpi("capacity unused", Num(F1(c.waste_fraction * 100), "/cost/waste_fraction", 100) + " %");
  if (c.priced) {
    out += Kpi("cost (estimate)", Num(FormatUsd(c.total), "/cost/total_usd"));
    out += Kpi("of which wasted", Num(FormatUsd(c.waste), "/cost/waste_usd"));
    if (c.per_effective_gpu_hour) {
      out += Kpi("per effective GPU-hour", Num(FormatUsd(*c.per_effective_gpu_hour),
                                               "/cost/cost_per_effective_gpu_hour_usd"));
    }
  }
  out += "</div>\n";
  out += c.priced ? "<p class=\"muted\">Price: " + Esc(c.price_source) + "</p>\n"
                  : "<p>Cost: unknown — " + Esc(c.price_source) + "</p>\n";
  return out;
}

// The cost section of a run's page and a history's: the figures, the price and the projection,
// as the text and Markdown views show them (the history page lacked the projection).
std::string CostSection(const CostBlock& c) {
  std::string out = "<section id=\"cost\"><h2>Cost</h2>\n" + CostKpis(c);
  if (c.priced && c.hourly) {
    out += fmt::format(
        "<p>If this pattern ran continuously: {}/hour · {}/day · {}/month · {}/year</p>\n",
        Num(FormatUsd(*c.hourly), "/cost/hourly_usd"), Num(FormatUsd(*c.daily), "/cost/daily_usd"),
        Num(FormatUsd(*c.monthly), "/cost/monthly_usd"),
        Num(FormatUsd(*c.yearly), "/cost/yearly_usd"));
  }
  return out + "</section>\n";
}

std::string ChartsSection(const std::vector<std::string>& figures, std::string_view note) {
  std::string out =
      "<section id=\"charts\"><h2>Utilization and memory over time</h2>\n<ul class=\"legend\">"
      "<li><svg width=\"24\" height=\"10\" aria-hidden=\"true\"><line class=\"swatch-util\" "
      "x1=\"0\" x2=\"24\" y1=\"5\" y2=\"5\"/></svg>utilization % (solid; band: min–max)</li>"
      "<li><svg width=\"24\" height=\"10\" aria-hidden=\"true\"><line class=\"swatch-mem\" "
      "x1=\"0\" x2=\"24\" y1=\"5\" y2=\"5\"/></svg>memory used % (dashed; band: "
      "min–max)</li></ul>\n";
  if (!note.empty()) out += "<p class=\"muted\">" + Esc(note) + "</p>\n";
  out += "<div class=\"charts\">\n";
  for (const std::string& f : figures) out += f;
  return out + "</div></section>\n";
}

// ---- cgov run ----

// A distribution table (metric_table.h) whose figures are under `at` in the JSON.
std::string RunMetricTable(const MetricSet& metrics, const std::string& at, std::string caption) {
  html::Table t;
  t.caption = std::move(caption);
  const std::vector<RunMetric> rows = MetricRows(metrics);
  FillDeclaredTable(
      MetricColumns(), rows.size(),
      [&](const MetricColumn& c, size_t i) { return MetricCellText(metrics, c, rows[i]); },
      [&](const MetricColumn& c, size_t i, double* scale) {
        *scale = 1;
        return MetricCellPointer(at, c, rows[i]);
      },
      &t);
  return t.Render();
}

std::string RunHeader(const RunSummary& s) {
  std::string command;
  for (const std::string& word : s.command) command += (command.empty() ? "" : " ") + word;
  std::string gpus;
  if (!s.gpu_unavailable_reason.empty()) {
    gpus = "no GPU data (" + s.gpu_unavailable_reason + ")";
  } else {
    std::map<std::string, int> models;
    for (const GpuRunSummary& g : s.gpus) ++models[g.name.empty() ? "unknown GPU" : g.name];
    for (const auto& [name, n] : models)
      gpus += fmt::format("{}{} ×{}", gpus.empty() ? "" : ", ", name, n);
    if (gpus.empty()) gpus = "none found by the driver";
  }
  std::string ended =
      s.exit_code ? fmt::format("exited {}", *s.exit_code) : "ended (status unknown)";
  std::string out =
      "<header><h1>cgov run · <code>" + Esc(command) + "</code></h1>\n<ul class=\"facts\">";
  out += "<li>GPU: " + Esc(gpus) + "</li>";
  out += fmt::format("<li>Duration: {} s ({})</li>", Num(F1(s.duration_s), "/run/duration_s"),
                     Esc(SpanOf(static_cast<int64_t>(s.duration_s * 1000 + 0.5))));
  out += fmt::format("<li>Started {}</li>", Esc(FormatRfc3339Utc(s.started_at_ns)));
  out += fmt::format("<li>Job {}</li>", Esc(ended));
  out += fmt::format("<li>{} samples at {} s</li>",
                     Num(fmt::format("{}", s.samples), "/sampling/samples"),
                     Num(F1(s.interval_s), "/sampling/interval_s"));
  if (s.TooShortToMeasure()) {
    out +=
        "<li><strong>Too short to measure</strong>: run a longer job, or sample faster with "
        "<code>--interval 200ms</code></li>";
  } else {
    out += fmt::format("<li>Agent overhead: {} % CPU</li>",
                       Num(fmt::format("{:.2f}", s.agent_cpu_pct), "/agent/cpu_pct"));
  }
  if (!s.tags.empty()) {
    std::string tags;
    for (const auto& [k, v] : s.tags) tags += fmt::format("{}{}={}", tags.empty() ? "" : " ", k, v);
    out += "<li>Tags: <code>" + Esc(tags) + "</code></li>";
  }
  return out + "</ul></header>\n";
}

std::string RunCharts(const RunSummary& s) {
  std::vector<std::string> figures;
  const int64_t end_ms = static_cast<int64_t>(s.duration_s * 1000 + 0.5);
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const GpuRunSummary& g = s.gpus[i];
    const std::string label = g.label.empty() ? fmt::format("{}", g.index) : g.label;
    const std::string title =
        fmt::format("GPU {} ({})", label, g.name.empty() ? "unknown" : g.name);
    figures.push_back(fmt::format(
        "<figure class=\"gpu-chart\" data-gpu=\"{}\"><figcaption>{}</figcaption>{}</figure>\n",
        Esc(label), Esc(title),
        html::SeriesChartSvg(
            fmt::format("gpu{}", i), title,
            {{"util", "utilization %", &g.util_series}, {"mem", "memory used %", &g.mem_series}}, 0,
            std::max<int64_t>(end_ms, 1), "0 s", SpanOf(end_ms))));
  }
  return ChartsSection(figures, "");
}

// A table of a utilization histogram: a column per band of 10 %, a row per GPU.
html::Table UtilBandTable(std::string caption) {
  html::Table t;
  t.caption = std::move(caption);
  t.headers = {"GPU"};
  t.numeric = {false};
  for (size_t b = 0; b < kUtilBands; ++b) {
    t.headers.push_back(b + 1 < kUtilBands ? fmt::format("{}–{} %", b * 10, b * 10 + 10)
                                           : "90–100 %");
    t.numeric.push_back(true);
  }
  return t;
}

// A band's cell: its figure (read back from the JSON) and its share of the row.
std::string UtilBandCell(const std::string& figure, double part, double total) {
  return figure + fmt::format(" <span class=\"muted\">({:.0f} %)</span>", 100.0 * part / total);
}

// Each GPU's samples by utilization band: the distribution behind its P50 and P95.
std::string RunUtilHistogram(const RunSummary& s) {
  html::Table t = UtilBandTable("Samples by utilization (% of each GPU's samples)");
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const GpuRunSummary& g = s.gpus[i];
    uint64_t total = 0;
    for (uint64_t n : g.util_histogram) total += n;
    if (total == 0) continue;
    std::vector<std::string> row = {Esc(g.label.empty() ? fmt::format("{}", g.index) : g.label)};
    for (size_t b = 0; b < g.util_histogram.size(); ++b) {
      row.push_back(UtilBandCell(Num(fmt::format("{}", g.util_histogram[b]),
                                     fmt::format("/gpus/{}/util_histogram/counts/{}", i, b)),
                                 static_cast<double>(g.util_histogram[b]),
                                 static_cast<double>(total)));
    }
    t.rows.push_back(std::move(row));
  }
  return t.rows.empty() ? "" : t.Render();
}

std::string RunPerGpu(const RunSummary& s) {
  html::Table t;
  t.caption = "Per GPU";
  t.sortable = true;
  FillDeclaredTable(
      RunGpuColumns(s), s.gpus.size(),
      [&](const RunGpuColumn& c, size_t i) { return RunGpuCellText(c, s.gpus[i]); },
      [](const RunGpuColumn& c, size_t i, double*) { return RunGpuCellPointer(c, i); }, &t);
  return "<section id=\"gpus\"><h2>Per GPU</h2>" + t.Render() + RunUtilHistogram(s) +
         "</section>\n";
}

// ---- cgov report ----

constexpr double kKwhPerJoule = 1.0 / 3.6e6;

std::string Money(const HistorySummary& s, MicroUsd v, const std::string& pointer) {
  return s.cost.priced ? Num(FormatUsd(v), pointer) : "—";
}

std::string HistoryHeader(const HistorySummary& s) {
  std::string out = fmt::format(
      "<header><h1>GPU history of {}</h1>\n<ul class=\"facts\"><li>{} → {} ({})</li>"
      "<li>{} GPU(s)</li><li>time zone for the heatmap: {}</li></ul></header>\n",
      Esc(s.hostname.empty() ? "this host" : s.hostname), Esc(FormatMinuteUtc(s.since_ms)),
      Esc(FormatMinuteUtc(s.until_ms)), Esc(SpanOf(s.until_ms - s.since_ms)),
      Num(fmt::format("{}", s.gpu_count), "/gpu_count"), Esc(s.tz_name));
  return out;
}

std::string HistoryWaste(const HistorySummary& s) {
  std::string out = "<section id=\"waste\"><h2>Waste</h2>\n";
  out += fmt::format(
      "<p>Idle: {} GPU-hours ({} % of GPU-time), {} — about {} of {} GPUs idle on average.</p>\n",
      Num(F2(HoursOf(s.idle_ms)), "/waste/idle_gpu_seconds", 1.0 / 3600),
      Num(F1(s.idle_pct), "/waste/idle_pct"), Money(s, s.idle_cost, "/waste/idle_cost_usd"),
      Num(F1(s.mean_idle_gpus), "/waste/mean_idle_gpus"), s.gpu_count);
  const IdleHeldParts& h = s.idle_held;
  if (h.total_ms > 0) {
    auto hours = [](int64_t ms, const char* pointer) {
      return Num(F2(HoursOf(ms)), pointer, 1.0 / 3600) + " h";
    };
    out +=
        "<p>" +
        IdleHeldReconciledSentence(hours(h.total_ms, "/waste/idle_held/gpu_seconds"),
                                   hours(h.in_bursts_ms, "/waste/idle_held/in_bursts_gpu_seconds"),
                                   hours(h.steady_ms, "/waste/idle_held/steady_gpu_seconds")) +
        "; the action list's sessions hold " +
        hours(h.in_actions_ms, "/waste/idle_held/in_actions_gpu_seconds") + ".</p>\n";
  }
  if (ShowsIdleByDay(s)) {
    html::Table t;
    t.caption = "Idle GPU-hours by day (UTC)";
    FillDeclaredTable(
        IdleByDayColumns(false), s.idle_by_day.size(),
        [&](const IdleColumn& c, size_t i) { return IdleByDayCellText(s, c, i); },
        IdleByDayCellPointer, &t);
    out += t.Render();
  }
  if (ShowsIdleByHost(s)) {
    html::Table t;
    t.caption = "Idle GPU-hours by host";
    FillDeclaredTable(
        IdleByHostColumns(), s.idle_by_host.size(),
        [&](const IdleColumn& c, size_t i) { return IdleByHostCellText(s, c, i); },
        IdleByHostCellPointer, &t);
    out += t.Render();
  }
  return out + "</section>\n";
}

std::string HistoryCharts(const HistorySummary& s) {
  std::vector<std::string> figures;
  const int64_t first_hour = s.since_ms / 3'600'000;
  const int64_t last_hour = (s.until_ms + 3'600'000 - 1) / 3'600'000;
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const HistoryGpuRow& g = s.gpus[i];
    if (g.util_series.empty() && g.mem_series.empty()) continue;
    const std::string title =
        fmt::format("GPU {} ({})", g.label, g.gpu.name.empty() ? "unknown" : g.gpu.name);
    figures.push_back(fmt::format(
        "<figure class=\"gpu-chart\" data-gpu=\"{}\"><figcaption>{}</figcaption>{}</figure>\n",
        Esc(g.label), Esc(title),
        html::SeriesChartSvg(
            fmt::format("gpu{}", i), title + ", hourly means",
            {{"util", "utilization %", &g.util_series}, {"mem", "memory used %", &g.mem_series}},
            first_hour, std::max(last_hour, first_hour + 1),
            FormatMinuteUtc(s.since_ms).substr(0, 10), FormatMinuteUtc(s.until_ms).substr(0, 10))));
  }
  std::string note =
      "Hourly means; where a point stands for several hours its band spans their lowest and "
      "highest hourly means.";
  if (s.gpus.size() > kMaxChartedGpus) {
    note = fmt::format("{} GPUs: charts are drawn for at most {}; the table lists every GPU.",
                       s.gpus.size(), kMaxChartedGpus);
  }
  return ChartsSection(figures, note);
}

// Each GPU's time by utilization band: the distribution behind its mean.
std::string HistoryUtilHistogram(const HistorySummary& s) {
  html::Table t = UtilBandTable("GPU-hours by utilization (% of each GPU's time with a reading)");
  for (size_t i = 0; i < s.gpus.size(); ++i) {
    const HistoryGpuRow& g = s.gpus[i];
    const int64_t total = g.UtilBandMs();
    if (total == 0) continue;
    std::vector<std::string> row = {Esc(g.label)};
    for (size_t b = 0; b < kUtilBands; ++b) {
      const int64_t ms = g.totals.util_band_ms[b];
      row.push_back(
          UtilBandCell(Num(F2(HoursOf(ms)),
                           fmt::format("/gpus/{}/util_histogram/gpu_seconds/{}", i, b), 1.0 / 3600),
                       static_cast<double>(ms), static_cast<double>(total)));
    }
    t.rows.push_back(std::move(row));
  }
  return t.rows.empty() ? "" : t.Render();
}

std::string HistoryPerGpu(const HistorySummary& s) {
  html::Table t;
  t.caption = "Per GPU: shares of its time, means over the window";
  t.sortable = true;
  FillDeclaredTable(
      HistoryGpuColumns(s), s.gpus.size(),
      [&](const HistoryGpuColumn& c, size_t i) { return HistoryGpuCellText(c, s.gpus[i]); },
      HistoryGpuCellPointer, &t);
  return "<section id=\"gpus\"><h2>Per GPU</h2>" + t.Render() + HistoryUtilHistogram(s) +
         "</section>\n";
}

// The window's energy (issue 62): all of it, the idle part, CO2e when a grid intensity was given.
// CO2e and the energy's cost where --grid-intensity and --energy-price gave them (the run's and
// the history's energy blocks carry them at the same JSON pointers).
std::string EnergyCo2eAndCost(const EnergyBlock& e) {
  std::string out;
  if (e.grid_g_per_kwh) {
    out += "<p>CO2e " + Num(F1(*e.Co2eKg(e.total_mj)), "/energy/co2e_kg") + " kg at " +
           Esc(fmt::format("{:g}", *e.grid_g_per_kwh)) + " g/kWh (--grid-intensity).</p>\n";
  }
  if (e.price_per_kwh) {
    out += "<p>Electricity " + Num(FormatUsd(*e.CostOf(e.total_mj)), "/energy/cost_usd") + " at " +
           Esc(FormatUsd(*e.price_per_kwh, 3)) + "/kWh (--energy-price), of which idle " +
           Num(FormatUsd(*e.CostOf(e.idle_mj)), "/energy/idle_cost_usd") +
           ": beside the GPU-time dollars, not in them.</p>\n";
  }
  return out;
}

std::string HistoryEnergy(const HistorySummary& s) {
  const EnergyBlock& e = s.energy;
  if (e.known_ms <= 0) return "";
  std::string out = "<section id=\"energy\"><h2>Energy</h2>\n<p>" +
                    Num(FormatKwh(e.total_mj), "/energy/kwh") + " kWh (power × time) · idle " +
                    Num(FormatKwh(e.idle_mj), "/energy/idle_kwh") + " kWh: truly idle " +
                    Num(FormatKwh(e.phase_mj[static_cast<size_t>(Phase::kTrulyIdle)]),
                        "/energy/phase_joules/truly_idle", kKwhPerJoule) +
                    ", idle-held " +
                    Num(FormatKwh(e.phase_mj[static_cast<size_t>(Phase::kIdleHeld)]),
                        "/energy/phase_joules/idle_held", kKwhPerJoule) +
                    ".</p>\n";
  if (!e.grid_g_per_kwh) {
    out +=
        "<p class=\"muted\">CO2e: give your grid's intensity with --grid-intensity G (g/kWh); none "
        "is assumed.</p>\n";
  }
  return out + EnergyCo2eAndCost(e) + "</section>\n";
}

std::string HistoryWho(const HistorySummary& s) {
  html::Table t;
  t.caption = fmt::format("Who held the GPUs, by {}", HistoryByName(s.by));
  t.sortable = true;
  const std::vector<HistoryWhoRow> rows = HistoryWhoRows(s);
  FillDeclaredTable(
      HistoryWhoColumns(s), rows.size(),
      [&](const HistoryWhoColumn& c, size_t i) { return HistoryWhoCellText(s, c, rows[i]); },
      [&](const HistoryWhoColumn& c, size_t i, double* scale) {
        return HistoryWhoCellPointer(c, rows[i], scale);
      },
      &t);
  return "<section id=\"who\"><h2>Who held the GPUs</h2>" + t.Render() +
         "<p class=\"muted\">Held: time a process of theirs was on a GPU, or the kubelet had "
         "allocated it to their pod (a shared GPU counts for each holder). Share and cost: " +
         Esc(SharedSplitText(s)) + "</p></section>\n";
}

std::string HistoryShowback(const HistorySummary& s) {
  const Showback& b = s.showback;
  if (b.rows.empty() && b.billed_total == 0) return "";
  html::Table t;
  t.caption = ShowbackTitle(s);
  const std::vector<ShowbackTableRow> rows = ShowbackTableRows(s);
  FillDeclaredTable(
      ShowbackColumns(s), rows.size(),
      [&](const ShowbackColumn& c, size_t i) { return ShowbackCellText(s, c, rows[i]); },
      [&](const ShowbackColumn& c, size_t i, double* scale) {
        return ShowbackCellPointer(c, rows[i], scale);
      },
      &t);
  std::string out = "<section id=\"showback\"><h2>Showback</h2>" + t.Render();
  for (const std::string& n : b.notes) out += "<p class=\"muted\">" + Esc(n) + "</p>";
  return out + "</section>\n";
}

std::string HistoryActions(const HistorySummary& s) {
  std::string out = "<section id=\"actions\"><h2>Act on these: idle-held habits</h2>\n";
  if (!s.sessions_known) {
    return out +
           "<p>This source keeps no per-session data (Prometheus): no action list.</p></section>\n";
  }
  if (s.habits.empty()) {
    return out +
           fmt::format("<p>No process held a GPU idle for {} or more at a stretch.</p></section>\n",
                       Esc(SpanOf(s.idle_held_min_ms)));
  }
  out += "<ol class=\"actions\">";
  for (size_t i = 0; i < s.habits.size() && i < 15; ++i) {
    const HabitRow& h = s.habits[i];
    const std::string at = fmt::format("/idle_held_sessions/habits/{}/", i);
    // An allocated pod runs no process: it is named by the pod.
    const std::string holder =
        !h.pod_name.empty()
            ? fmt::format("<strong>pod {}</strong> (GPU allocated, nothing running)",
                          Esc(h.pod_name))
            : fmt::format("<strong>{}'s {}</strong> ({})",
                          Esc(h.user.empty() ? "(unknown)" : h.user), Esc(h.command), Esc(h.kind));
    out += fmt::format(
        "<li>{} · {} on GPU {}: idle-held {} in {} sessions on {} of {} days{}<br>→ {}</li>",
        Money(s, h.idle_held_cost, at + "idle_held_cost_usd"), holder, h.gpu_index,
        Esc(SpanOf(h.idle_held_ms)), h.sessions, h.days, h.window_days,
        h.ongoing ? " · still holding" : "", Esc(h.advice));
  }
  return out + "</ol></section>\n";
}

// A list of lines as a section ("" when there are none).
std::string ListSection(std::string_view id, std::string_view title,
                        const std::vector<std::string>& items) {
  if (items.empty()) return "";
  std::string out = fmt::format("<section id=\"{}\"><h2>{}</h2><ul>", id, Esc(title));
  for (const std::string& item : items) out += "<li>" + Esc(item) + "</li>";
  return out + "</ul></section>\n";
}

// This run against --baseline's runs (summary.json's "baseline").
std::string BaselineSection(const RunComparison& c, const std::vector<std::string>& paths) {
  html::Table t;
  t.caption = fmt::format("Against {} baseline run{}", paths.size(), paths.size() == 1 ? "" : "s");
  const std::vector<BaselineColumn> columns = BaselineColumns();
  for (const BaselineColumn& column : columns) {
    t.headers.push_back(column.header);
    t.numeric.push_back(column.Numeric());
  }
  for (const BaselineRow& row : BaselineRows()) {
    std::vector<std::string>& cells = t.rows.emplace_back();
    for (const BaselineColumn& column : columns) {
      const BaselineCell cell = BaselineCellOf(c, column, row);
      cells.push_back((cell.pointer.empty() ? Esc(cell.figure) : Num(cell.figure, cell.pointer)) +
                      Esc(cell.unit));
    }
  }
  std::string out = "<section id=\"baseline\"><h2>Against the baseline</h2>\n" + t.Render();
  if (c.threshold_pct) {
    out += fmt::format("<p>{}Gate: {}{}</p>\n", c.regressed ? "<strong>" : "", Esc(c.verdict),
                       c.regressed ? "</strong>" : "");
  }
  for (const std::string& n : c.notes) out += "<p class=\"muted\">" + Esc(n) + "</p>\n";
  return out + "</section>\n";
}

}  // namespace

std::string RunReportHtml(const RunSummary& s) {
  std::string command;
  for (const std::string& word : s.command) command += (command.empty() ? "" : " ") + word;
  std::string out = html::PageStart("cgov run · " + command);
  out += RunHeader(s);
  // A run too short to measure shows what it recorded, not figures (as the text report).
  const bool data = s.usage.KnownMs() > 0 && !s.TooShortToMeasure();
  if (data) {
    out += CostSection(s.cost) + PhaseSection({s.phase_share_pct, s.phase_ms, s.cost});
    const IdleHeldParts& h = s.idle_held;
    if (h.in_bursts_ms > 0) {  // the phase and the idle-held finding differ: how they add up
      auto seconds = [](int64_t ms, const char* pointer) {
        return Num(F1(static_cast<double>(ms) / 1000), pointer) + " GPU-s";
      };
      out += "<p>" +
             IdleHeldReconciledSentence(
                 seconds(h.total_ms, "/idle_held_reconciled/gpu_seconds"),
                 seconds(h.in_bursts_ms, "/idle_held_reconciled/in_bursts_gpu_seconds"),
                 seconds(h.steady_ms, "/idle_held_reconciled/steady_gpu_seconds")) +
             ".</p>\n";
    }
    if (const EnergyBlock& e = s.energy; e.known_ms > 0) {
      out += "<p>Energy: " + Num(FormatKwh(e.total_mj), "/energy/kwh") +
             " kWh (power × time) · idle " +
             Num(FormatKwh(e.idle_mj), "/energy/idle_joules", kKwhPerJoule) + " kWh.</p>\n" +
             EnergyCo2eAndCost(e);
    }
  }
  if (!s.gpus.empty()) out += RunCharts(s) + RunPerGpu(s);
  out += "<section id=\"metrics\"><h2>Metrics</h2>" +
         RunMetricTable(s.metrics, "/metrics", "Distribution over every sample") + "</section>\n";
  out += "<section id=\"findings\"><h2>Findings</h2>\n" +
         html::FindingsHtml(s.findings, s.savings, data) + "</section>\n";
  if (s.baseline) out += BaselineSection(*s.baseline, s.baseline_paths);
  out += ListSection("warnings", "Warnings", s.warnings);
  return out + html::PageEnd();
}

// The right-size plan (--plan): its lead with the figures tied to /plan, then its three tables.
std::string HistoryPlan(const HistorySummary& s) {
  const PlanSummary& p = s.plan;
  if (!p.computed) return "";
  if (p.covered_ms <= 0) {
    return "<section id=\"plan\"><h2>Right-size plan</h2>\n<p>" + Esc(PlanLead(p)) + "</p>" +
           (p.notes.empty() ? "" : "<p>" + Esc(p.notes[0]) + "</p>") + "</section>\n";
  }
  auto usd = [&](MicroUsd v, const char* at) { return p.priced ? Num(FormatUsd(v), at) : "—"; };
  std::string out = fmt::format(
      "<section id=\"plan\"><h2>Right-size plan</h2>\n<p>Replayed over {} → {} ({} days of raw "
      "samples): the loads fit on {} of {} GPUs, {} in the window ({} a month at this rate); {} "
      "workload(s) fit a smaller MIG profile or a cheaper GPU, {} ({} a month). Memory by p99 + {} "
      "% headroom, never over in the replay; compute (SM activity, else utilization) summed ≤ {} "
      "%, over it ≤ {} % of the time. Each lever's dollars are capped by the waste of the GPUs it "
      "acts on; with the other findings they combine in Savings.</p>\n",
      Esc(FormatMinuteUtc(p.from_ms)), Esc(FormatMinuteUtc(p.until_ms)),
      Num(F1(p.days), "/plan/days"), Num(fmt::format("{}", p.gpus_planned), "/plan/gpus_planned"),
      Num(fmt::format("{}", p.gpus_now), "/plan/gpus_now"),
      usd(p.consolidate_usd, "/plan/consolidate_usd"),
      usd(p.consolidate_usd_month, "/plan/consolidate_usd_month"),
      Num(fmt::format("{}", p.workloads_fitting), "/plan/workloads_fitting"),
      usd(p.rightsize_usd, "/plan/right_size_usd"),
      usd(p.rightsize_usd_month, "/plan/right_size_usd_month"), p.options.memory_margin_pct,
      p.options.compute_ceiling_pct, p.options.compute_over_pct);
  const char* captions[] = {"GPUs by model: now and under the plan",
                            "Each GPU that stays, and the loads it takes (replayed)",
                            "Workloads: what they use, the smallest MIG profile that holds them"};
  int n = 0;
  for (PlanTable table : {PlanTable::kGroups, PlanTable::kBins, PlanTable::kWorkloads}) {
    const std::vector<PlanRowRef> rows = PlanRows(p, table);
    const char* caption = captions[n++];
    if (rows.empty()) continue;
    html::Table t;
    t.caption = caption;
    t.sortable = true;
    FillDeclaredTable(
        PlanColumns(table), rows.size(),
        [&](const PlanColumn& c, size_t i) { return PlanCellText(p, table, c, rows[i]); },
        [&](const PlanColumn& c, size_t i, double*) { return PlanCellPointer(table, c, rows[i]); },
        &t);
    out += t.Render();
  }
  std::vector<std::string> notes = p.notes;
  for (const PlanGroupRow& g : p.groups) {
    for (const std::string& why : g.refused) {
      notes.push_back("refused by the replay (" + g.model + "): " + why);
    }
  }
  notes.push_back(
      "Not measured: how co-located jobs slow each other. MIG needs the GPU drained and "
      "reconfigured. The plan is as good as its window.");
  out += "<ul>";
  for (const std::string& n2 : notes) out += "<li>" + Esc(n2) + "</li>";
  return out + "</ul></section>\n";
}

std::string HistoryReportHtml(const HistorySummary& s) {
  std::string out =
      html::PageStart("GPU history of " + (s.hostname.empty() ? "this host" : s.hostname));
  out += HistoryHeader(s);
  if (s.usage.HeldMs() <= 0) {
    out += "<p>No samples in this window.</p>\n" + BudgetsHtml(s) + PolicyActionsHtml(s);
  } else {
    out += CostSection(s.cost) + PhaseSection({s.phase_share_pct, s.phase_ms, s.cost});
    out += HistoryWaste(s) + HistoryEnergy(s) + HistoryCharts(s) + HistoryPerGpu(s) +
           HistoryWho(s) + HistoryShowback(s) + BudgetsHtml(s) + HistoryActions(s) +
           PolicyActionsHtml(s);
    out += "<section id=\"heatmap\"><h2>Mean utilization by hour of day</h2>\n" +
           html::HeatmapSvg(s.heatmap, s.tz_name) + "</section>\n" + HistoryPlan(s);
    out += "<section id=\"findings\"><h2>Findings</h2>\n" +
           html::FindingsHtml(s.findings, s.savings, true) + "</section>\n";
  }
  out += ListSection("notes", "Notes", s.notes);
  return out + html::PageEnd();
}

}  // namespace cgov
