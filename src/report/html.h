// The building blocks of the HTML report: escaping, the page shell (inline CSS, a strict
// Content-Security-Policy: the page can load nothing), and the charts, drawn as inline SVG by
// cgov itself. Every chart carries a text alternative (<title>/<desc>) and patterns as well as
// colours, so colour is never the only carrier of meaning. Pure string builders.
#ifndef CGOV_REPORT_HTML_H_
#define CGOV_REPORT_HTML_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "analysis/phases.h"
#include "analysis/savings.h"
#include "analysis/series.h"

namespace cgov::html {

// Text for an element or a quoted attribute value: & < > " ' escaped, control characters
// (terminal escapes included) replaced by U+FFFD.
std::string Esc(std::string_view text);

// `title`: the document title. The page ends with PageEnd().
std::string PageStart(std::string_view title);
// The page's Content-Security-Policy: nothing but its own style and script, by their SHA-256.
const std::string& ContentSecurityPolicy();
std::string PageEnd();

// A number the test suite checks against the JSON report: the text `shown` inside an element
// naming the value's JSON pointer (`pointer`, e.g. "/cost/total_usd"); `scale`: what the JSON
// value is multiplied by to give the shown number (100 for a fraction shown as a percentage).
std::string Num(std::string_view shown, std::string_view pointer, double scale = 1);

// The five phases as one horizontal bar (a pattern per phase) with its legend; `costs`: each
// phase's dollars as shown ("" when unpriced). One per page (it defines the phase patterns).
std::string PhaseBarSvg(const std::array<double, kPhaseCount>& share_pct,
                        const std::array<std::string, kPhaseCount>& costs);

// One GPU's utilization and memory (both 0..100 %) over time as a small chart: each series a
// min-max band with its mean as a line, so a spike inside a bucket still shows. [t0, t1): the
// time axis in the series' unit, labelled `from` and `to`.
struct ChartSeries {
  std::string name;   // "util", "mem": the class that styles it
  std::string label;  // "utilization %"
  const MinMaxSeries* series = nullptr;
};
// `id`: unique within the page (the title and description are referenced by it).
std::string SeriesChartSvg(std::string_view id, std::string_view title,
                           const std::vector<ChartSeries>& series, int64_t t0, int64_t t1,
                           std::string_view from, std::string_view to);

// Mean utilization by weekday (rows, Monday first) and hour (columns), with a legend.
std::string HeatmapSvg(const std::array<std::array<std::optional<double>, 24>, 7>& util_pct,
                       std::string_view tz_name);

// A finding's observed value against its threshold on a small horizontal scale.
std::string GaugeSvg(double observed, double threshold, std::string_view unit);

// A table; `numeric[c]`: right-aligned, sorted as a number (cells may carry a data-sort value
// in `sort_keys`); `sortable`: header buttons that sort the rows (keyboard-reachable).
struct Table {
  std::string caption;
  std::vector<std::string> headers;  // escaped by Render
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;       // cells are HTML (already escaped)
  std::vector<std::vector<std::string>> sort_keys;  // optional, per cell; "" = the cell's text
  bool sortable = false;
  std::string Render() const;
};

// A table declared once (run_gpu_table.h, history_gpu_table.h, history_who_table.h,
// showback_table.h, phase_table.h, idle_tables.h, metric_table.h, the budgets', the policy's,
// the baseline's) into `t`: its columns' headers, and for each of its `rows` the cells
// (`cell(column, row)`), each figure tied to the JSON value it shows (`pointer(column, row,
// &scale)`: "" for none; a "—" is tied to nothing). A Column has `header` and Numeric().
template <typename Column, typename CellOf, typename PointerOf>
void FillDeclaredTable(const std::vector<Column>& columns, size_t rows, const CellOf& cell,
                       const PointerOf& pointer, Table* t) {
  for (const Column& c : columns) {
    t->headers.push_back(c.header);
    t->numeric.push_back(c.Numeric());
  }
  for (size_t i = 0; i < rows; ++i) {
    std::vector<std::string>& row = t->rows.emplace_back();
    for (const Column& c : columns) {
      const std::string text = cell(c, i);
      double scale = 1;
      const std::string at = pointer(c, i, &scale);
      row.push_back(at.empty() || text == "—" ? Esc(text) : Num(text, at, scale));
    }
  }
}

// The findings as an ordered list, each with its gauge, and the savings arithmetic step by step;
// numbers point into the JSON's "/findings" and "/savings".
std::string FindingsHtml(const std::vector<Finding>& findings, const SavingsBlock& savings,
                         bool has_data);

}  // namespace cgov::html

#endif  // CGOV_REPORT_HTML_H_
