#include "report/text_style.h"

#include <gtest/gtest.h>

#include "report/run_report.h"

namespace cgov {
namespace {

TEST(TextStyle, TablesAreMarkdownOrAlignedColumns) {
  const std::vector<std::vector<std::string>> rows = {
      {"who", "cost"}, {"alice", "$1.00"}, {"bö", "$10.00"}};
  EXPECT_EQ(TextTable(rows, "lr", true),
            "| who   |   cost |\n| ----- | -----: |\n| alice |  $1.00 |\n| bö    | $10.00 |\n");
  EXPECT_EQ(TextTable(rows, "lr", false), "  who      cost\n  alice   $1.00\n  bö     $10.00\n");
}

// Issue 59: the idle-held reconciliation has one wording, whatever the report and its unit.
TEST(TextStyle, TheIdleHeldReconciliationHasOneWording) {
  EXPECT_EQ(IdleHeldReconciledSentence("3.00 h", "1.00 h", "2.00 h"),
            "Idle-held, reconciled: 3.00 h = 1.00 h of short pauses on bursty GPUs (inside busy "
            "work: the input-pipeline finding) + 2.00 h on the other GPUs (the idle-held finding)");
}

TEST(TextStyle, EmphasisAndHeadingsPerStyle) {
  EXPECT_EQ(Strong("$7.00", kMarkdown), "**$7.00**");
  EXPECT_EQ(Strong("$7.00", kPlainText), "$7.00");
  EXPECT_EQ(Strong("$7.00", TextStyle{false, true}), "\x1b[1m$7.00\x1b[0m");
  EXPECT_EQ(TextHeading("Findings", kMarkdown, 3), "\n### Findings\n\n");
  EXPECT_EQ(TextHeading("Findings", kPlainText), "\n■ Findings\n\n");
  EXPECT_EQ(SeverityTag(Severity::kCritical, kPlainText), "[critical]");
  EXPECT_EQ(SeverityTag(Severity::kCritical, TextStyle{false, true}),
            "\x1b[1;31m[critical]\x1b[0m");
  EXPECT_EQ(SeverityTag(Severity::kWarning, kMarkdown), "[warning]") << "Markdown has no colour";
}

RunSummary WithFinding() {
  RunSummary s;
  s.command = {"python", "train.py", "--glob", "**/*.jpg"};
  s.duration_s = 60;
  s.interval_s = 1;
  s.samples = 60;
  s.usage.gpus.resize(1);
  s.usage.gpus[0].phase_ms[0] = 60'000;
  s.phase_share_pct[0] = 100;
  Finding f;
  f.id = "unused_gpu";
  f.severity = Severity::kWarning;
  f.title = "Unused GPUs";
  f.observed = 100;
  f.observed_unit = "%";
  s.findings.push_back(f);
  s.gpus.resize(2);
  return s;
}

TEST(RunReportText, PlainTextHasNoMarkdownSyntaxAndColourOnlyWhenAsked) {
  const RunSummary s = WithFinding();
  const std::string md = RunReportText(s, "out", kMarkdown);
  EXPECT_EQ(md, RunReportMarkdown(s, "out"));
  EXPECT_NE(md.find("## cgov run · python train.py --glob **/*.jpg\n"), std::string::npos) << md;
  EXPECT_NE(md.find("### Findings"), std::string::npos);
  EXPECT_NE(md.find("1. **[warning] Unused GPUs**"), std::string::npos) << md;
  EXPECT_NE(md.find("| Metric "), std::string::npos);

  const std::string text = RunReportText(s, "out", kPlainText);
  EXPECT_EQ(text.rfind("cgov run · python train.py --glob **/*.jpg\n", 0), 0u)
      << "the command itself is left alone: " << text;
  for (const char* markdown : {"##", "| ", "|-", "**[", "**Unused"}) {
    EXPECT_EQ(text.find(markdown), std::string::npos) << markdown << " in\n" << text;
  }
  EXPECT_NE(text.find("■ Findings"), std::string::npos);
  EXPECT_NE(text.find("1. [warning] Unused GPUs — observed"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);

  const std::string color = RunReportText(s, "out", TextStyle{false, true});
  EXPECT_NE(color.find("\x1b[1;33m[warning]\x1b[0m \x1b[1mUnused GPUs\x1b[0m"), std::string::npos)
      << color;
}

}  // namespace
}  // namespace cgov
