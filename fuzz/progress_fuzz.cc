// A progress file ($CGOV_PROGRESS_FILE): the job writes any bytes. The last line is read as the
// cumulative work, or refused with an error that quotes a short escaped excerpt, never the line.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "app/run/run_analysis.h"
#include "core/text.h"
#include "fuzz_check.h"

using namespace cgov;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto progress = ParseProgress(text, "progress");
  if (!progress.ok()) {
    const std::string& message = progress.status().message();
    FUZZ_CHECK(IsSafeText(message));
    FUZZ_CHECK(message.size() < 600);  // the excerpt is 80 bytes, escaped at most 4 times over
    return 0;
  }
  if (*progress) {
    FUZZ_CHECK((*progress)->first >= 0 && std::isfinite((*progress)->first));
    const std::string& unit = (*progress)->second;
    FUZZ_CHECK(unit.empty() || unit == "samples" || unit == "tokens" || unit == "steps");
  }
  return 0;
}
