// `cgov compare BASELINE... CURRENT` (a run against its baselines, outside a run) and
// `cgov runs DIR...` (many runs' summaries by tag: the cross-run showback). docs/ci.md.
#ifndef CGOV_CLI_RUNS_H_
#define CGOV_CLI_RUNS_H_

namespace cgov::cli {

int RunCompare(int argc, char** argv);
int RunRuns(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_RUNS_H_
