// What CI systems read of a run (`cgov ci SUMMARY --format ...`, used by action.yml and
// ci/gitlab/cgov.gitlab-ci.yml): GitHub workflow commands (annotations), a GitLab metrics report
// (OpenMetrics text) and a GitLab Code Quality report. docs/ci.md lists every field.
#ifndef CGOV_REPORT_CI_EXPORT_H_
#define CGOV_REPORT_CI_EXPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/run_compare.h"

namespace cgov {

// One `::error|warning|notice title=...::message` line per finding (critical, warning, info),
// a notice with the run's cost, and the baseline verdict when there was one. Values escaped as
// GitHub's workflow commands require.
std::string GithubAnnotations(const RunDigest& run);

// Key figures as OpenMetrics text, for `artifacts:reports:metrics`: cost, GPU-seconds, waste %,
// cost per unit, phase shares, findings by severity, the change against the baseline.
std::string GitlabMetrics(const RunDigest& run);

// Findings as a Code Quality report (`artifacts:reports:codequality`): each issue located at
// `path` (the CI file that runs the job), fingerprinted by finding and job tags so that a merge
// request shows which findings are new and which are resolved.
nlohmann::json GitlabCodeQuality(const RunDigest& run, const std::string& path);

}  // namespace cgov

#endif  // CGOV_REPORT_CI_EXPORT_H_
