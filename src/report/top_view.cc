#include "report/top_view.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/json_writer.h"
#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

constexpr const char* kTopGlyph[kPhaseCount] = {"·", "░", "▒", "▓", "█"};
// ANSI colours by phase: idle dim, idle-held red (the waste to act on), underutilized yellow,
// productive green, compute-bound cyan.
constexpr const char* kTopColor[kPhaseCount] = {"\x1b[2m", "\x1b[31m", "\x1b[33m", "\x1b[32m",
                                                "\x1b[36m"};
constexpr char kTopReset[] = "\x1b[0m";

std::string PhaseCell(const std::optional<Phase>& p) {
  if (!p) return "? unknown";
  return fmt::format("{} {}", kTopGlyph[static_cast<size_t>(*p)], PhaseLabel(*p));
}

// `line` cut to `width` display columns, "…" where it was cut.
std::string Fit(const std::string& line, size_t width) {
  if (TextWidth(line) <= width) return line;
  std::string out;
  size_t columns = 0;
  for (size_t i = 0; i < line.size();) {
    size_t len = Utf8Length(line, i);
    if (len == 0) len = 1;
    const size_t w = CharWidth(line, i, len);
    if (columns + w + 1 > width) break;  // and a column left for "…"
    out.append(line, i, len);
    columns += w;
    i += len;
  }
  return out + "…";
}

std::string Usd(MicroUsd v) { return FormatUsd(v); }

std::string Mem(const TopGpu& g) {
  if (!g.mem_used_mib) return "-";
  const double used = *g.mem_used_mib / 1024.0;
  if (!g.mem_total_mib) return fmt::format("{:.1f} GiB", used);
  return fmt::format("{:.1f}/{:.0f} GiB", used, *g.mem_total_mib / 1024.0);
}

std::string HolderText(const TopHolder& h) {
  std::string out = h.user.empty() ? "(unknown)" : h.user;
  if (!h.project.empty()) out += " · " + h.project;
  if (!h.where.empty()) out += " · " + h.where;
  if (!h.command.empty()) out += " · " + h.command;
  return out;
}

bool Matches(const std::string& filter, const std::string& user, const std::string& project) {
  return filter.empty() || user.find(filter) != std::string::npos ||
         project.find(filter) != std::string::npos;
}

bool GpuMatches(const TopGpu& g, const std::string& filter) {
  if (filter.empty()) return true;
  for (const TopHolder& h : g.holders) {
    if (Matches(filter, h.user, h.project)) return true;
  }
  return false;
}

// What an idle GPU costs an hour, for sorting by waste (0 when busy or unpriced).
MicroUsd WasteOf(const TopGpu& g) {
  return g.phase && IsIdle(*g.phase) && g.price_per_hour ? *g.price_per_hour : 0;
}

std::string FirstUser(const TopGpu& g) { return g.holders.empty() ? "~" : g.holders[0].user; }

// The box now and today, four lines (five with the power drawn).
void AppendHeader(const TopFrame& f, std::vector<std::string>* out) {
  std::vector<std::string>& lines = *out;
  const std::string at = FormatRfc3339Utc(f.at_ms * 1'000'000).substr(0, 19) + "Z";
  if (f.source == "prometheus") {
    lines.push_back(fmt::format("cgov top — fleet {} · {} node(s) · {} GPU(s) · {}", f.host,
                                f.nodes.size(), f.GpuCount(), at));
  } else {
    lines.push_back(fmt::format("cgov top — {} · {} GPU(s) · {}", f.host.empty() ? "?" : f.host,
                                f.GpuCount(), at));
  }
  if (f.priced) {
    lines.push_back(fmt::format("now    {}/h for the GPUs, {}/h of it idle ({:.0f} %)",
                                Usd(f.cost_per_hour), Usd(f.waste_per_hour), f.idle_share_pct));
  } else {
    lines.push_back("now    (no price: give the daemon --price-per-gpu-hour or --instance-type)");
  }
  if (const std::optional<double> power = f.PowerNowW()) {
    const std::optional<double> idle = f.IdlePowerNowW();
    lines.push_back(fmt::format("power  {:.0f} W drawn now{}", *power,
                                idle ? fmt::format(", {:.0f} W of it by idle GPUs", *idle) : ""));
  }
  lines.push_back(fmt::format("today  {:.2f} idle GPU-hours{} since {}", HoursOf(f.idle_ms_today),
                              f.priced ? ", " + Usd(f.idle_cost_today) + " wasted" : "",
                              FormatMinuteUtc(f.day_start_ms)));
  lines.push_back("");
}

// The lines of a table, each cut to `width`.
void AppendTable(const std::string& table, size_t width, std::vector<std::string>* lines) {
  for (size_t at = 0; at < table.size();) {
    const size_t end = table.find('\n', at);
    lines->push_back(Fit(table.substr(at, end - at), width));
    if (end == std::string::npos) break;
    at = end + 1;
  }
}

// The frame's lines as text, trailing blanks dropped.
std::string JoinLines(std::vector<std::string>& lines) {
  std::string out;
  for (std::string& l : lines) {
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  return out;
}

// "Idle-held now" and its table.
void AppendIdleHeld(const TopFrame& f, const TopLayout& layout, std::vector<std::string>* out) {
  std::vector<std::string>& lines = *out;
  const size_t width = std::max<size_t>(layout.width, 60);
  const TextStyle& style = layout.style;
  lines.push_back("");
  std::vector<const TopIdleHeld*> idle;
  for (const TopIdleHeld& i : f.idle_held) {
    if (Matches(layout.filter, i.user, "")) idle.push_back(&i);
  }
  lines.push_back(Strong(fmt::format("Idle-held now: {}", idle.size()), style));
  if (!idle.empty()) {
    // The policy's column only when some row has a verdict (a daemon with --policy, or
    // cgov top --policy).
    const bool policy = std::any_of(idle.begin(), idle.end(),
                                    [](const TopIdleHeld* i) { return !i->policy.empty(); });
    std::vector<std::vector<std::string>> irows = {{"user", "GPU", "process", "idle for", "today"}};
    if (policy) irows[0].push_back("policy");
    irows[0].push_back("advice");
    for (const TopIdleHeld* i : idle) {
      irows.push_back({i->user.empty() ? "(unknown)" : i->user, std::to_string(i->gpu_index),
                       fmt::format("{} ({})", i->command, i->pid), SpanOf(i->idle_for_ms),
                       f.priced ? Usd(i->idle_held_cost_today) : "-"});
      if (policy) irows.back().push_back(i->policy.empty() ? "-" : i->policy);
      irows.back().push_back(i->advice);
    }
    AppendTable(TextTable(irows, policy ? " r rr  " : " r rr ", false), width, &lines);
  }
}

// A fleet: a row per node, then the users wasting most today.
void AppendFleet(const TopFrame& f, const TopLayout& layout, std::vector<std::string>* lines) {
  const size_t width = std::max<size_t>(layout.width, 60);
  std::vector<const TopNode*> nodes;
  for (const TopNode& n : f.nodes) {
    if (layout.filter.empty() || n.host.find(layout.filter) != std::string::npos) {
      nodes.push_back(&n);
    }
  }
  if (layout.sort == TopLayout::Sort::kWaste) {
    std::stable_sort(nodes.begin(), nodes.end(), [](const TopNode* a, const TopNode* b) {
      return a->waste_per_hour > b->waste_per_hour;
    });
  }
  std::vector<std::vector<std::string>> rows = {
      {"node", "GPUs now", "util", "power", "$/h", "idle $/h", "idle today", "age"}};
  for (const TopNode* n : nodes) {
    std::string glyphs;
    for (const std::optional<Phase>& p : n->phases) {
      glyphs += p ? kTopGlyph[static_cast<size_t>(*p)] : "?";
    }
    rows.push_back({n->host, glyphs,
                    n->mean_util_pct ? fmt::format("{:.0f} %", *n->mean_util_pct) : "-",
                    n->power_w ? fmt::format("{:.0f} W", *n->power_w) : "-",
                    f.priced ? Usd(n->cost_per_hour) : "-", f.priced ? Usd(n->waste_per_hour) : "-",
                    fmt::format("{:.2f} h{}", HoursOf(n->idle_ms_today),
                                f.priced ? " " + Usd(n->idle_cost_today) : ""),
                    n->sample_age_s ? SpanOf(static_cast<int64_t>(*n->sample_age_s * 1000)) : "-"});
  }
  AppendTable(TextTable(rows, "  rrrrrr", false), width, lines);
  lines->push_back(
      fmt::format("   GPUs now: {} truly idle {} idle-held {} underutilized {} productive {} "
                  "compute-bound ? no reading",
                  kTopGlyph[0], kTopGlyph[1], kTopGlyph[2], kTopGlyph[3], kTopGlyph[4]));
  lines->push_back("");
  std::vector<const TopWaster*> wasters;
  for (const TopWaster& w : f.wasters) {
    if (Matches(layout.filter, w.user, "")) wasters.push_back(&w);
  }
  lines->push_back(Strong(fmt::format("Top wasters today: {}", wasters.size()), layout.style));
  if (wasters.empty()) return;
  std::vector<std::vector<std::string>> wrows = {
      {"user", "idle-held now", "on", "today", "$ today"}};
  for (const TopWaster* w : wasters) {
    std::string hosts;
    for (const std::string& h : w->hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    wrows.push_back(
        {w->user.empty() ? "(unknown)" : w->user,
         w->idle_held_gpus_now > 0 ? fmt::format("{:.1f} GPU", w->idle_held_gpus_now) : "-",
         hosts.empty() ? "-" : hosts, fmt::format("{:.2f} h", HoursOf(w->idle_held_ms_today)),
         f.priced ? Usd(w->idle_held_cost_today) : "-"});
  }
  AppendTable(TextTable(wrows, " r rr", false), width, lines);
}

}  // namespace

void TopFrame::SetIdleShare() {
  idle_share_pct = cost_per_hour > 0 ? 100.0 * static_cast<double>(waste_per_hour) /
                                           static_cast<double>(cost_per_hour)
                                     : 0;
}

std::optional<double> TopFrame::PowerNowW() const {
  std::optional<double> sum;
  for (const TopGpu& g : gpus) {
    if (g.power_w) sum = sum.value_or(0) + *g.power_w;
  }
  for (const TopNode& n : nodes) {
    if (n.power_w) sum = sum.value_or(0) + *n.power_w;
  }
  return sum;
}

std::optional<double> TopFrame::IdlePowerNowW() const {
  if (!nodes.empty()) return std::nullopt;
  std::optional<double> sum;
  for (const TopGpu& g : gpus) {
    if (!g.power_w) continue;
    sum = sum.value_or(0) + (g.phase && IsIdle(*g.phase) ? *g.power_w : 0);
  }
  return sum;
}

size_t TopFrame::GpuCount() const {
  size_t n = gpus.size();
  for (const TopNode& node : nodes) n += node.phases.size();
  return n;
}

std::string Sparkline(const std::vector<std::optional<double>>& values) {
  static const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::string out;
  for (const std::optional<double>& v : values) {
    if (!v) {
      out += ' ';
      continue;
    }
    const int level = std::clamp(static_cast<int>(std::floor(*v / 100.0 * 8)), 0, 7);
    out += kBars[level];
  }
  return out;
}

std::string RenderTopText(const TopFrame& f, const TopLayout& layout) {
  const size_t width = std::max<size_t>(layout.width, 60);
  const TextStyle& style = layout.style;
  std::vector<std::string> lines;
  AppendHeader(f, &lines);
  if (f.source == "prometheus") {
    AppendFleet(f, layout, &lines);
    return JoinLines(lines);
  }
  std::vector<const TopGpu*> gpus;
  for (const TopGpu& g : f.gpus) {
    if (GpuMatches(g, layout.filter)) gpus.push_back(&g);
  }
  std::stable_sort(gpus.begin(), gpus.end(), [&](const TopGpu* a, const TopGpu* b) {
    switch (layout.sort) {
      case TopLayout::Sort::kWaste:
        return WasteOf(*a) > WasteOf(*b);
      case TopLayout::Sort::kUser:
        return FirstUser(*a) < FirstUser(*b);
      case TopLayout::Sort::kGpu:
        break;
    }
    return a->index < b->index;
  });
  std::vector<std::vector<std::string>> rows = {
      {"GPU", "phase", "util", "history", "memory", "power", "holders"}};
  // A narrow terminal keeps the last 8 ticks of each sparkline, to leave the holders room.
  const size_t history = width < 100 ? 8 : 20;
  for (const TopGpu* g : gpus) {
    std::string holders = g->holders.empty() ? "-" : HolderText(g->holders[0]);
    const auto& h = g->util_history;
    const std::vector<std::optional<double>> recent(
        h.end() - static_cast<std::ptrdiff_t>(std::min(h.size(), history)), h.end());
    if (g->holders.size() > 1) holders += fmt::format(" (+{})", g->holders.size() - 1);
    rows.push_back({g->label, PhaseCell(g->phase),
                    g->util_pct ? fmt::format("{:.0f} %", *g->util_pct) : "-", Sparkline(recent),
                    Mem(*g), g->power_w ? fmt::format("{:.0f} W", *g->power_w) : "-", holders});
  }
  std::string table = TextTable(rows, "  r  r ", false);
  size_t row = 0;
  for (size_t at = 0; at < table.size();) {
    const size_t end = table.find('\n', at);
    std::string line = Fit(table.substr(at, end - at), width);
    if (style.color && row > 0 && row <= gpus.size() && gpus[row - 1]->phase) {
      const std::string cell = PhaseCell(gpus[row - 1]->phase);
      if (const size_t p = line.find(cell); p != std::string::npos) {
        line.replace(
            p, cell.size(),
            std::string(kTopColor[static_cast<size_t>(*gpus[row - 1]->phase)]) + cell + kTopReset);
      }
    }
    lines.push_back(line);
    if (layout.processes && row > 0 && row <= gpus.size()) {
      for (const TopHolder& h : gpus[row - 1]->holders) {
        lines.push_back(
            Fit(fmt::format(
                    "   └ {:>7} {} {}", h.pid, HolderText(h),
                    h.mem_used_mib ? fmt::format("({:.1f} GiB)", *h.mem_used_mib / 1024.0) : ""),
                width));
      }
    }
    ++row;
    if (end == std::string::npos) break;
    at = end + 1;
  }

  AppendIdleHeld(f, layout, &lines);
  return JoinLines(lines);
}

namespace {

// A dollar figure of `cgov top --format json`: null when the GPUs are not priced.
JsonWriter& PricedUsd(JsonWriter& w, bool priced, MicroUsd v) {
  return priced ? w.Double(UsdNumber(v)) : w.Null();
}

// One GPU of `cgov top --format json`'s gpus[].
void WriteTopGpu(const TopGpu& g, JsonWriter& w) {
  w.BeginObject();
  w.Key("index").Int(g.index).Key("label").String(g.label).Key("name").String(g.name);
  w.Key("phase");
  if (g.phase)
    w.String(PhaseKey(*g.phase));
  else
    w.Null();
  w.Key("util_pct").Opt(g.util_pct).Key("mem_used_mib").Opt(g.mem_used_mib);
  w.Key("mem_total_mib").Opt(g.mem_total_mib).Key("power_w").Opt(g.power_w);
  w.Key("util_history_pct").BeginArray();
  for (const std::optional<double>& u : g.util_history) w.Opt(u);
  w.EndArray();
  w.Key("price_per_hour_usd");
  if (g.price_per_hour)
    w.Double(UsdNumber(*g.price_per_hour, 4));
  else
    w.Null();
  w.Key("holders").BeginArray();
  for (const TopHolder& h : g.holders) {
    w.BeginObject().Key("pid").UInt(h.pid).Key("user").String(h.user);
    w.Key("project").String(h.project).Key("where").String(h.where);
    w.Key("command").String(h.command).Key("mem_used_mib").Opt(h.mem_used_mib);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// One host of `cgov top --format json`'s nodes[] (a fleet); its dollars null when unpriced.
void WriteTopNode(const TopNode& n, bool priced, JsonWriter& w) {
  w.BeginObject().Key("host").String(n.host).Key("phases").BeginArray();
  for (const std::optional<Phase>& p : n.phases) {
    if (p)
      w.String(PhaseKey(*p));
    else
      w.Null();
  }
  w.EndArray();
  w.Key("mean_util_pct").Opt(n.mean_util_pct).Key("power_w").Opt(n.power_w);
  w.Key("cost_per_hour_usd");
  PricedUsd(w, priced, n.cost_per_hour);
  w.Key("idle_cost_per_hour_usd");
  PricedUsd(w, priced, n.waste_per_hour);
  w.Key("idle_gpu_seconds_today").Double(Round3(static_cast<double>(n.idle_ms_today) / 1e3));
  w.Key("idle_cost_today_usd");
  PricedUsd(w, priced, n.idle_cost_today);
  w.Key("sample_age_seconds").Opt(n.sample_age_s);
  w.EndObject();
}

}  // namespace

std::string RenderTopJson(const TopFrame& f) {
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("schema").String("cgov.top").Key("schema_version").Int(1);
  w.Key("source").String(f.source);
  w.Key("host").String(f.host);
  w.Key("at").String(FormatRfc3339Utc(f.at_ms * 1'000'000));
  w.Key("now").BeginObject();
  w.Key("cost_per_hour_usd");
  PricedUsd(w, f.priced, f.cost_per_hour);
  w.Key("idle_cost_per_hour_usd");
  PricedUsd(w, f.priced, f.waste_per_hour);
  w.Key("idle_share_pct").Double(Round3(f.idle_share_pct));
  w.Key("power_w").Opt(f.PowerNowW()).Key("idle_power_w").Opt(f.IdlePowerNowW());
  w.EndObject();
  w.Key("today").BeginObject();
  w.Key("since").String(FormatRfc3339Utc(f.day_start_ms * 1'000'000));
  w.Key("idle_gpu_seconds").Double(Round3(static_cast<double>(f.idle_ms_today) / 1e3));
  w.Key("idle_cost_usd");
  PricedUsd(w, f.priced, f.idle_cost_today);
  w.EndObject();
  w.Key("gpus").BeginArray();
  for (const TopGpu& g : f.gpus) WriteTopGpu(g, w);
  w.EndArray();
  w.Key("idle_held_now").BeginArray();
  for (const TopIdleHeld& i : f.idle_held) {
    w.BeginObject().Key("user").String(i.user).Key("gpu_index").Int(i.gpu_index);
    w.Key("pid").UInt(i.pid).Key("command").String(i.command).Key("kind").String(i.kind);
    w.Key("idle_seconds").Double(Round3(static_cast<double>(i.idle_for_ms) / 1e3));
    w.Key("idle_held_cost_today_usd");
    PricedUsd(w, f.priced, i.idle_held_cost_today);
    w.Key("advice").String(i.advice);
    w.Key("policy");
    if (i.policy.empty())
      w.Null();
    else
      w.String(i.policy);
    w.EndObject();
  }
  w.EndArray();
  w.Key("nodes").BeginArray();
  for (const TopNode& n : f.nodes) WriteTopNode(n, f.priced, w);
  w.EndArray();
  w.Key("wasters").BeginArray();
  for (const TopWaster& t : f.wasters) {
    w.BeginObject().Key("user").String(t.user);
    w.Key("idle_held_gpus_now").Double(Round3(t.idle_held_gpus_now));
    w.Key("hosts_now").BeginArray();
    for (const std::string& h : t.hosts) w.String(h);
    w.EndArray();
    w.Key("idle_held_gpu_seconds_today")
        .Double(Round3(static_cast<double>(t.idle_held_ms_today) / 1e3));
    w.Key("idle_held_cost_today_usd");
    PricedUsd(w, f.priced, t.idle_held_cost_today);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  out += '\n';
  return out;
}

}  // namespace cgov
