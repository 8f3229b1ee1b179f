#include "report/ci_export.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

RunDigest Digest() {
  RunDigest d;
  d.tags = {{"project", "vision"}, {"branch", "mr-1"}};
  d.gpu_hours = 2;
  d.total_usd = 5;
  d.waste_pct = 40;
  d.work = 100;
  d.unit = "samples";
  d.cost_per_unit_usd = 0.05;
  d.phase_share_pct = {10, 20, 30, 40, 0};
  d.findings = {{"unused_gpu", Severity::kWarning, "Unused GPUs: paid for, computing nothing",
                 "observed 100.0 % (threshold: >= 90 %)", "Release it.\nNow."},
                {"idle_held_gpu", Severity::kCritical, "Held", "", "End it."}};
  return d;
}

TEST(CiExport, GithubAnnotationsEscapeWorkflowCommandValues) {
  const std::string out = GithubAnnotations(Digest());
  EXPECT_NE(out.find("::notice title=cgov%3A 2.000 GPU-hours%2C $5.00::40.0 %25 of GPU capacity "
                     "unused; 2 finding(s)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("::warning title=Unused GPUs%3A paid for%2C computing nothing::observed "
                     "100.0 %25 (threshold: >= 90 %25). Release it.%0ANow.\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("::error title=Held::End it.\n"), std::string::npos) << "critical is an error";
  RunDigest regressed = Digest();
  regressed.baseline_verdict = "regression: cost per sample +50 %";
  regressed.baseline_regressed = true;
  EXPECT_NE(GithubAnnotations(regressed).find("::error title=cgov baseline::regression: cost per "
                                              "sample +50 %25\n"),
            std::string::npos);
}

TEST(CiExport, GitlabMetricsAreOpenMetricsText) {
  const std::string out = GitlabMetrics(Digest());
  EXPECT_NE(out.find("\ncgov_cost_usd 5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\ncgov_gpu_seconds 7200\n"), std::string::npos);
  EXPECT_NE(out.find("cgov_cost_per_unit_usd{unit=\"samples\"} 0.05\n"), std::string::npos);
  EXPECT_NE(out.find("cgov_phase_share_pct{phase=\"productive\"} 40\n"), std::string::npos);
  EXPECT_NE(out.find("cgov_findings{severity=\"critical\"} 1\n"), std::string::npos);
  EXPECT_EQ(out.find("cgov_baseline_change_pct"), std::string::npos) << "no baseline, no line";
  EXPECT_EQ(out.substr(out.size() - 6), "# EOF\n");
}

TEST(CiExport, CodeQualityFingerprintsIgnoreTheBranch) {
  const nlohmann::json a = GitlabCodeQuality(Digest(), ".gitlab-ci.yml");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0]["check_name"], "cgov/unused_gpu");
  EXPECT_EQ(a[0]["severity"], "major");
  EXPECT_EQ(a[1]["severity"], "critical");
  EXPECT_EQ(a[0]["location"]["path"], ".gitlab-ci.yml");
  RunDigest main = Digest();
  main.tags["branch"] = "main";
  EXPECT_EQ(GitlabCodeQuality(main, "x")[0]["fingerprint"], a[0]["fingerprint"])
      << "the same finding of the same job on another branch is the same issue";
  RunDigest other = Digest();
  other.tags["project"] = "nlp";
  EXPECT_NE(GitlabCodeQuality(other, "x")[0]["fingerprint"], a[0]["fingerprint"]);
  EXPECT_NE(a[0]["fingerprint"], a[1]["fingerprint"]);
}

}  // namespace
}  // namespace cgov
