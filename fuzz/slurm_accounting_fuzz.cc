// `cgov report --slurm-accounting FILE`: sacct's parsable output (`sacct -P -o ...`) or
// `scontrol show job`, written by whoever ran them, with job names and comments any user writes.
// Properties: a refusal names the file and is safe to print; a skipped record is said naming the
// file; an accepted file has jobs keyed by digits, never a job step (4242117.batch), with fields
// safe to print; and nothing on a line a user's free text starts (Comment=) sets an account.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/slurm_accounting.h"
#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(slurm_accounting_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> skipped;
  Result<SlurmJobs> jobs = ParseSlurmAccounting(text, "sacct.txt", &skipped);
  for (const std::string& why : skipped) {
    FUZZ_CHECK(why.starts_with("sacct.txt:") && IsSafeText(why));
  }
  if (!jobs.ok()) {
    const std::string& message = jobs.status().message();
    FUZZ_CHECK(message.starts_with("sacct.txt"));
    FUZZ_CHECK(SafeText(message) == message);
    return 0;
  }
  for (const auto& [id, job] : *jobs) {
    FUZZ_CHECK(!id.empty() && id.find('.') == std::string::npos);
    FUZZ_CHECK(id.find_first_not_of("0123456789_") == std::string::npos);
    FUZZ_CHECK(IsSafeText(job.user) && IsSafeText(job.account) && IsSafeText(job.partition));
  }
  // A comment line appended to every scontrol record changes no job's account.
  if (text.starts_with("JobId=")) {
    std::string forged;
    for (std::string_view rest = text; !rest.empty();) {
      const size_t eol = rest.find('\n');
      std::string_view line = rest.substr(0, eol);
      forged += std::string(line) + "\n";
      if (line.starts_with("JobId=")) forged += "   Comment=x Account=forged UserId=forged(1)\n";
      rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
    }
    Result<SlurmJobs> again = ParseSlurmAccounting(forged, "sacct.txt");
    FUZZ_CHECK(again.ok());
    for (const auto& [id, job] : *again) {
      auto before = jobs->find(id);
      if (before == jobs->end()) continue;
      FUZZ_CHECK(job.account == before->second.account && job.user == before->second.user);
    }
  }
  return 0;
}
