#include "analysis/run_showback.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace cgov {
namespace {

int64_t Cents(double usd) { return std::llround(usd * 100); }

void Add(const RunDigest& r, RunGroupRow* row) {
  ++row->runs;
  if (r.exit_code.value_or(-1) != 0) ++row->failed_runs;
  row->gpu_hours += r.gpu_hours;
  row->effective_gpu_hours += r.effective_gpu_hours;
  if (r.total_usd) {
    row->cents += Cents(*r.total_usd);
    row->waste_cents += Cents(r.waste_usd.value_or(0));
  } else {
    ++row->unpriced_runs;
  }
}

// Cost per unit over the group: its dollars over its work, when every run did work in one unit
// and was priced.
void FinishUnit(const std::vector<const RunDigest*>& runs, RunGroupRow* row) {
  if (runs.empty()) return;
  const std::string& unit = runs.front()->unit;
  double work = 0;
  for (const RunDigest* r : runs) {
    if (!r->work || r->unit != unit || unit.empty() || !r->total_usd) return;
    work += *r->work;
  }
  row->work = work;
  row->unit = unit;
  if (work > 0) row->cost_per_unit_usd = static_cast<double>(row->cents) / 100.0 / work;
}

}  // namespace

double RunGroupRow::WastePct() const {
  return gpu_hours > 0 ? (1 - effective_gpu_hours / gpu_hours) * 100 : 0;
}

RunShowback AggregateRuns(const std::vector<RunDigest>& runs, const std::string& by) {
  RunShowback out;
  out.by = by;
  out.total.key = "total";
  std::map<std::string, std::vector<const RunDigest*>> groups;
  std::vector<const RunDigest*> all;
  std::map<std::string, RecurringFinding> findings;
  for (const RunDigest& r : runs) {
    auto tag = r.tags.find(by);
    groups[tag == r.tags.end() ? "(untagged)" : tag->second].push_back(&r);
    all.push_back(&r);
    Add(r, &out.total);
    std::map<std::string, bool> seen;  // a finding counts once per run
    for (const FindingDigest& f : r.findings) {
      RecurringFinding& rf = findings[f.id];
      rf.id = f.id;
      if (rf.title.empty() || f.severity > rf.severity) rf.title = f.title;
      rf.severity = std::max(rf.severity, f.severity);
      if (!seen[f.id]) ++rf.runs;
      seen[f.id] = true;
    }
  }
  FinishUnit(all, &out.total);
  for (const auto& [key, members] : groups) {
    RunGroupRow row;
    row.key = key;
    for (const RunDigest* r : members) Add(*r, &row);
    FinishUnit(members, &row);
    out.rows.push_back(std::move(row));
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const RunGroupRow& a, const RunGroupRow& b) {
    if (a.cents != b.cents) return a.cents > b.cents;
    if (a.gpu_hours != b.gpu_hours) return a.gpu_hours > b.gpu_hours;
    return a.key < b.key;
  });
  for (auto& [id, f] : findings) out.findings.push_back(f);
  std::sort(out.findings.begin(), out.findings.end(),
            [](const RecurringFinding& a, const RecurringFinding& b) {
              if (a.runs != b.runs) return a.runs > b.runs;
              if (a.severity != b.severity) return a.severity > b.severity;
              return a.id < b.id;
            });
  return out;
}

}  // namespace cgov
