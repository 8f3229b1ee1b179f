// `cgov run`'s summary once the job has ended: what it was, what it did, what it cost, how it
// compares with earlier runs, and whether a CI gate fired. Problems become the summary's
// warnings: the job is done, its exit status stands.
#ifndef CGOV_APP_RUN_RUN_ANALYSIS_H_
#define CGOV_APP_RUN_RUN_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/run_summary.h"
#include "app/run/run_options.h"
#include "core/status.h"
#include "os/job_process.h"

namespace cgov {

// The job's argv as records and reports show it (the job itself gets the bytes it was given).
std::vector<std::string> PrintableCommand(const std::vector<std::string>& command);

// Fills what the caller knows of the summary: times, exit, rusage, cgov's own peak memory.
void FillOutcome(const RunOptions& o, int64_t start_wall_ns, int64_t start_mono_ns,
                 const JobOutcome& outcome, RunSummary* summary);

// Prices, findings and savings into the summary, with the work from --work or the progress file
// and the instance type --detect-instance found.
void AnalyzeRun(const RunOptions& o, const std::string& progress_file,
                const std::string& detected_instance, RunSummary* summary);

// This run against --baseline's runs, from the summary.json it is about to write.
void CompareWithBaselines(const RunOptions& o, RunSummary* summary);

// --fail-on and --fail-on-regression, decided before summary.json is written (`gate`).
void EvaluateGate(const RunOptions& o, int job_exit_code, RunSummary* summary);

// The baseline runs --baseline names: each file as given; from a directory, every summary.json
// under it whose tags are this run's (run-specific tags such as branch aside: SameJobTags).
Result<std::vector<RunDigest>> LoadBaselines(const std::vector<std::string>& paths,
                                             const Tags& tags);

// The end of a job's progress file. The job controls that path: it may put a FIFO, a device or
// a symlink to anything there, or write one endless line. So: no symlink, regular files only,
// never blocking, and only the last `max_bytes` (the last line is all that counts). `owner`:
// when set, a file another uid owns is refused (a root daemon reading a path a job named reads
// only what the job's owner could have written). NotFound when the job wrote none. *name: how
// errors name what was read (with "(last N KiB)" when that was not the whole file, so line
// numbers count from there).
inline constexpr size_t kProgressTailBytes = 64 * 1024;
Status ReadProgressTail(const std::string& path, size_t max_bytes, std::optional<uint32_t> owner,
                        std::string* out, std::string* name);
// The same of a file already open (the daemon opens it with os/rooted_open.h): `shown` names it
// in errors; the file's device and inode come back with its text, so that several processes
// naming one file (every rank of a job inherits the variable) count it once.
struct ProgressTail {
  std::string text;
  std::string name;
  uint64_t dev = 0;
  uint64_t ino = 0;
};
Status ReadOpenProgressTail(int fd, std::string_view shown, size_t max_bytes,
                            std::optional<uint32_t> owner, ProgressTail* tail);

// The work done so far from the progress file: its last line, "N" or "N UNIT" (N cumulative,
// a finite number from 0 to kMaxProgressWork). nullopt when there is none; the error names the
// file and line when it is malformed, and quotes the line (escaped, 80 characters) only when
// `quote_line` (the user's own file; never when the daemon reads a file for another user).
inline constexpr double kMaxProgressWork = 1e15;
Result<std::optional<std::pair<double, std::string>>> ParseProgress(std::string_view text,
                                                                    std::string_view file,
                                                                    bool quote_line = true);

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_ANALYSIS_H_
