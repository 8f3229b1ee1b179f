// `cgov run [options] -- COMMAND [ARG]...`: run a job unchanged, sample while it runs, report.
#ifndef CGOV_CLI_RUN_H_
#define CGOV_CLI_RUN_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "analysis/findings.h"
#include "analysis/pricing.h"
#include "analysis/run_compare.h"
#include "core/tags.h"

namespace cgov::cli {

struct RunOptions {
  std::string out_dir;  // "" = ./cgov-runs/<UTC stamp>-<command name>
  bool force = false;
  std::chrono::milliseconds interval{1000};
  Tags tags;
  bool quiet = false;
  std::string nvml_lib;
  std::string host_root = "/";
  PriceOptions price;                 // --price-per-gpu-hour, --instance-type, --spot
  std::string catalog_path;           // --price-catalog; "" = the built-in data/prices.json
  std::optional<PriceCatalog> catalog;  // --price-catalog's; empty: the built-in one (Catalog())
  std::optional<double> work;         // --work
  std::string unit = "samples";       // --unit
  std::optional<Severity> fail_on;    // --fail-on
  std::vector<RunDigest> baselines;   // --baseline: read and checked before the job starts
  std::optional<double> fail_on_regression;  // --fail-on-regression PCT
  int gate_exit_code = 3;             // --gate-exit-code: the status a fired gate exits with
  std::string db;                     // --db: also record the run into this history database
  bool detect_instance = false;       // --detect-instance
  std::string metadata_endpoint = "http://169.254.169.254/latest/meta-data/instance-type";
  std::vector<std::string> command;

  // The catalog in force. The built-in one is parsed when first asked for: by RunRun while the
  // job runs, or before it starts when --instance-type had to be checked (the recorder's thread
  // and the main one may both ask: BuiltinCatalog() is thread-safe).
  const PriceCatalog& Catalog() const { return catalog.has_value() ? *catalog : BuiltinCatalog(); }
};

// Exit status when the job succeeded but --fail-on's severity fired, or --fail-on-regression's
// limit was passed (CI gates).
inline constexpr int kExitFindingsGate = 3;

// The work done so far from the progress file: its last line, "N" or "N UNIT" (N cumulative).
// nullopt when there is none; the error names the file and line when it is malformed.
Result<std::optional<std::pair<double, std::string>>> ParseProgress(std::string_view text,
                                                                    std::string_view file);

// Parses argv (argv[0] = "run") and validates every value before anything starts. Returns the
// options, or the usage error's message. `*help_exit` >= 0 means CLI11 already printed help or an
// error and the caller should exit with it.
Result<RunOptions> ParseRunOptions(int argc, char** argv, int* help_exit);

// "python" from "/usr/bin/python3.11"-like paths, made safe for a directory name.
std::string CommandLabel(const std::string& argv0);

// The baseline runs --baseline names: each file as given; from a directory, every summary.json
// under it whose tags are this run's (run-specific tags such as branch aside: SameJobTags).
Result<std::vector<RunDigest>> LoadBaselines(const std::vector<std::string>& paths, const Tags& tags);

// Creates (or, with force, reuses) the output directory. The error says what to do.
Result<std::string> PrepareOutputDir(const RunOptions& options, int64_t now_wall_ns);

int RunRun(int argc, char** argv);

}  // namespace cgov::cli

#endif  // CGOV_CLI_RUN_H_
