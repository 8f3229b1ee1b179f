// The history report's Who table, declared once (issue 59, item 3): the text, Markdown and HTML
// reports render these columns and rows alike (the HTML once showed energy columns the text left
// out, and the text named the users behind a project where the HTML did not). A row is a holder
// (`who[i]`) or the GPU-time no compute process held (`unattributed`); each cell says which value
// of the report's JSON it shows and the scale from it (seconds shown as hours, joules as kWh).
#ifndef CGOV_REPORT_HISTORY_WHO_TABLE_H_
#define CGOV_REPORT_HISTORY_WHO_TABLE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/history_summary.h"

namespace cgov {

struct HistoryWhoColumn {
  enum class Kind {
    kKey,
    kHeld,
    kIdleHeld,
    kShare,
    kCost,
    kIdleHeldCost,
    kEnergy,
    kIdleHeldEnergy,
    kCo2e,
    kEnergyCost
  };
  std::string header;
  Kind kind;
  bool Numeric() const { return kind != Kind::kKey; }
  bool RightAligned() const { return Numeric(); }
};

// The columns of this report: energy where a GPU reported power, CO2e with --grid-intensity,
// the energy's cost with --energy-price.
std::vector<HistoryWhoColumn> HistoryWhoColumns(const HistorySummary& s);

// A row: holder `who` (index `index` of `who[]`), or the unattributed row (no holder).
struct HistoryWhoRow {
  const WhoRow* who = nullptr;
  size_t index = 0;
};
// The holders, then the unattributed row where some GPU-time had no compute process.
std::vector<HistoryWhoRow> HistoryWhoRows(const HistorySummary& s);

// A cell as every format reads it ("—" where it does not apply or is not priced).
std::string HistoryWhoCellText(const HistorySummary& s, const HistoryWhoColumn& c,
                               const HistoryWhoRow& r);
// The JSON value a figure's cell shows ("" for none), and *scale: JSON to cell.
std::string HistoryWhoCellPointer(const HistoryWhoColumn& c, const HistoryWhoRow& r, double* scale);

}  // namespace cgov

#endif  // CGOV_REPORT_HISTORY_WHO_TABLE_H_
