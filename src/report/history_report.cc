#include "report/history_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/duration.h"
#include "core/json_writer.h"
#include "core/time_format.h"
#include "report/budget_report.h"
#include "report/history_gpu_table.h"
#include "report/history_who_table.h"
#include "report/idle_tables.h"
#include "report/phase_table.h"
#include "report/plan_report.h"
#include "report/policy_report.h"
#include "report/run_report.h"
#include "report/showback_table.h"
#include "report/summary_json.h"
#include "report/text_style.h"
#include "telemetry/gpu_json.h"

namespace cgov {
namespace {

using nlohmann::json;

constexpr size_t kMaxActions = 15;

// Inline code: `text` in Markdown, the text itself on a terminal.
std::string Code(std::string_view text, const TextStyle& st) {
  return st.markdown ? fmt::format("`{}`", text) : std::string(text);
}

std::string Headline(const HistorySummary& s, const TextStyle& st) {
  const bool md = st.markdown;
  const std::string title = fmt::format(
      "GPU history of {} · {} → {} ({})", s.hostname.empty() ? "this host" : s.hostname,
      FormatMinuteUtc(s.since_ms), FormatMinuteUtc(s.until_ms), SpanOf(s.until_ms - s.since_ms));
  std::string out = md ? "# " + title + "\n" : (st.color ? Strong(title, st) : title) + "\n";
  if (s.usage.HeldMs() <= 0) return out + "\nNo samples in this window.\n";
  out += fmt::format(
      "{} GPU(s) · {:.2f} GPU-hours recorded · cost {}\n", s.gpu_count, s.cost.gpu_hours,
      s.cost.priced ? fmt::format("{} (estimate; {})", FormatUsd(s.cost.total), s.cost.price_source)
                    : "unknown — " + s.cost.price_source);
  out += TextHeading("Where the GPU-time went", st);
  out += PhaseBar(s.phase_share_pct) +
         "  · truly idle ░ idle, memory held ▒ underutilized ▓ productive █ compute-bound\n\n";
  const PhaseFigures figures{s.phase_share_pct, s.phase_ms, s.cost};
  auto cell = [&](const PhaseColumn& c, Phase p) { return PhaseCellText(figures, c, p); };
  out += DeclaredTextTable(PhaseColumns(), PhaseRows(), cell, md);
  if (s.usage.UnknownMs() > 0) {
    out += fmt::format("\nUtilization unknown for {:.2f} GPU-hours (billed, not classified).\n",
                       HoursOf(s.usage.UnknownMs()));
  }
  return out + CostText(s.cost, st);
}

// The idle GPU-hours of each UTC day, with a bar in plain text, when the window spans two days
// or more.
std::string IdleByDay(const HistorySummary& s, const TextStyle& st) {
  if (!ShowsIdleByDay(s)) return "";
  std::vector<size_t> rows(s.idle_by_day.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  auto cell = [&](const IdleColumn& c, size_t i) { return IdleByDayCellText(s, c, i); };
  return "\nIdle GPU-hours by day:\n\n" +
         DeclaredTextTable(IdleByDayColumns(!st.markdown), rows, cell, st.markdown);
}

// A fleet's idle GPU-hours by host, when it has two hosts or more.
std::string IdleByHost(const HistorySummary& s, const TextStyle& st) {
  if (!ShowsIdleByHost(s)) return "";
  std::vector<size_t> rows(s.idle_by_host.size());
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  auto cell = [&](const IdleColumn& c, size_t i) { return IdleByHostCellText(s, c, i); };
  return "\nIdle GPU-hours by host:\n\n" +
         DeclaredTextTable(IdleByHostColumns(), rows, cell, st.markdown);
}

std::string Waste(const HistorySummary& s, const TextStyle& st) {
  const int64_t graphics = s.usage.GraphicsOnlyMs();
  std::string out = TextHeading("Waste", st);
  out += fmt::format(
      "Idle: {:.2f} GPU-hours ({:.1f} % of GPU-time){} — ≈ {:.1f} of {} GPUs idle on average "
      "(truly idle {:.2f} h, idle-held {:.2f} h).\n",
      HoursOf(s.idle_ms), s.idle_pct, s.cost.priced ? ", " + FormatUsd(s.idle_cost) : "",
      s.mean_idle_gpus, s.gpu_count, HoursOf(s.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)]),
      HoursOf(s.phase_ms[static_cast<size_t>(Phase::kIdleHeld)]));
  const IdleHeldParts& h = s.idle_held;
  if (h.total_ms > 0) {
    auto hours = [](int64_t ms) { return fmt::format("{:.2f} h", HoursOf(ms)); };
    out +=
        IdleHeldReconciledSentence(hours(h.total_ms), hours(h.in_bursts_ms), hours(h.steady_ms)) +
        fmt::format("; the action list's sessions (idle-held ≥ {} at a stretch) hold {}.\n",
                    SpanOf(s.idle_held_min_ms), hours(h.in_actions_ms));
  }
  if (graphics > 0) {
    out += fmt::format(
        "Of the truly idle time, {:.2f} GPU-hours had only a graphics process (Xorg, a desktop) "
        "holding memory: not idle-held, but the card did no compute.\n",
        HoursOf(graphics));
  }
  return out + IdleByDay(s, st) + IdleByHost(s, st);
}

std::string PerGpu(const HistorySummary& s, const TextStyle& st) {
  return TextHeading("Per GPU (shares of its time; means over the window)", st) +
         DeclaredTextTable(HistoryGpuColumns(s), s.gpus, HistoryGpuCellText, st.markdown);
}

// The window's energy in a few lines: all of it, the idle part by phase, and CO2e when a grid
// intensity was given (none is assumed).
std::string Energy(const HistorySummary& s, const TextStyle& st) {
  const EnergyBlock& e = s.energy;
  if (e.known_ms <= 0) return "";
  std::string out = TextHeading("Energy (power x time)", st);
  const std::string coverage =
      e.known_ms >= e.all_ms
          ? ""
          : fmt::format(" over the {:.1f} % of the GPU-time with a power reading", e.known_pct);
  out += fmt::format("{}{} · idle {} ({:.1f} %: truly idle {}, idle-held {})\n",
                     FormatEnergy(e.total_mj), coverage, FormatEnergy(e.idle_mj), e.idle_pct,
                     FormatEnergy(e.phase_mj[static_cast<size_t>(Phase::kTrulyIdle)]),
                     FormatEnergy(e.phase_mj[static_cast<size_t>(Phase::kIdleHeld)]));
  if (e.metered_ms > 0) {
    out += fmt::format(
        "The driver's energy counter measured {:.1f} % of the GPU-time; power x time the rest\n",
        e.metered_pct);
  }
  out +=
      e.grid_g_per_kwh
          ? Co2eLine(e)
          : "CO2e: give your grid's intensity with --grid-intensity G (g/kWh): none is assumed\n";
  return out + ElectricityLine(e);
}

std::string Who(const HistorySummary& s, const TextStyle& st) {
  const std::string by = HistoryByName(s.by);
  auto cell = [&](const HistoryWhoColumn& c, const HistoryWhoRow& r) {
    return HistoryWhoCellText(s, c, r);
  };
  return TextHeading("Who (by " + by + ")", st) +
         DeclaredTextTable(HistoryWhoColumns(s), HistoryWhoRows(s), cell, st.markdown) +
         "\nHeld: time a process of theirs was on a GPU, or the kubelet had allocated it to their "
         "pod (a shared GPU counts for each holder). Share and cost: " +
         SharedSplitText(s) + "\n";
}

std::string ShowbackText(const HistorySummary& s, const TextStyle& st) {
  const Showback& b = s.showback;
  auto cell = [&](const ShowbackColumn& c, const ShowbackTableRow& r) {
    return ShowbackCellText(s, c, r);
  };
  std::string out = TextHeading(ShowbackTitle(s), st) +
                    DeclaredTextTable(ShowbackColumns(s), ShowbackTableRows(s), cell, st.markdown);
  if (!b.estimate) {
    out += fmt::format(
        "\n{} of {} billed lines matched a host with GPU time; each line's cost is spread over the "
        "GPU time recorded inside it.\n",
        b.matched_lines, b.lines);
  }
  for (const std::string& n : b.notes) out += "Note: " + n + "\n";
  return out;
}

std::string Actions(const HistorySummary& s, const TextStyle& st) {
  std::string out = TextHeading(fmt::format("Act on these: idle-held habits (sessions idle-held ≥ "
                                            "{} at a stretch, by holder, process and GPU)",
                                            SpanOf(s.idle_held_min_ms)),
                                st);
  if (!s.sessions_known) {
    return out +
           "Not available from Prometheus: sessions (which process, since when) live in each "
           "host's history database: " +
           Code("cgov report --db", st) +
           " on the node. The idle-held column of Who shows whose they are.\n";
  }
  if (s.habits.empty()) {
    return out + fmt::format("None: no process held memory on a cold GPU for {} or more.\n",
                             SpanOf(s.idle_held_min_ms));
  }
  int n = 0;
  for (const HabitRow& h : s.habits) {
    if (n == static_cast<int>(kMaxActions)) {
      out += fmt::format("… and {} more (all of them in --format json)\n",
                         s.habits.size() - kMaxActions);
      break;
    }
    const std::string typical =
        h.typical_start_hour < 0 ? ""
                                 : fmt::format("; typically {} from {:02}:00 UTC",
                                               SpanOf(h.typical_stretch_ms), h.typical_start_hour);
    // An allocated pod runs no process: it is named by the pod.
    const std::string holder =
        !h.pod_name.empty()
            ? fmt::format("pod {} (GPU allocated, nothing running)", h.pod_name)
            : fmt::format("{}'s {} ({})", h.user.empty() ? "(unknown user)" : h.user,
                          h.command.empty() ? "?" : h.command, h.kind);
    out += fmt::format(
        "{}. {} · {} on GPU {}: idle-held {} in {} session{} on {} of {} day{}{}{}\n"
        "   → {}\n",
        ++n, s.cost.priced ? FormatUsd(h.idle_held_cost) : "—", holder, h.gpu_index,
        SpanOf(h.idle_held_ms), h.sessions, h.sessions == 1 ? "" : "s", h.days, h.window_days,
        h.window_days == 1 ? "" : "s", typical, h.ongoing ? " · still holding" : "", h.advice);
  }
  out += fmt::format(
      "\n{} idle-held session{} in all: {} lists each (pid, start, end, longest stretch).\n",
      s.actions.size(), s.actions.size() == 1 ? "" : "s", Code("--format json", st));
  return out;
}

std::string Heatmap(const HistorySummary& s, const TextStyle& st) {
  const bool md = st.markdown;
  static const char* kDays[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  std::string out = TextHeading("Mean utilization by hour of day (" + s.tz_name + ")", st);
  if (md) out += "```\n";
  out += "     00  03  06  09  12  15  18  21\n";
  for (int d = 0; d < 7; ++d) {
    std::string line = fmt::format("{}  ", kDays[d]);
    for (int h = 0; h < 24; ++h) {
      const std::optional<double>& u = s.heatmap[d][h];
      line += !u ? " " : *u < 10 ? "·" : *u < 30 ? "░" : *u < 50 ? "▒" : *u < 70 ? "▓" : "█";
      if (h % 3 == 2 && h != 23) line += " ";
    }
    out += line + "\n";
  }
  out += "     (blank no data · <10 % ░ <30 % ▒ <50 % ▓ <70 % █ ≥70 %)\n";
  if (md) out += "```\n";
  return out;
}

json PhaseMsJson(const std::array<int64_t, kPhaseCount>& ms) {
  json out = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p) {
    out[std::string(PhaseKey(static_cast<Phase>(p)))] = Round3(static_cast<double>(ms[p]) / 1e3);
  }
  return out;
}

// Energy in joules (exact to the mJ credited: the rows add up) and CO2e where a grid intensity
// was given.
json Joules(int64_t mj) { return Round3(static_cast<double>(mj) / 1e3); }
json Co2eKg(const HistorySummary& s, int64_t mj) {
  const std::optional<double> kg = s.energy.Co2eKg(mj);
  return kg ? json(Round3(*kg)) : json(nullptr);
}

// What `mj` cost at --energy-price (none without it).
json EnergyCostUsd(const HistorySummary& s, int64_t mj) {
  const std::optional<MicroUsd> usd = s.energy.CostOf(mj);
  return usd ? json(UsdNumber(*usd)) : json(nullptr);
}

// The energy block of summary.json (with CO2e and cost), and what only a history has: the part
// no one held, the counter's share.
json HistoryEnergyJson(const HistorySummary& s) {
  const EnergyBlock& e = s.energy;
  json out = EnergyJson(e);
  out["idle_kwh"] = Round3(EnergyBlock::Kwh(e.idle_mj));
  out["unattributed_joules"] = Joules(e.unattributed_mj);
  out["counter_metered_gpu_seconds"] = Round3(static_cast<double>(e.metered_ms) / 1e3);
  return out;
}

json Usd(const HistorySummary& s, MicroUsd v) {
  return s.cost.priced ? json(UsdNumber(v)) : json(nullptr);
}

json IdleByDayJson(const HistorySummary& s) {
  json out = json::array();
  for (const IdleDay& d : s.idle_by_day) {
    out.push_back({{"day", FormatDateUtc(d.day_start_ms)},
                   {"idle_gpu_seconds", Round3(static_cast<double>(d.idle_ms) / 1e3)},
                   {"idle_cost_usd", Usd(s, d.idle_cost)}});
  }
  return out;
}

json IdleByHostJson(const HistorySummary& s) {
  json out = json::array();
  for (const IdleHost& h : s.idle_by_host) {
    out.push_back({{"host", h.host},
                   {"gpus", h.gpus},
                   {"idle_gpu_seconds", Round3(static_cast<double>(h.idle_ms) / 1e3)},
                   {"idle_cost_usd", Usd(s, h.idle_cost)}});
  }
  return out;
}

// A GPU's time by utilization band, null where the source keeps none.
json UtilHistogramJson(const HistoryGpuRow& g) {
  if (g.UtilBandMs() == 0) return nullptr;
  json seconds = json::array();
  for (int64_t ms : g.totals.util_band_ms) seconds.push_back(Round3(static_cast<double>(ms) / 1e3));
  return {{"bin_width_pct", 10}, {"gpu_seconds", seconds}};
}

json GpusJson(const HistorySummary& s) {
  json out = json::array();
  for (const HistoryGpuRow& g : s.gpus) {
    json shares = json::object();
    for (size_t p = 0; p < kPhaseCount; ++p) {
      shares[std::string(PhaseKey(static_cast<Phase>(p)))] = g.share_pct[p];
    }
    auto opt = [](const std::optional<double>& v) { return v ? json(Round3(*v)) : json(nullptr); };
    out.push_back({{"index", g.gpu.index},
                   {"uuid", g.gpu.uuid},
                   {"name", g.gpu.name},
                   {"label", g.label},
                   {"mig", g.gpu.mig ? MigInstanceJson(*g.gpu.mig) : json(nullptr)},
                   {"host", g.gpu.host.empty() ? json(s.hostname) : json(g.gpu.host)},
                   {"samples", g.totals.samples},
                   {"held_seconds", Round3(static_cast<double>(g.totals.usage.HeldMs()) / 1e3)},
                   {"phase_seconds", PhaseMsJson(g.totals.usage.phase_ms)},
                   {"phase_share_pct", shares},
                   {"graphics_only_seconds",
                    Round3(static_cast<double>(g.totals.usage.graphics_only_ms) / 1e3)},
                   {"mean_util_pct", opt(g.mean_util_pct)},
                   {"util_histogram", UtilHistogramJson(g)},
                   {"mean_mem_used_mib", opt(g.mean_mem_used_mib)},
                   {"mean_power_w", opt(g.mean_power_w)},
                   {"energy_joules", Joules(g.totals.usage.EnergyMj())},
                   {"idle_energy_joules", Joules(g.totals.usage.IdleEnergyMj())},
                   {"mean_sm_active_pct", opt(g.mean_sm_active_pct)},
                   {"mean_tensor_active_pct", opt(g.mean_tensor_active_pct)},
                   {"price_source", g.price.Describe()},
                   {"cost_usd", g.price.per_gpu_hour ? json(UsdNumber(g.cost)) : json(nullptr)}});
  }
  return out;
}

json IdleHeldJson(const IdleHeldParts& h) {
  auto seconds = [](int64_t ms) { return Round3(static_cast<double>(ms) / 1e3); };
  return {{"gpu_seconds", seconds(h.total_ms)},
          {"in_bursts_gpu_seconds", seconds(h.in_bursts_ms)},
          {"steady_gpu_seconds", seconds(h.steady_ms)},
          {"in_actions_gpu_seconds", seconds(h.in_actions_ms)}};
}

json WhoJson(const HistorySummary& s) {
  json out = json::array();
  for (const WhoRow& w : s.who) {
    out.push_back({{"key", w.key},
                   {"users", w.users},
                   {"held_seconds", Round3(static_cast<double>(w.held_ms) / 1e3)},
                   {"idle_held_seconds", Round3(static_cast<double>(w.idle_held_ms) / 1e3)},
                   {"attributed_seconds", PhaseMsJson(w.attributed_ms)},
                   {"share_pct", Round3(w.share_pct)},
                   {"cost_usd", Usd(s, w.cost)},
                   {"idle_held_cost_usd", Usd(s, w.idle_held_cost)},
                   {"energy_joules", Joules(w.energy_mj)},
                   {"idle_held_energy_joules", Joules(w.idle_held_energy_mj)},
                   {"co2e_kg", Co2eKg(s, w.energy_mj)},
                   {"energy_cost_usd", EnergyCostUsd(s, w.energy_mj)}});
  }
  return out;
}

json ActionsJson(const HistorySummary& s) {
  json out = json::array();
  for (const ActionRow& a : s.actions) {
    const SessionRecord& x = a.session;
    out.push_back(
        {{"gpu_index", a.gpu_index},
         {"gpu_uuid", a.gpu_uuid},
         {"pid", x.allocation() ? json(nullptr) : json(x.pid)},
         {"user", a.user},
         {"command", a.command},
         {"start", FormatRfc3339Utc(x.start_ms * 1'000'000)},
         {"end", FormatRfc3339Utc(x.end_ms * 1'000'000)},
         {"ongoing", a.ongoing},
         {"held_seconds", Round3(static_cast<double>(x.held_ms) / 1e3)},
         {"idle_held_seconds", Round3(static_cast<double>(x.idle_held_share_ms) / 1e3)},
         {"held_while_idle_seconds", Round3(static_cast<double>(x.idle_held_ms) / 1e3)},
         {"longest_idle_held_seconds", Round3(static_cast<double>(x.idle_streak_max_ms) / 1e3)},
         {"longest_idle_held_start", FormatRfc3339Utc(x.idle_streak_max_start_ms * 1'000'000)},
         {"mem_max_mib", x.mem_max_mib},
         {"idle_held_cost_usd", Usd(s, a.idle_held_cost)},
         {"advice", a.advice}});
  }
  return out;
}

json HabitsJson(const HistorySummary& s) {
  json out = json::array();
  for (const HabitRow& h : s.habits) {
    out.push_back(
        {{"user", h.user},
         {"command", h.command},
         {"kind", h.kind},
         {"gpu_index", h.gpu_index},
         {"gpu_uuid", h.gpu_uuid},
         {"sessions", h.sessions},
         {"days", h.days},
         {"window_days", h.window_days},
         {"idle_held_seconds", Round3(static_cast<double>(h.idle_held_ms) / 1e3)},
         {"idle_held_cost_usd", Usd(s, h.idle_held_cost)},
         {"typical_start_hour_utc",
          h.typical_start_hour < 0 ? json(nullptr) : json(h.typical_start_hour)},
         {"typical_idle_held_seconds", Round3(static_cast<double>(h.typical_stretch_ms) / 1e3)},
         {"ongoing", h.ongoing},
         {"advice", h.advice}});
  }
  return out;
}

json HeatmapJson(const HistorySummary& s) {
  json out = json::array();
  for (const auto& day : s.heatmap) {
    json row = json::array();
    for (const auto& u : day) row.push_back(u ? json(Round3(*u)) : json(nullptr));
    out.push_back(row);
  }
  return out;
}

}  // namespace

std::string SharedSplitText(const HistorySummary& s) {
  std::string out =
      "each sample's GPU-time goes to the compute holders of the GPU; a GPU shared by several is "
      "split in proportion to their SM utilization while it is busy and the driver reports "
      "per-process utilization, evenly otherwise (idle-held time always).";
  if (s.shared_by_util_ms > 0 || s.shared_evenly_ms > 0) {
    out += fmt::format(
        " Shared GPU-time in this window: {:.2f} GPU-h split by utilization, {:.2f} GPU-h evenly.",
        HoursOf(s.shared_by_util_ms), HoursOf(s.shared_evenly_ms));
  }
  return out;
}

std::string HistoryReportText(const HistorySummary& s, const TextStyle& st) {
  std::string out = Headline(s, st);
  if (s.usage.HeldMs() <= 0) {  // the budgets' periods may still hold spend
    out += BudgetsText(s, st) + PolicyActionsText(s, st);
    for (const std::string& n : s.notes) out += "Note: " + n + "\n";
    return out;
  }
  out += Waste(s, st) + Energy(s, st) + PerGpu(s, st) + Who(s, st) + ShowbackText(s, st) +
         BudgetsText(s, st) + Actions(s, st) + PolicyActionsText(s, st) + Heatmap(s, st) +
         PlanText(s.plan, st);
  out += FindingsText(s.findings, s.savings, true, st);
  for (const std::string& n : s.notes) out += "\nNote: " + n + "\n";
  return out;
}

json ShowbackJson(const HistorySummary& s) {
  const Showback& b = s.showback;
  auto usd = [](int64_t cents) { return static_cast<double>(cents) / 100.0; };
  json rows = json::array();
  for (const ShowbackRow& r : b.rows) {
    rows.push_back({{"key", r.key},
                    {"usd", usd(r.cents)},
                    {"gpu_hours", Round6(static_cast<double>(r.attributed_ms) / 3.6e6)},
                    {"share_pct", Round3(r.share_pct)}});
  }
  return {{"estimate", b.estimate},
          {"billing_source", b.source},
          {"idle_cost_policy", b.policy.Name()},
          {"by", HistoryByName(s.by)},
          {"billed_total_usd", usd(b.billed_total_cents)},
          {"rows", std::move(rows)},
          {"idle_usd", usd(b.idle_cents)},
          {"idle_gpu_hours", Round6(static_cast<double>(b.idle_ms) / 3.6e6)},
          {"idle_share_pct", Round3(b.idle_share_pct)},
          {"unmatched_usd", usd(b.unmatched_cents)},
          {"unmatched_share_pct", Round3(b.unmatched_share_pct)},
          {"lines", b.lines},
          {"matched_lines", b.matched_lines},
          {"notes", b.notes}};
}

std::string HistoryShowbackCsv(const HistorySummary& s) { return ShowbackCsv(s); }

namespace {

// Every member but the optional ones.
json HistoryReportJsonCore(const HistorySummary& s) {
  const int64_t held = s.usage.HeldMs();
  json phases = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p) {
    phases[std::string(PhaseKey(static_cast<Phase>(p)))] = {
        {"gpu_seconds", Round3(static_cast<double>(s.phase_ms[p]) / 1e3)},
        {"share_pct", s.phase_share_pct[p]},
        {"cost_usd", Usd(s, s.cost.phase_cost[p])}};
  }
  return {
      {"schema", "cgov.history-report"},
      {"schema_version", HistorySummary::kSchemaVersion},
      {"host", s.hostname},
      {"window",
       {{"since", FormatRfc3339Utc(s.since_ms * 1'000'000)},
        {"until", FormatRfc3339Utc(s.until_ms * 1'000'000)}}},
      {"by", HistoryByName(s.by)},
      {"timezone", s.tz_name},
      {"gpu_count", s.gpu_count},
      {"held_gpu_seconds", Round3(static_cast<double>(held) / 1e3)},
      {"unknown_gpu_seconds", Round3(static_cast<double>(s.usage.UnknownMs()) / 1e3)},
      {"phases", phases},
      {"waste",
       {{"idle_gpu_seconds", Round3(static_cast<double>(s.idle_ms) / 1e3)},
        {"idle_pct", Round3(s.idle_pct)},
        {"idle_cost_usd", Usd(s, s.idle_cost)},
        {"mean_idle_gpus", Round3(s.mean_idle_gpus)},
        {"graphics_only_gpu_seconds", Round3(static_cast<double>(s.usage.GraphicsOnlyMs()) / 1e3)},
        {"idle_held", IdleHeldJson(s.idle_held)}}},
      {"idle_by_day", IdleByDayJson(s)},
      {"idle_by_host", IdleByHostJson(s)},
      {"cost", CostJson(s.cost)},
      {"showback", ShowbackJson(s)},
      {"gpus", GpusJson(s)},
      {"who", WhoJson(s)},
      {"unattributed",
       {{"gpu_seconds", Round3(static_cast<double>(s.unattributed_ms) / 1e3)},
        {"share_pct", Round3(s.unattributed_share_pct)},
        {"cost_usd", Usd(s, s.unattributed_cost)},
        {"energy_joules", Joules(s.energy.unattributed_mj)}}},
      {"energy", HistoryEnergyJson(s)},
      {"shared_gpus",
       {{"by_utilization_gpu_seconds", Round3(static_cast<double>(s.shared_by_util_ms) / 1e3)},
        {"evenly_gpu_seconds", Round3(static_cast<double>(s.shared_evenly_ms) / 1e3)}}},
      {"idle_held_sessions",
       {{"min_idle_held_seconds", Round3(static_cast<double>(s.idle_held_min_ms) / 1e3)},
        {"available", s.sessions_known},
        {"habits", HabitsJson(s)},
        {"sessions", ActionsJson(s)}}},
      {"heatmap_util_pct", HeatmapJson(s)},
      {"findings", FindingsJson(s.findings)},
      {"savings", SavingsJson(s.savings)},
      {"notes", s.notes}};
}

}  // namespace

json HistoryReportJson(const HistorySummary& s) {
  json out = HistoryReportJsonCore(s);
  out["policy_actions"] = PolicyActionsJson(s);
  if (!s.budgets_file.empty()) out["budgets"] = BudgetsJson(s);  // only with --budgets
  if (s.plan.computed) out["plan"] = PlanJson(s.plan);           // only with --plan
  return out;
}

}  // namespace cgov
