// The showback table declared once: on generated showbacks (seeded; the seed is printed), the
// text, Markdown, HTML and CSV reports list the same rows in the same order, every figure the
// HTML ties to the JSON is the JSON's to the digits shown, and the CSV's dollars add up to its
// total.
#include "report/showback_table.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <regex>

#include <gtest/gtest.h>

#include "report/history_report.h"
#include "report/html_report.h"

namespace cgov {
namespace {

// A showback as the analysis leaves it: rows by dollars, the idle and unmatched lines, cents
// that add up to the total, shares of it.
HistorySummary Generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto below = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  HistorySummary s;
  Showback& b = s.showback;
  b.estimate = below(2) == 0;
  b.source = b.estimate ? "estimate: resolved prices" : "aws-cur cur.csv (31 lines)";
  const char* keys[] = {"alice", "bob", "team, \"ml\"", "(unknown)", "carol", "dave"};
  const int64_t n = below(5);
  for (int64_t i = 0; i < n; ++i) {
    b.rows.push_back(
        {.key = keys[i], .cents = below(500'000), .attributed_ms = below(400'000'000)});
  }
  b.idle_cents = below(300'000);
  b.idle_ms = below(400'000'000);
  b.unmatched_cents = b.estimate ? 0 : below(50'000);
  b.billed_total_cents = b.idle_cents + b.unmatched_cents;
  for (const ShowbackRow& r : b.rows) b.billed_total_cents += r.cents;
  b.billed_total = b.billed_total_cents * 10'000;
  auto share = [&](int64_t cents) {
    return b.billed_total_cents == 0 ? 0.0 : 100.0 * cents / b.billed_total_cents;
  };
  for (ShowbackRow& r : b.rows) r.share_pct = share(r.cents);
  b.idle_share_pct = share(b.idle_cents);
  b.unmatched_share_pct = share(b.unmatched_cents);
  s.by = below(2) ? HistoryBy::kUser : HistoryBy::kTeam;
  s.usage.gpus.emplace_back().unknown_ms = 3'600'000;  // some GPU time: the reports show tables
  return s;
}

// The value a cell shows: "$1,234.56" -> 1234.56, "12.5" -> 12.5; its last digit's size.
double Shown(std::string text, double* unit) {
  std::erase_if(text, [](char c) { return c == '$' || c == ','; });
  const size_t dot = text.find('.');
  *unit =
      dot == std::string::npos ? 1 : std::pow(10.0, -static_cast<double>(text.size() - dot - 1));
  return std::stod(text);
}

void CheckShowback(uint64_t seed, const HistorySummary& s) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::vector<ShowbackTableRow> rows = ShowbackTableRows(s);
  const std::vector<ShowbackColumn> columns = ShowbackColumns(s);

  // CSV: a line a row, in order, its dollars adding up to the total's.
  const std::string csv = HistoryShowbackCsv(s);
  std::vector<std::string> lines;
  for (size_t at = 0, end; at < csv.size(); at = end + 1) {
    end = csv.find('\n', at);
    lines.push_back(csv.substr(at, end - at));
  }
  ASSERT_EQ(lines.size(), rows.size() + 1) << csv;
  EXPECT_EQ(lines[0], std::string("kind,") + HistoryByName(s.by) + ",gpu_hours,share_pct,usd");
  int64_t parts = 0, total = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const int64_t cents = std::llround(std::stod(lines[i].substr(lines[i].rfind(',') + 1)) * 100);
    (rows[i - 1].kind == ShowbackTableRow::Kind::kTotal ? total : parts) += cents;
  }
  EXPECT_EQ(parts, total) << csv;
  EXPECT_EQ(total, s.showback.billed_total_cents);

  // Text and Markdown: each row's label, in the table's order.
  for (bool md : {false, true}) {
    TextStyle style;
    style.markdown = md;
    const std::string text = HistoryReportText(s, style);
    size_t at = text.find(ShowbackTitle(s));
    ASSERT_NE(at, std::string::npos) << text;
    for (const ShowbackTableRow& r : rows) {
      const std::string label = ShowbackCellText(s, columns[0], r);
      at = text.find(label, at);
      ASSERT_NE(at, std::string::npos) << "md " << md << ": " << label << "\n" << text;
      const std::string usd = ShowbackCellText(s, columns[3], r);
      EXPECT_NE(text.find(usd, at), std::string::npos) << label;
    }
  }

  // HTML: as many rows, and every tied figure the JSON's to the digits shown.
  const nlohmann::json report = HistoryReportJson(s);
  const std::string html = HistoryReportHtml(s);
  const size_t begin = html.find("<section id=\"showback\">");
  if (s.showback.rows.empty() && s.showback.billed_total == 0) {
    EXPECT_EQ(begin, std::string::npos);  // nothing to show back
    return;
  }
  ASSERT_NE(begin, std::string::npos);
  const std::string section = html.substr(begin, html.find("</section>", begin) - begin);
  size_t trs = 0;
  for (size_t at = section.find("<tr"); at != std::string::npos; at = section.find("<tr", at + 1)) {
    ++trs;
  }
  EXPECT_EQ(trs, rows.size() + 1) << section;  // and the header's
  const std::regex tied(
      R"re(<span data-json="([^"]+)"(?: data-scale="([^"]+)")?>([^<]*)</span>)re");
  size_t figures = 0;
  for (auto it = std::sregex_iterator(section.begin(), section.end(), tied);
       it != std::sregex_iterator(); ++it, ++figures) {
    const std::string pointer = (*it)[1];
    ASSERT_TRUE(report.contains(nlohmann::json::json_pointer(pointer))) << pointer;
    const double scale = (*it)[2].matched ? std::stod((*it)[2]) : 1.0;
    double unit = 1;
    const double shown = Shown((*it)[3], &unit);
    const double value = report[nlohmann::json::json_pointer(pointer)].get<double>() * scale;
    EXPECT_LE(std::abs(value - shown), unit / 2 + 1e-9) << pointer << " " << (*it)[3];
  }
  // Each row's dollars, its share where there is a total, and GPU-hours where time belongs to it.
  EXPECT_GE(figures, rows.size() + s.showback.rows.size());
}

TEST(ShowbackTable, EveryFormatShowsTheSameRowsAndTheHtmlTiesThemToTheJson) {
  uint64_t first = 20261130;  // CGOV_SHOWBACK_SEED: another run
  if (const char* seed = std::getenv("CGOV_SHOWBACK_SEED"))
    first = std::strtoull(seed, nullptr, 10);
  constexpr uint64_t kShowbacks = 60;
  std::printf("showback tables: seeds %llu to %llu\n", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + kShowbacks - 1));
  for (uint64_t seed = first; seed < first + kShowbacks; ++seed) {
    CheckShowback(seed, Generate(seed));
    if (HasFailure()) break;  // the first failing showback is the one to read
  }
}

TEST(ShowbackTable, AnEstimateHasNoUnmatchedRowAndABillDoes) {
  HistorySummary s;
  s.showback.rows.push_back({.key = "alice", .cents = 150, .attributed_ms = 3'600'000});
  s.showback.billed_total_cents = 150;
  s.showback.billed_total = 1'500'000;
  s.showback.rows[0].share_pct = 100;
  auto labels = [&] {
    std::vector<std::string> out;
    for (const ShowbackTableRow& r : ShowbackTableRows(s)) {
      out.push_back(ShowbackCellText(s, ShowbackColumns(s)[0], r));
    }
    return out;
  };
  EXPECT_EQ(labels(),
            (std::vector<std::string>{"alice", "idle capacity (unallocated)", "total (estimate)"}));
  s.showback.estimate = false;
  EXPECT_EQ(labels(), (std::vector<std::string>{"alice", "idle capacity (unallocated)",
                                                "unmatched bill lines", "total (billed)"}));
  // No total: no share of it.
  s.showback.billed_total = 0;
  EXPECT_EQ(ShowbackCellText(s, ShowbackColumns(s)[2], ShowbackTableRows(s)[0]), "—");
}

}  // namespace
}  // namespace cgov
