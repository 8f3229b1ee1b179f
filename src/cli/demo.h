// `cgov demo [--gpus 8] [--duration 7d] [--interval 1s] [--db PATH]`: writes a simulated shared
// GPU box (cli/demo_fleet.h) through the same store the daemon uses, then prints the report.
#ifndef CGOV_CLI_DEMO_H_
#define CGOV_CLI_DEMO_H_

namespace cgov::cli {

int RunDemo(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_DEMO_H_
