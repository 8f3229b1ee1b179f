// The showback table, declared once (issue 59, item 3): the text, Markdown, HTML and CSV reports
// render these columns and rows alike. Each format once chose its own rows and words (the text
// hid an unmatched row the HTML showed, "total billed" beside "total (billed)", a share "—" in
// one and 0.0 in the other). A row is a holder (`showback.rows[i]`), the idle capacity, the bill
// lines no host matched (only with a bill), or the total; each cell says which value of the
// report's JSON it shows, and its CSV form keeps the full precision.
#ifndef CGOV_REPORT_SHOWBACK_TABLE_H_
#define CGOV_REPORT_SHOWBACK_TABLE_H_

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/history_summary.h"

namespace cgov {

struct ShowbackColumn {
  enum class Kind { kKey, kGpuHours, kShare, kUsd };
  std::string header;  // as text, Markdown and HTML show it
  std::string csv;     // the CSV header's name
  Kind kind;
  bool Numeric() const { return kind != Kind::kKey; }
  bool RightAligned() const { return Numeric(); }
};

std::vector<ShowbackColumn> ShowbackColumns(const HistorySummary& s);

struct ShowbackTableRow {
  enum class Kind { kHolder, kIdle, kUnmatched, kTotal };
  Kind kind;
  size_t index = 0;  // kHolder: of showback.rows
};
// The holders, the idle capacity, the unmatched bill lines where a bill was given, the total.
std::vector<ShowbackTableRow> ShowbackTableRows(const HistorySummary& s);

// The table's title: an estimate or the bill's source.
std::string ShowbackTitle(const HistorySummary& s);
// A cell as text, Markdown and HTML show it ("—" where it does not apply).
std::string ShowbackCellText(const HistorySummary& s, const ShowbackColumn& c,
                             const ShowbackTableRow& r);
// The JSON value a figure's cell shows ("" for none), and *scale: JSON to cell.
std::string ShowbackCellPointer(const ShowbackColumn& c, const ShowbackTableRow& r, double* scale);
// The table as CSV: a `kind` column (row, idle, unmatched, total_billed or total_estimate), then
// each column's csv name; figures unrounded beyond the JSON's (hours to 6 places, shares to 3,
// dollars to the cent, no currency sign or separator), keys quoted where they need it.
std::string ShowbackCsv(const HistorySummary& s);

}  // namespace cgov

#endif  // CGOV_REPORT_SHOWBACK_TABLE_H_
