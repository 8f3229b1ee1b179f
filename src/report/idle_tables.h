// The history report's idle GPU-hours by day and by host, each declared once (issue 59, item 3)
// for text, Markdown and HTML: the same headers, decimals and "—" for an unpriced cost (the text
// once wrote "-"). The text adds a bar to each day (not a figure: no other format shows it).
// Each figure's cell says which value of the report's JSON it shows.
#ifndef CGOV_REPORT_IDLE_TABLES_H_
#define CGOV_REPORT_IDLE_TABLES_H_

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/history_summary.h"

namespace cgov {

struct IdleColumn {
  enum class Kind { kDay, kHost, kGpus, kHours, kCost, kBar };
  std::string header;
  Kind kind;
  bool Numeric() const {
    return kind == Kind::kGpus || kind == Kind::kHours || kind == Kind::kCost;
  }
  bool RightAligned() const { return Numeric(); }
};

// Shown where the window spans two UTC days or more (idle_by_day) and where a fleet has two
// hosts or more (idle_by_host).
bool ShowsIdleByDay(const HistorySummary& s);
bool ShowsIdleByHost(const HistorySummary& s);

// The day table's columns; `bars`: with the text's bar (plain text only).
std::vector<IdleColumn> IdleByDayColumns(bool bars);
std::vector<IdleColumn> IdleByHostColumns();

// Row `i` of idle_by_day or idle_by_host (whichever the column's table is).
std::string IdleByDayCellText(const HistorySummary& s, const IdleColumn& c, size_t i);
std::string IdleByHostCellText(const HistorySummary& s, const IdleColumn& c, size_t i);
// The JSON value a figure's cell shows ("" for none), and *scale: JSON to cell.
std::string IdleByDayCellPointer(const IdleColumn& c, size_t i, double* scale);
std::string IdleByHostCellPointer(const IdleColumn& c, size_t i, double* scale);

}  // namespace cgov

#endif  // CGOV_REPORT_IDLE_TABLES_H_
