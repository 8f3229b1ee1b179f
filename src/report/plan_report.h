// The right-size plan (`cgov report --plan`) in every format: its three tables declared once
// (the packing by GPU model, each GPU that stays and what it takes, each workload's fit), each
// column with its header, its cell and the JSON value under /plan it shows; the JSON itself.
#ifndef CGOV_REPORT_PLAN_REPORT_H_
#define CGOV_REPORT_PLAN_REPORT_H_

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "analysis/plan_summary.h"
#include "report/text_style.h"

namespace cgov {

struct PlanColumn {
  std::string header;
  std::string key;  // the row's JSON member it shows; "" for a cell of words
  bool numeric = false;
  bool money = false;  // dollars: "—" when unpriced
  bool Numeric() const { return numeric; }
  bool RightAligned() const { return numeric; }
};

enum class PlanTable { kGroups, kBins, kWorkloads };

// A row of one of the tables: a group, a (group, bin) pair, or a workload, by index.
struct PlanRowRef {
  size_t row = 0;
  size_t bin = 0;  // kBins only
};

std::vector<PlanColumn> PlanColumns(PlanTable table);
std::vector<PlanRowRef> PlanRows(const PlanSummary& plan, PlanTable table);
// A cell as every format reads it ("—" where not known or not priced).
std::string PlanCellText(const PlanSummary& plan, PlanTable table, const PlanColumn& c,
                         const PlanRowRef& r);
// The JSON value a figure's cell shows ("/plan/groups/0/usd"), "" for words.
std::string PlanCellPointer(PlanTable table, const PlanColumn& c, const PlanRowRef& r);

// The section as text or Markdown ("" when the report was not asked for a plan).
std::string PlanText(const PlanSummary& plan, const TextStyle& style);
// The lead sentence every format opens the section with (figures as text).
std::string PlanLead(const PlanSummary& plan);
nlohmann::json PlanJson(const PlanSummary& plan);

}  // namespace cgov

#endif  // CGOV_REPORT_PLAN_REPORT_H_
