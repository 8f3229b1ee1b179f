// What the terminal and Markdown reports share: aligned tables, headings and emphasis, written as
// Markdown for report.md and `--format md`, or as plain text for a terminal (`--format text`):
// no Markdown syntax there, and ANSI colour only when the caller says the terminal wants it.
#ifndef CGOV_REPORT_TEXT_STYLE_H_
#define CGOV_REPORT_TEXT_STYLE_H_

#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"

namespace cgov {

struct TextStyle {
  bool markdown = false;
  bool color = false;  // plain text only: ANSI bold and colour (see TerminalWantsColor)
};

inline constexpr TextStyle kMarkdown{true, false};
inline constexpr TextStyle kPlainText{false, false};

// Rows of cells (the first row the header) as a Markdown table or as aligned text columns;
// `right`: 'r' for each right-aligned column.
std::string TextTable(const std::vector<std::vector<std::string>>& rows, std::string_view right,
                      bool markdown);

// A section heading: "\n## Title\n\n" (level 2; level 3 "###") or "\n■ Title\n\n" in text.
// Energy (mJ) in kWh as every view shows it: 0, three decimals under 1 kWh, one under 100, none
// above.
std::string FormatKwh(int64_t mj);
// Energy (mJ) for a sentence, in the unit that reads best: kWh from 1 kWh (as FormatKwh), Wh
// (one decimal) from 1 Wh, else whole J.
std::string FormatEnergy(int64_t mj);
// The idle-held phase reconciled with the findings, in the words every report uses (text,
// Markdown and HTML, run and history): `total` = `bursts` of short pauses on bursty GPUs (the
// input-pipeline finding's) + `steady` on the other GPUs (the idle-held finding's). The figures
// come formatted (with their unit; in HTML tied to the JSON), the sentence without its end.
std::string IdleHeldReconciledSentence(std::string_view total, std::string_view bursts,
                                       std::string_view steady);
// The energy's CO2e and its cost as every text report says them, each only where
// --grid-intensity or --energy-price gave one (none is assumed: "" otherwise).
std::string Co2eLine(const EnergyBlock& e);
std::string ElectricityLine(const EnergyBlock& e);

// A table declared once (issue 59: run_gpu_table.h, history_gpu_table.h, history_who_table.h)
// as text or Markdown: each column's header and alignment (its RightAligned()), and for each row
// the cells `cell(column, row)` gives.
template <typename Column, typename Row, typename CellOf>
std::string DeclaredTextTable(const std::vector<Column>& columns, const std::vector<Row>& rows,
                              const CellOf& cell, bool markdown) {
  std::vector<std::vector<std::string>> cells(1);
  std::string align;
  for (const Column& c : columns) {
    cells[0].push_back(c.header);
    align += c.RightAligned() ? 'r' : 'l';
  }
  for (const Row& r : rows) {
    std::vector<std::string>& line = cells.emplace_back();
    for (const Column& c : columns) line.push_back(cell(c, r));
  }
  return TextTable(cells, align, markdown);
}

std::string TextHeading(std::string_view title, const TextStyle& style, int level = 2);

// Emphasis: **text** in Markdown, bold on a colour terminal, the text itself otherwise.
std::string Strong(std::string_view text, const TextStyle& style);

// "[critical]" coloured by severity on a colour terminal (red, yellow, dim).
std::string SeverityTag(Severity severity, const TextStyle& style);

// Display width in code points (close enough for the glyphs cgov prints).
size_t TextWidth(std::string_view s);

}  // namespace cgov

#endif  // CGOV_REPORT_TEXT_STYLE_H_
