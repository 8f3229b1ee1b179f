// `cgov report --slurm-accounting FILE`: sacct's parsable output (`sacct -P -o ...`), written by
// whoever ran sacct. Properties: a refusal names the file and is safe to print; an accepted file
// has jobs keyed by their id, never a job step (4242117.batch), with fields safe to print.
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/slurm_accounting.h"
#include "core/text.h"
#include "fuzz_check.h"

using namespace cgov;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<SlurmJobs> jobs = ParseSlurmAccounting(text, "sacct.txt");
  if (!jobs.ok()) {
    const std::string& message = jobs.status().message();
    FUZZ_CHECK(message.starts_with("sacct.txt"));
    FUZZ_CHECK(SafeText(message) == message);
    return 0;
  }
  for (const auto& [id, job] : *jobs) {
    FUZZ_CHECK(!id.empty() && id.find('.') == std::string::npos);
    FUZZ_CHECK(IsSafeText(job.user) && IsSafeText(job.account) && IsSafeText(job.partition));
  }
  return 0;
}
