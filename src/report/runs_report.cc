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

}  // namespace

std::string RunsReportText(const RunShowback& s, const TextStyle& st) {
  std::string out = st.markdown ? fmt::format("# Runs by {}\n", s.by)
                                : Strong(fmt::format("Runs by {}", s.by), st) + "\n";
  out += fmt::format("{} runs · {:.2f} GPU-hours · {} (estimates, as each run priced itself)\n",
                     s.total.runs, s.total.gpu_hours, CentsText(s.total.cents));
  std::vector<std::vector<std::string>> rows = {
      {s.by, "Runs", "Failed", "GPU-hours", "Waste", "USD", "Wasted USD", "Per unit"}};
  auto row = [&](const RunGroupRow& r) {
    rows.push_back({r.key, fmt::format("{}", r.runs), fmt::format("{}", r.failed_runs),
                    fmt::format("{:.2f}", r.gpu_hours), fmt::format("{:.1f} %", r.WastePct()),
                    CentsText(r.cents), CentsText(r.waste_cents), PerUnit(r)});
  };
  for (const RunGroupRow& r : s.rows) row(r);
  row(s.total);
  out += TextHeading("Cost by " + s.by, st) + TextTable(rows, "lrrrrrrr", st.markdown);
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
  std::string out =
      fmt::format("kind,{},runs,failed_runs,gpu_hours,waste_pct,usd,work,unit,cost_per_unit_usd\n",
                  CsvField(s.by));
  auto line = [&](std::string_view kind, const RunGroupRow& r) {
    const int64_t a = r.cents < 0 ? -r.cents : r.cents;
    out += fmt::format("{},{},{},{},{:.6f},{:.3f},{}{}.{:02},{},{},{}\n", kind, CsvField(r.key),
                       r.runs, r.failed_runs, r.gpu_hours, r.WastePct(), r.cents < 0 ? "-" : "",
                       a / 100, a % 100, r.work ? fmt::format("{:g}", *r.work) : "",
                       r.work ? CsvField(r.unit) : "",
                       r.cost_per_unit_usd ? fmt::format("{:.9g}", *r.cost_per_unit_usd) : "");
  };
  for (const RunGroupRow& r : s.rows) line("group", r);
  RunGroupRow total = s.total;
  total.key = "";
  line("total", total);
  return out;
}

}  // namespace cgov
