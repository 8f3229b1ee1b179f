// The history report's tables declared once (showback_table.h, phase_table.h, idle_tables.h):
// on generated summaries (seeded; the seed is printed), the text, Markdown, HTML and CSV reports
// list the same rows in the same order, every figure the HTML page ties to the JSON is the
// JSON's to the digits shown, and the showback CSV's dollars add up to its total.
#include "report/idle_tables.h"
#include "report/phase_table.h"
#include "report/showback_table.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <regex>
#include <set>

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
  // The phases, priced or not; idle days and hosts (shown from two on).
  s.cost.priced = below(3) != 0;
  int64_t all_ms = 0;
  for (size_t p = 0; p < kPhaseCount; ++p) {
    s.phase_ms[p] = below(90'000'000);
    s.cost.phase_cost[p] = below(5'000'000'000);
    all_ms += s.phase_ms[p];
  }
  for (size_t p = 0; p < kPhaseCount; ++p) {
    s.phase_share_pct[p] = all_ms == 0 ? 0 : 100.0 * s.phase_ms[p] / all_ms;
  }
  for (int64_t d = below(5); d > 0; --d) {
    s.idle_by_day.push_back({.day_start_ms = (20'000 + d) * 86'400'000LL,
                             .idle_ms = below(80'000'000),
                             .idle_cost = below(900'000'000)});
  }
  for (int64_t h = below(5); h > 0; --h) {
    s.idle_by_host.push_back({.host = "gpu-" + std::to_string(h),
                              .gpus = static_cast<size_t>(1 + below(8)),
                              .idle_ms = below(80'000'000),
                              .idle_cost = below(900'000'000)});
  }
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

// Each row's cells, in order, in `text` after `from` (a table's title); where the last was.
template <typename Column, typename Row, typename CellOf>
size_t ExpectRowsInOrder(const std::string& text, size_t from, const std::vector<Column>& columns,
                         const std::vector<Row>& rows, const CellOf& cell) {
  size_t at = from;
  for (const Row& r : rows) {
    for (const Column& c : columns) {
      const std::string shown = cell(c, r);
      if (shown.empty()) continue;
      const size_t found = text.find(shown, at);
      EXPECT_NE(found, std::string::npos) << c.header << ": " << shown << "\n" << text.substr(from);
      if (found == std::string::npos) return at;
      at = found + shown.size();
    }
  }
  return at;
}

// The showback as CSV: a line a row, in order, its dollars adding up to the total's.
void CheckShowbackCsv(const HistorySummary& s) {
  const std::vector<ShowbackTableRow> rows = ShowbackTableRows(s);
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
}

// Text and Markdown: each declared table's rows, cell by cell, in order under its title.
void CheckText(const HistorySummary& s) {
  std::vector<size_t> days(s.idle_by_day.size()), hosts(s.idle_by_host.size());
  for (size_t i = 0; i < days.size(); ++i) days[i] = i;
  for (size_t i = 0; i < hosts.size(); ++i) hosts[i] = i;
  const PhaseFigures phases{s.phase_share_pct, s.phase_ms, s.cost};
  for (bool md : {false, true}) {
    SCOPED_TRACE(md ? "markdown" : "text");
    TextStyle style;
    style.markdown = md;
    const std::string text = HistoryReportText(s, style);
    size_t at = text.find("Where the GPU-time went");
    ASSERT_NE(at, std::string::npos) << text;
    ExpectRowsInOrder(text, at, PhaseColumns(), PhaseRows(),
                      [&](const PhaseColumn& c, Phase p) { return PhaseCellText(phases, c, p); });
    at = text.find("Idle GPU-hours by day:");
    EXPECT_EQ(at != std::string::npos, ShowsIdleByDay(s));
    if (at != std::string::npos) {
      ExpectRowsInOrder(text, at, IdleByDayColumns(!md), days,
                        [&](const IdleColumn& c, size_t i) { return IdleByDayCellText(s, c, i); });
    }
    at = text.find("Idle GPU-hours by host:");
    EXPECT_EQ(at != std::string::npos, ShowsIdleByHost(s));
    if (at != std::string::npos) {
      ExpectRowsInOrder(text, at, IdleByHostColumns(), hosts,
                        [&](const IdleColumn& c, size_t i) { return IdleByHostCellText(s, c, i); });
    }
    at = text.find(ShowbackTitle(s));
    ASSERT_NE(at, std::string::npos) << text;
    ExpectRowsInOrder(text, at, ShowbackColumns(s), ShowbackTableRows(s),
                      [&](const ShowbackColumn& c, const ShowbackTableRow& r) {
                        return ShowbackCellText(s, c, r);
                      });
  }
}

// The HTML page: the showback's rows, and every figure the page ties to the JSON the JSON's
// to the digits shown.
void CheckHtml(const HistorySummary& s) {
  const nlohmann::json report = HistoryReportJson(s);
  const std::string html = HistoryReportHtml(s);
  const std::regex tied(
      R"re(<span data-json="([^"]+)"(?: data-scale="([^"]+)")?>([^<]*)</span>)re");
  std::set<std::string> sections;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), tied); it != std::sregex_iterator();
       ++it) {
    const std::string pointer = (*it)[1];
    ASSERT_TRUE(report.contains(nlohmann::json::json_pointer(pointer))) << pointer;
    const nlohmann::json& value = report[nlohmann::json::json_pointer(pointer)];
    if (!value.is_number()) continue;
    const double scale = (*it)[2].matched ? std::stod((*it)[2]) : 1.0;
    double unit = 1;
    const double shown = Shown((*it)[3], &unit);
    EXPECT_LE(std::abs(value.get<double>() * scale - shown), unit / 2 + 1e-9)
        << pointer << " " << (*it)[3];
    sections.insert(pointer.substr(0, pointer.find('/', 1)));
  }
  // The declared tables' figures are among them.
  EXPECT_TRUE(sections.count("/phases"));
  EXPECT_EQ(sections.count("/idle_by_day"), ShowsIdleByDay(s) ? 1u : 0u);
  EXPECT_EQ(sections.count("/idle_by_host"), ShowsIdleByHost(s) ? 1u : 0u);
  const size_t begin = html.find("<section id=\"showback\">");
  if (s.showback.rows.empty() && s.showback.billed_total == 0) {
    EXPECT_EQ(begin, std::string::npos);  // nothing to show back
    return;
  }
  ASSERT_NE(begin, std::string::npos);
  EXPECT_TRUE(sections.count("/showback"));
  const std::string section = html.substr(begin, html.find("</section>", begin) - begin);
  size_t trs = 0;
  for (size_t at = section.find("<tr"); at != std::string::npos; at = section.find("<tr", at + 1)) {
    ++trs;
  }
  EXPECT_EQ(trs, ShowbackTableRows(s).size() + 1) << section;  // and the header's
}

TEST(DeclaredTables, EveryFormatShowsTheSameRowsAndTheHtmlTiesThemToTheJson) {
  uint64_t first = 20261130;  // CGOV_TABLES_SEED: another run
  if (const char* seed = std::getenv("CGOV_TABLES_SEED")) first = std::strtoull(seed, nullptr, 10);
  constexpr uint64_t kSummaries = 60;
  std::printf("declared tables: seeds %llu to %llu\n", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + kSummaries - 1));
  for (uint64_t seed = first; seed < first + kSummaries; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const HistorySummary s = Generate(seed);
    CheckShowbackCsv(s);
    CheckText(s);
    CheckHtml(s);
    if (HasFailure()) break;  // the first failing summary is the one to read
  }
}

TEST(DeclaredTables, AShowbackEstimateHasNoUnmatchedRowAndABillDoes) {
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
