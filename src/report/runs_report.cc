#include "report/runs_report.h"

#include <cmath>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/json_writer.h"
#include "core/money.h"

namespace cgov {
namespace {

using nlohmann::json;

std::string CentsText(int64_t cents) {
  return FormatUsd(static_cast<MicroUsd>(cents) * kMicroPerCent);
}
double CentsNumber(int64_t cents) { return static_cast<double>(cents) / 100.0; }

std::string PerUnit(const RunGroupRow& r) {
  if (!r.cost_per_unit_usd) return "—";
  const std::string unit =
      r.unit.size() > 1 && r.unit.back() == 's' ? r.unit.substr(0, r.unit.size() - 1) : r.unit;
  return FormatUnitCost(*r.cost_per_unit_usd) + " " + unit;
}

json RowJson(const RunGroupRow& r) {
  return {{"key", r.key},
          {"runs", r.runs},
          {"failed_runs", r.failed_runs},
          {"unpriced_runs", r.unpriced_runs},
          {"gpu_hours", RoundTo(r.gpu_hours, 6)},
          {"effective_gpu_hours", RoundTo(r.effective_gpu_hours, 6)},
          {"waste_pct", RoundTo(r.WastePct(), 3)},
          {"usd", CentsNumber(r.cents)},
          {"waste_usd", CentsNumber(r.waste_cents)},
          {"work", r.work ? json(*r.work) : json(nullptr)},
          {"unit", r.work ? json(r.unit) : json(nullptr)},
          {"cost_per_unit_usd", r.cost_per_unit_usd ? json(*r.cost_per_unit_usd) : json(nullptr)}};
}

// The runs table, declared once for text, Markdown and CSV (issue 59, item 3): the text once
// showed wasted dollars the CSV left out and the CSV work the text did not. Each column says
// which formats show it; the CSV keeps its columns' order from before (waste_usd added last).
struct RunsColumn {
  enum class Kind {
    kKey,
    kRuns,
    kFailed,
    kGpuHours,
    kWaste,
    kUsd,
    kPerUnit,
    kWork,
    kUnit,
    kCostPerUnit,
    kWasteUsd
  };
  std::string header;  // the text's ("" for none)
  std::string csv;     // the CSV's ("" for none)
  Kind kind;
  bool RightAligned() const { return kind != Kind::kKey; }
};

std::vector<RunsColumn> RunsColumns(const std::string& by) {
  using K = RunsColumn::Kind;
  return {{by, by, K::kKey},
          {"Runs", "runs", K::kRuns},
          {"Failed", "failed_runs", K::kFailed},
          {"GPU-hours", "gpu_hours", K::kGpuHours},
          {"Waste %", "waste_pct", K::kWaste},
          {"USD", "usd", K::kUsd},
          {"Per unit", "", K::kPerUnit},
          {"", "work", K::kWork},
          {"", "unit", K::kUnit},
          {"", "cost_per_unit_usd", K::kCostPerUnit},
          {"Wasted USD", "waste_usd", K::kWasteUsd}};
}

// A cell; `csv`: its CSV form (unrounded figures, no currency sign).
std::string RunsCell(const RunsColumn& c, const RunGroupRow& r, bool csv) {
  using K = RunsColumn::Kind;
  switch (c.kind) {
    case K::kKey:
      return csv ? CsvField(r.key) : r.key;
    case K::kRuns:
      return fmt::format("{}", r.runs);
    case K::kFailed:
      return fmt::format("{}", r.failed_runs);
    case K::kGpuHours:
      return csv ? fmt::format("{:.6f}", r.gpu_hours) : fmt::format("{:.2f}", r.gpu_hours);
    case K::kWaste:
      return csv ? fmt::format("{:.3f}", r.WastePct()) : fmt::format("{:.1f}", r.WastePct());
    case K::kUsd:
      return csv ? FormatCentsPlain(r.cents) : CentsText(r.cents);
    case K::kPerUnit:
      return PerUnit(r);
    case K::kWork:
      return r.work ? fmt::format("{:g}", *r.work) : "";
    case K::kUnit:
      return r.work ? CsvField(r.unit) : "";
    case K::kCostPerUnit:
      return r.cost_per_unit_usd ? fmt::format("{:.9g}", *r.cost_per_unit_usd) : "";
    case K::kWasteUsd:
      return csv ? FormatCentsPlain(r.waste_cents) : CentsText(r.waste_cents);
  }
  return "";
}

}  // namespace

std::string RunsReportText(const RunShowback& s, const TextStyle& st) {
  std::string out = st.markdown ? fmt::format("# Runs by {}\n", s.by)
                                : Strong(fmt::format("Runs by {}", s.by), st) + "\n";
  out += fmt::format("{} runs · {:.2f} GPU-hours · {} (estimates, as each run priced itself)\n",
                     s.total.runs, s.total.gpu_hours, CentsText(s.total.cents));
  std::vector<RunsColumn> columns = RunsColumns(s.by);
  std::erase_if(columns, [](const RunsColumn& c) { return c.header.empty(); });
  std::vector<const RunGroupRow*> rows;
  for (const RunGroupRow& r : s.rows) rows.push_back(&r);
  rows.push_back(&s.total);
  auto cell = [](const RunsColumn& c, const RunGroupRow* r) { return RunsCell(c, *r, false); };
  out += TextHeading("Cost by " + s.by, st) + DeclaredTextTable(columns, rows, cell, st.markdown);
  if (s.total.unpriced_runs > 0) {
    out += fmt::format("\n{} run(s) had no price: their GPU-hours count, their dollars do not.\n",
                       s.total.unpriced_runs);
  }
  if (!s.findings.empty()) {
    out += TextHeading("Findings across runs", st);
    int n = 0;
    for (const RecurringFinding& f : s.findings) {
      if (++n > 10) break;
      out += fmt::format("{}. {} {} ({}) — in {} of {} runs\n", n, SeverityTag(f.severity, st),
                         f.title, f.id, f.runs, s.total.runs);
    }
  }
  return out;
}

json RunsReportJson(const RunShowback& s) {
  json rows = json::array();
  for (const RunGroupRow& r : s.rows) rows.push_back(RowJson(r));
  json findings = json::array();
  for (const RecurringFinding& f : s.findings) {
    findings.push_back({{"id", f.id},
                        {"severity", SeverityName(f.severity)},
                        {"title", f.title},
                        {"runs", f.runs}});
  }
  return {{"schema", "cgov.runs-report"}, {"schema_version", 1}, {"by", s.by}, {"rows", rows},
          {"total", RowJson(s.total)},    {"findings", findings}};
}

std::string RunsReportCsv(const RunShowback& s) {
  std::vector<RunsColumn> columns = RunsColumns(s.by);
  std::erase_if(columns, [](const RunsColumn& c) { return c.csv.empty(); });
  std::string out = "kind";
  for (const RunsColumn& c : columns) out += "," + CsvField(c.csv);
  out += "\n";
  auto line = [&](std::string_view kind, const RunGroupRow& r) {
    out += kind;
    for (const RunsColumn& c : columns) out += "," + RunsCell(c, r, true);
    out += "\n";
  };
  for (const RunGroupRow& r : s.rows) line("group", r);
  RunGroupRow total = s.total;
  total.key = "";
  line("total", total);
  return out;
}

}  // namespace cgov
