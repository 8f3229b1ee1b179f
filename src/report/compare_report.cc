#include "report/compare_report.h"

#include <cmath>

#include <fmt/format.h>

#include "core/json_writer.h"

namespace cgov {
namespace {

using nlohmann::json;

json FindingsJson(const std::vector<FindingDigest>& findings) {
  json out = json::array();
  for (const FindingDigest& f : findings) {
    out.push_back({{"id", f.id}, {"severity", SeverityName(f.severity)}, {"title", f.title}});
  }
  return out;
}

std::string Figure(const RunComparison& c, double v) {
  switch (c.figure) {
    case CompareFigure::kCostPerUnit:
      return FormatUnitCost(v);
    case CompareFigure::kCostPerRun:
      return fmt::format("${:.2f}", v);
    case CompareFigure::kGpuHoursPerRun:
      return fmt::format("{:.4f}", v);
  }
  return "";
}

}  // namespace

json ComparisonJson(const RunComparison& c, const std::vector<std::string>& baseline_paths) {
  json phases = json::object();
  for (size_t p = 0; p < kPhaseCount; ++p) {
    phases[std::string(PhaseKey(static_cast<Phase>(p)))] = {
        {"baseline_pct", RoundTo(c.phase_pct_baseline[p], 3)},
        {"current_pct", RoundTo(c.phase_pct_current[p], 3)},
        {"change_pp", RoundTo(c.phase_change_pp[p], 3)}};
  }
  json values = json::array();
  for (double v : c.baseline_values) values.push_back(RoundTo(v, 9));
  return {{"runs", baseline_paths.size()},
          {"paths", baseline_paths},
          {"figure", c.figure_key},
          {"figure_name", c.figure_name},
          {"baseline_values", values},
          {"baseline", RoundTo(c.baseline, 9)},
          {"current", RoundTo(c.current, 9)},
          {"change_pct", c.change_pct ? json(RoundTo(*c.change_pct, 3)) : json(nullptr)},
          {"spread_pct", c.spread_pct ? json(RoundTo(*c.spread_pct, 3)) : json(nullptr)},
          {"waste_pct",
           {{"baseline", RoundTo(c.waste_pct_baseline, 3)},
            {"current", RoundTo(c.waste_pct_current, 3)},
            {"change_pp", RoundTo(c.waste_change_pp, 3)}}},
          {"phases", phases},
          {"findings_new", FindingsJson(c.findings_new)},
          {"findings_gone", FindingsJson(c.findings_gone)},
          {"gate",
           {{"threshold_pct", c.threshold_pct ? json(*c.threshold_pct) : json(nullptr)},
            {"regressed", c.regressed},
            {"verdict", c.verdict}}},
          {"notes", c.notes}};
}

std::vector<BaselineColumn> BaselineColumns() {
  using K = BaselineColumn::Kind;
  return {{"Figure", K::kName},
          {"Baseline", K::kBaseline},
          {"This run", K::kCurrent},
          {"Change", K::kChange}};
}

std::vector<BaselineRow> BaselineRows() {
  std::vector<BaselineRow> rows = {{BaselineRow::Kind::kFigure}, {BaselineRow::Kind::kWaste}};
  for (size_t p = 0; p < kPhaseCount; ++p) {
    rows.push_back({BaselineRow::Kind::kPhase, static_cast<Phase>(p)});
  }
  return rows;
}

BaselineCell BaselineCellOf(const RunComparison& c, const BaselineColumn& column,
                            const BaselineRow& row) {
  using C = BaselineColumn::Kind;
  auto plain = [](std::string text) { return BaselineCell{std::move(text), "", ""}; };
  auto pct = [](double v, std::string pointer) {
    return BaselineCell{fmt::format("{:.1f}", v), " %", std::move(pointer)};
  };
  auto pp = [](double v, std::string pointer) {
    return BaselineCell{fmt::format("{:+.1f}", v), " pp", std::move(pointer)};
  };
  switch (row.kind) {
    case BaselineRow::Kind::kFigure:
      switch (column.kind) {
        case C::kName:
          return plain(c.figure_name +
                       (c.figure == CompareFigure::kGpuHoursPerRun ? "" : " (USD)"));
        case C::kBaseline:
          return plain(Figure(c, c.baseline));
        case C::kCurrent:
          return plain(Figure(c, c.current));
        case C::kChange:
          if (!c.change_pct) return plain("—");
          return {fmt::format("{:+.1f}", *c.change_pct), " %", "/baseline/change_pct"};
      }
      break;
    case BaselineRow::Kind::kWaste:
      switch (column.kind) {
        case C::kName:
          return plain("capacity unused");
        case C::kBaseline:
          return pct(c.waste_pct_baseline, "/baseline/waste_pct/baseline");
        case C::kCurrent:
          return pct(c.waste_pct_current, "/baseline/waste_pct/current");
        case C::kChange:
          return pp(c.waste_change_pp, "/baseline/waste_pct/change_pp");
      }
      break;
    case BaselineRow::Kind::kPhase: {
      const size_t p = static_cast<size_t>(row.phase);
      const std::string at = fmt::format("/baseline/phases/{}/", PhaseKey(row.phase));
      switch (column.kind) {
        case C::kName:
          return plain(std::string(PhaseLabel(row.phase)));
        case C::kBaseline:
          return pct(c.phase_pct_baseline[p], at + "baseline_pct");
        case C::kCurrent:
          return pct(c.phase_pct_current[p], at + "current_pct");
        case C::kChange:
          return pp(c.phase_change_pp[p], at + "change_pp");
      }
      break;
    }
  }
  return plain("");
}

std::string ComparisonText(const RunComparison& c, const std::vector<std::string>& paths,
                           const TextStyle& st) {
  std::string from;
  for (const std::string& p : paths) from += (from.empty() ? "" : ", ") + p;
  std::string out = TextHeading(fmt::format("Against the baseline ({} run{}: {})", paths.size(),
                                            paths.size() == 1 ? "" : "s", from),
                                st, 3);
  auto cell = [&](const BaselineColumn& column, const BaselineRow& row) {
    const BaselineCell shown = BaselineCellOf(c, column, row);
    return shown.figure + shown.unit;
  };
  out += DeclaredTextTable(BaselineColumns(), BaselineRows(), cell, st.markdown);
  if (c.spread_pct) {
    out += fmt::format("\nBaseline: the median of {} runs; their spread is {:.1f} % of it.\n",
                       c.baseline_values.size(), *c.spread_pct);
  }
  auto list = [&](const std::vector<FindingDigest>& findings) {
    std::string s;
    for (const FindingDigest& f : findings) {
      s += fmt::format("{}{} {} ({})", s.empty() ? "" : "; ", SeverityTag(f.severity, st), f.title,
                       f.id);
    }
    return s;
  };
  if (!c.findings_new.empty()) out += "New findings: " + list(c.findings_new) + "\n";
  if (!c.findings_gone.empty()) out += "Gone: " + list(c.findings_gone) + "\n";
  if (c.threshold_pct) {
    out += (c.regressed ? Strong("Gate: " + c.verdict, st) : "Gate: " + c.verdict) + "\n";
  }
  for (const std::string& n : c.notes) out += "Note: " + n + "\n";
  return out;
}

}  // namespace cgov
