// A progress file ($CGOV_PROGRESS_FILE): the job writes any bytes. The last line is read as the
// cumulative work (finite, 0 to kMaxProgressWork), or refused with an error that quotes a short
// escaped excerpt, never the line; read for another user (the daemon), it quotes nothing of it.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "app/run/run_analysis.h"
#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(progress_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto progress = ParseProgress(text, "progress");
  if (!progress.ok()) {
    const std::string& message = progress.status().message();
    FUZZ_CHECK(IsSafeText(message));
    FUZZ_CHECK(message.size() < 600);  // the excerpt is 80 bytes, escaped at most 4 times over
    auto unquoted = ParseProgress(text, "progress", /*quote_line=*/false);
    FUZZ_CHECK(!unquoted.ok());
    const std::string& bare = unquoted.status().message();
    const size_t colon = bare.find(": progress line not understood: ");
    FUZZ_CHECK(bare.starts_with("progress:") && colon != std::string::npos);
    // "progress:LINE": the line's number, and then only cgov's own words.
    FUZZ_CHECK(bare.substr(colon) ==
               ": progress line not understood: write the cumulative work as \"N\" or \"N "
               "samples|tokens|steps\" (0 <= N <= 1e15)");
    return 0;
  }
  // For another user's file the refusal is the same whatever the line holds: nothing leaks.
  auto unquoted = ParseProgress(text, "progress", /*quote_line=*/false);
  FUZZ_CHECK(unquoted.ok());
  if (*progress) {
    FUZZ_CHECK((*progress)->first >= 0 && std::isfinite((*progress)->first));
    FUZZ_CHECK((*progress)->first <= kMaxProgressWork);
    const std::string& unit = (*progress)->second;
    FUZZ_CHECK(unit.empty() || unit == "samples" || unit == "tokens" || unit == "steps");
  }
  return 0;
}
