#include "report/html.h"

#include <gtest/gtest.h>

#include "core/sha256.h"
#include "report/html_report.h"

namespace cgov {
namespace {

size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

TEST(Html, EscapesMarkupQuotesAndControlCharacters) {
  EXPECT_EQ(html::Esc("<b a=\"1\" b='2'>&</b>"),
            "&lt;b a=&quot;1&quot; b=&#39;2&#39;&gt;&amp;&lt;/b&gt;");
  EXPECT_EQ(html::Esc("a\x1b[31mred\x07"), "a\xEF\xBF\xBD[31mred\xEF\xBF\xBD");
  EXPECT_EQ(html::Esc("tab\tnew\nline"), "tab\tnew\nline");
}

TEST(Html, NumbersNameTheirJsonPointer) {
  EXPECT_EQ(html::Num("$1.00", "/cost/total_usd"),
            "<span data-json=\"/cost/total_usd\">$1.00</span>");
  EXPECT_EQ(html::Num("37.7", "/savings/combined_fraction", 100),
            "<span data-json=\"/savings/combined_fraction\" data-scale=\"100\">37.7</span>");
}

TEST(Html, ChartDrawsEachRunOfBucketsAndLeavesGapsOpen) {
  MinMaxSeries util(1, 100), mem(1, 100);
  for (int t : {0, 1, 2, 6, 7}) util.Add(t, 50);  // a gap at 3..5
  const std::string svg = html::SeriesChartSvg(
      "g0", "GPU 0", {{"util", "utilization %", &util}, {"mem", "memory %", &mem}}, 0, 8, "0 s",
      "8 s");
  EXPECT_NE(svg.find("data-series-count=\"2\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"util\" data-buckets=\"5\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-series=\"mem\" data-buckets=\"0\""), std::string::npos);
  // Two runs: two closed band outlines, two line segments ("M" starts each).
  const size_t band = svg.find("class=\"band\" d=\"");
  const std::string band_d = svg.substr(band, svg.find('"', band + 16) - band);
  EXPECT_EQ(Count(band_d, "M"), 2u) << band_d;
  EXPECT_EQ(Count(band_d, "Z"), 2u);
  EXPECT_NE(svg.find("utilization %: mean 50.0, min 50.0, max 50.0."), std::string::npos);
  EXPECT_NE(svg.find("memory %: no data."), std::string::npos);
  EXPECT_NE(svg.find("aria-labelledby=\"g0-t g0-d\""), std::string::npos);
}

TEST(Html, GaugeScalesPercentagesToAHundredAndOthersToTheLarger) {
  const std::string pct = html::GaugeSvg(50, 10, "% of GPU-time");
  EXPECT_NE(pct.find("class=\"bar\" x=\"0.5\" y=\"3.5\" width=\"89.5\""), std::string::npos) << pct;
  EXPECT_NE(pct.find("x1=\"18.0\""), std::string::npos) << pct;
  const std::string secs = html::GaugeSvg(300, 600, "s");
  EXPECT_NE(secs.find("x1=\"144.0\""), std::string::npos) << secs;  // 600 of 750, of 180 px
}

TEST(Html, SortableTableHasKeyboardButtonsAndSortKeys) {
  html::Table t;
  t.headers = {"who", "cost"};
  t.numeric = {false, true};
  t.rows = {{"a&b", "$1,000.00"}};
  t.sort_keys = {{"", "1000"}};
  t.sortable = true;
  const std::string out = t.Render();
  EXPECT_NE(out.find("<table class=\"sortable\">"), std::string::npos);
  EXPECT_NE(out.find("<th scope=\"col\" class=\"n\"><button type=\"button\">cost</button></th>"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("<td class=\"n\" data-sort=\"1000\">$1,000.00</td>"), std::string::npos);
  EXPECT_NE(out.find("<td>a&b</td>"), std::string::npos) << "cells are HTML already";
}

// Issue 46 item 10: the policy allowed script-src 'unsafe-inline', so markup that got into the
// page could run. It now names the page's one style and one script by their SHA-256: each hash
// is the hash of what the page holds (Chromium runs the script: tests/e2e/html_report_test.cc).
TEST(Html, TheContentSecurityPolicyNamesThePagesOwnStyleAndScriptByHash) {
  const std::string page = html::PageStart("t") + html::PageEnd();
  auto between = [&](const std::string& open, const std::string& close) {
    const size_t from = page.find(open) + open.size();
    return page.substr(from, page.find(close, from) - from);
  };
  const std::string policy = html::ContentSecurityPolicy();
  EXPECT_EQ(policy.find("unsafe"), std::string::npos) << policy;
  EXPECT_EQ(policy, "default-src 'none'; style-src 'sha256-" +
                        Sha256Base64(between("<style>", "</style>")) + "'; script-src 'sha256-" +
                        Sha256Base64(between("<script>", "</script>")) + "'; img-src data:");
  EXPECT_NE(page.find("content=\"" + policy + "\""), std::string::npos);
}

TEST(HtmlReport, RunPageIsSelfContainedAndEscapesTheCommand) {
  RunSummary s;
  s.command = {"python", "<script>alert(1)</script>"};
  s.duration_s = 10;
  s.interval_s = 1;
  s.samples = 10;
  GpuRunSummary g;
  g.index = 0;
  g.label = "0";
  g.name = "NVIDIA H100 80GB HBM3";
  g.util_series.Add(0, 40);
  s.gpus.push_back(g);
  Finding f;
  f.id = "idle_held";
  f.title = "Held & idle";
  f.observed = 12.5;
  f.observed_unit = "% of GPU-time";
  f.threshold = 5;
  s.findings.push_back(f);
  s.usage.gpus.resize(1);
  s.usage.gpus[0].phase_ms[0] = 10'000;
  const std::string page = RunReportHtml(s);
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(page.find("http://"), std::string::npos);
  EXPECT_EQ(page.find("https://"), std::string::npos);
  EXPECT_EQ(Count(page, "<figure class=\"gpu-chart\""), 1u);
  EXPECT_NE(page.find("data-json=\"/findings/0/observed/value\">12.5<"), std::string::npos);
  EXPECT_NE(page.find("Held &amp; idle"), std::string::npos);
  for (const char* id : {"cost", "phases", "charts", "gpus", "metrics", "findings"}) {
    EXPECT_NE(page.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  }
}

}  // namespace
}  // namespace cgov
