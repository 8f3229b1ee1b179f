// `cgov run`'s output directory and the files written into it when the job ends.
#ifndef CGOV_APP_RUN_RUN_OUTPUTS_H_
#define CGOV_APP_RUN_RUN_OUTPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_summary.h"
#include "app/run/run_options.h"
#include "core/status.h"

namespace cgov {

bool IsEmptyDir(const std::string& path);

// "python" from "/usr/bin/python3.11"-like paths, made safe for a directory name.
std::string CommandLabel(const std::string& argv0);

// Creates (or, with force, reuses) the output directory. The error says what to do.
Result<std::string> PrepareOutputDir(const RunOptions& options, int64_t now_wall_ns);

// Writes summary.json, report.html and report.md into `dir` ("": none, the report only);
// failures become the summary's warnings (the job's status is unaffected). *report: the
// Markdown report; *written: the files that are there, in the order the report names them;
// *failed: what went wrong, one message a file.
void WriteOutputs(const std::string& dir, RunSummary* summary, std::string* report,
                  std::vector<std::string>* written, std::vector<std::string>* failed);

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_OUTPUTS_H_
