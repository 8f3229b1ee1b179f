#include "report/showback_table.h"

#include <fmt/format.h>

#include "core/csv.h"
#include "core/money.h"

namespace cgov {
namespace {

double HoursOfMs(int64_t ms) { return static_cast<double>(ms) / 3'600'000.0; }

// What a row shows, whichever the format.
struct RowFigures {
  std::string kind;  // the CSV's
  std::string label, csv_key;
  std::optional<int64_t> ms;  // nullopt: no GPU time belongs to the row
  double share_pct = 0;
  int64_t cents = 0;
};

RowFigures FiguresOf(const Showback& b, const ShowbackTableRow& r) {
  using K = ShowbackTableRow::Kind;
  switch (r.kind) {
    case K::kHolder: {
      const ShowbackRow& row = b.rows[r.index];
      return {"row", row.key, row.key, row.attributed_ms, row.share_pct, row.cents};
    }
    case K::kIdle:
      return {"idle",           "idle capacity (" + b.policy.Name() + ")",
              b.policy.Name(),  b.idle_ms,
              b.idle_share_pct, b.idle_cents};
    case K::kUnmatched:
      return {"unmatched",  "unmatched bill lines", "",
              std::nullopt, b.unmatched_share_pct,  b.unmatched_cents};
    case K::kTotal:
      return {b.estimate ? "total_estimate" : "total_billed",
              b.estimate ? "total (estimate)" : "total (billed)",
              b.source,
              std::nullopt,
              b.billed_total != 0 ? 100.0 : 0.0,
              b.billed_total_cents};
  }
  return {};
}

}  // namespace

std::vector<ShowbackColumn> ShowbackColumns(const HistorySummary& s) {
  using K = ShowbackColumn::Kind;
  const std::string by = HistoryByName(s.by);
  return {{by, by, K::kKey},
          {"GPU-h", "gpu_hours", K::kGpuHours},
          {"Share %", "share_pct", K::kShare},
          {"USD", "usd", K::kUsd}};
}

std::vector<ShowbackTableRow> ShowbackTableRows(const HistorySummary& s) {
  using K = ShowbackTableRow::Kind;
  std::vector<ShowbackTableRow> out;
  for (size_t i = 0; i < s.showback.rows.size(); ++i) out.push_back({K::kHolder, i});
  out.push_back({K::kIdle});
  if (!s.showback.estimate) out.push_back({K::kUnmatched});  // an estimate has no bill lines
  out.push_back({K::kTotal});
  return out;
}

std::string ShowbackTitle(const HistorySummary& s) {
  return s.showback.estimate
             ? "Showback (estimate from the prices above; bring the invoice with --billing FILE)"
             : "Showback (from the bill: " + s.showback.source + ")";
}

std::string ShowbackCellText(const HistorySummary& s, const ShowbackColumn& c,
                             const ShowbackTableRow& r) {
  const RowFigures f = FiguresOf(s.showback, r);
  switch (c.kind) {
    case ShowbackColumn::Kind::kKey:
      return f.label;
    case ShowbackColumn::Kind::kGpuHours:
      return f.ms ? fmt::format("{:.2f}", HoursOfMs(*f.ms)) : "—";
    case ShowbackColumn::Kind::kShare:  // no share of nothing
      return s.showback.billed_total != 0 ? fmt::format("{:.1f}", f.share_pct) : "—";
    case ShowbackColumn::Kind::kUsd:
      return FormatUsd(static_cast<MicroUsd>(f.cents) * kMicroPerCent);
  }
  return "";
}

std::string ShowbackCellPointer(const ShowbackColumn& c, const ShowbackTableRow& r, double* scale) {
  using K = ShowbackTableRow::Kind;
  *scale = 1;
  std::string prefix;  // of the row's members in the JSON
  switch (r.kind) {
    case K::kHolder:
      prefix = fmt::format("/showback/rows/{}/", r.index);
      break;
    case K::kIdle:
      prefix = "/showback/idle_";
      break;
    case K::kUnmatched:
      prefix = "/showback/unmatched_";
      break;
    case K::kTotal:
      prefix = "/showback/billed_total_";
      break;
  }
  switch (c.kind) {
    case ShowbackColumn::Kind::kKey:
      return "";
    case ShowbackColumn::Kind::kGpuHours:
      return r.kind == K::kHolder || r.kind == K::kIdle ? prefix + "gpu_hours" : "";
    case ShowbackColumn::Kind::kShare:
      return r.kind == K::kTotal ? "" : prefix + "share_pct";
    case ShowbackColumn::Kind::kUsd:
      return prefix + "usd";
  }
  return "";
}

std::string ShowbackCsv(const HistorySummary& s) {
  const std::vector<ShowbackColumn> columns = ShowbackColumns(s);
  std::string out = "kind";
  for (const ShowbackColumn& c : columns) out += "," + CsvField(c.csv);
  out += "\n";
  for (const ShowbackTableRow& r : ShowbackTableRows(s)) {
    const RowFigures f = FiguresOf(s.showback, r);
    out += f.kind;
    for (const ShowbackColumn& c : columns) {
      out += ",";
      switch (c.kind) {
        case ShowbackColumn::Kind::kKey:
          out += CsvField(f.csv_key);
          break;
        case ShowbackColumn::Kind::kGpuHours:
          out += fmt::format("{:.6f}", HoursOfMs(f.ms.value_or(0)));
          break;
        case ShowbackColumn::Kind::kShare:
          out += fmt::format("{:.3f}", f.share_pct);
          break;
        case ShowbackColumn::Kind::kUsd:
          out += FormatCentsPlain(f.cents);
          break;
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace cgov
