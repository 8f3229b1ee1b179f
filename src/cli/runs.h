// `cgov compare BASELINE... CURRENT` (a run against its baselines, outside a run) and
// `cgov runs DIR...` (many runs' summaries by tag: the cross-run showback), `cgov ci` (a run for
// a CI system). docs/ci.md.
#ifndef CGOV_CLI_RUNS_H_
#define CGOV_CLI_RUNS_H_

namespace cgov::cli {

int RunCompare(int argc, char** argv);
int RunRuns(int argc, char** argv);
// `cgov ci SUMMARY --format github|gitlab-metrics|gitlab-codequality`: a run for a CI system.
int RunCi(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_RUNS_H_
