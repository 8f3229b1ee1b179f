// `cgov top`: the box now (src/cli/top.cc).
#ifndef CGOV_CLI_TOP_H_
#define CGOV_CLI_TOP_H_

namespace cgov::cli {

int RunTop(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_TOP_H_
