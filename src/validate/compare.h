// The validation kit's judgement: what cgov measured of a known load against what the pattern
// should give and what nvidia-smi saw at the same time. Pure functions of the files' text.
#ifndef CGOV_VALIDATE_COMPARE_H_
#define CGOV_VALIDATE_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "validate/load_pattern.h"

namespace cgov::validate {

// One line of `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw
// --format=csv,noheader,nounits` run with TZ=UTC. "[N/A]" / "[Not Supported]" are unknown.
struct SmiRow {
  int64_t unix_ms = 0;
  int index = 0;
  std::optional<double> util_pct;
  std::optional<double> mem_used_mib;
  std::optional<double> power_w;
};
// The error names the line and the column.
Result<std::vector<SmiRow>> ParseSmiCsv(std::string_view text);

// One tick of one GPU from cgov's samples.jsonl.
struct CgovGpuTick {
  int64_t unix_ms = 0;
  std::optional<double> util_pct;
  std::optional<double> mem_used_mib;
  std::optional<double> power_w;
  bool processes_known = false;
  uint64_t compute_memory_bytes = 0;  // every compute process on the GPU
  uint64_t job_memory_bytes = 0;      // the job's processes on the GPU
  bool job_on_gpu = false;
};
// The ticks of GPU `index` (docs/samples-jsonl.md). The error names the line.
Result<std::vector<CgovGpuTick>> ParseCgovSamples(std::string_view jsonl, int index);

struct Check {
  std::string what;      // "mean utilization"
  std::string expected;  // "30 ± 10 %"
  std::string cgov;      // "31.2 %"
  std::string smi;       // "30.8 %" or ""
  bool pass = false;
};

struct CompareOptions {
  int64_t warmup_ms = 3000;    // ignored at the start (context creation, JIT)
  int64_t tail_ms = 1000;      // ignored at the end
  double util_vs_smi_pct = 5;  // |cgov mean - nvidia-smi mean|, percentage points
  double mem_vs_smi_mib = 64;  // or 2 % of the larger, whichever is more
  double power_vs_smi_frac = 0.10;
};

// The checks for one pattern. Ticks and rows outside the run's window (cgov's first and last
// tick, trimmed by warmup/tail) are left out. No tick in the window is itself a failed check.
std::vector<Check> ComparePattern(const LoadPattern& pattern, const std::vector<CgovGpuTick>& cgov,
                                  const std::vector<SmiRow>& smi, const CompareOptions& options);

// "| duty30 | mean utilization | 30 ± 10 % | 31.2 % | 30.8 % | pass |" lines, and the header.
std::string MarkdownHeader();
std::string MarkdownRows(const std::string& pattern, const std::vector<Check>& checks);

}  // namespace cgov::validate

#endif  // CGOV_VALIDATE_COMPARE_H_
