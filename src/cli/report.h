// `cgov report --db PATH [--since 24h] [--until T] [--format text|md|json] [--by ...]`: the
// retrospective report of a history database (safe while the daemon writes).
#ifndef CGOV_CLI_REPORT_H_
#define CGOV_CLI_REPORT_H_

namespace cgov::cli {

int RunReport(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_REPORT_H_
