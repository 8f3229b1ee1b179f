// The end-of-run report: saved as report.md (Markdown) and printed to stderr by `cgov run` (plain
// text on a terminal, the Markdown otherwise).
#ifndef CGOV_REPORT_RUN_REPORT_H_
#define CGOV_REPORT_RUN_REPORT_H_

#include <string>
#include <vector>

#include "analysis/run_summary.h"
#include "report/text_style.h"

namespace cgov {

// A run's output files, in the order the report names them.
inline const std::vector<std::string> kRunOutputFiles = {"samples.jsonl", "summary.json",
                                                         "report.md", "report.html"};

// `out_dir`: where the run's files are ("" when none could be written); `files`: those of them
// that were written, which the last line names (never one that is not there).
std::string RunReportText(const RunSummary& summary, const std::string& out_dir,
                          const TextStyle& style,
                          const std::vector<std::string>& files = kRunOutputFiles);
inline std::string RunReportMarkdown(const RunSummary& summary, const std::string& out_dir,
                                     const std::vector<std::string>& files = kRunOutputFiles) {
  return RunReportText(summary, out_dir, kMarkdown, files);
}

// The five phases as a bar of 50 glyphs (· ░ ▒ ▓ █), from shares that sum to 100.
std::string PhaseBar(const std::array<double, kPhaseCount>& shares);

// The findings and the savings arithmetic as a section ("" without data).
std::string FindingsText(const std::vector<Finding>& findings, const SavingsBlock& savings,
                         bool has_data, const TextStyle& style);

// The cost block every text view shows, from the summary's CostBlock: GPU-hours and effective
// GPU-hours, the total, the wasted dollars and the waste fraction, the cost per effective GPU-hour,
// the projections and the unit cost; or why the cost is unknown.
std::string CostText(const CostBlock& cost, const TextStyle& style);

// "6.1 MiB", "2.4 GiB", "512 B".
std::string FormatBytes(uint64_t bytes);

}  // namespace cgov

#endif  // CGOV_REPORT_RUN_REPORT_H_
