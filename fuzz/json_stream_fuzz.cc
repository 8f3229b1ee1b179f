// The streaming JSON reader that reads every Prometheus-compatible answer (`report
// --prometheus`) as it downloads: whatever the bytes and wherever the download cuts them, it
// accepts exactly what nlohmann::json's strict parser accepts (but a NUL byte, below) and reports
// the same events.
#include <cstdint>
#include <string_view>
#include <vector>

#include "fakes/json_stream_check.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

CGOV_FUZZ_TARGET(json_stream_fuzz) {
  if (size < 1) return 0;
  // The first byte picks the cuts: none, one, or every n-th byte.
  const unsigned pick = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<size_t> cuts;
  if (pick >= 128 && !text.empty()) {
    cuts.push_back((pick - 128) % (text.size() + 1));
  } else if (pick > 0) {
    const size_t every = pick % 8 + 1;
    for (size_t at = every; at < text.size(); at += every) cuts.push_back(at);
  }
  const JsonRead reference = ReadWithNlohmann(text);
  const JsonRead read = ReadInPieces(text, cuts);
  if (const size_t nul = text.find('\0'); reference.ok && nul != std::string_view::npos) {
    // The one difference: nlohmann ends a document at a NUL byte outside a string (its end of a
    // C string); RFC 8259 has no such byte, and JsonStream refuses it.
    FUZZ_CHECK(!read.ok);
    const JsonRead before = ReadInPieces(text.substr(0, nul), {});
    FUZZ_CHECK(before.ok && before.log == reference.log);
    return 0;
  }
  FUZZ_CHECK(read.ok == reference.ok);
  if (reference.ok) FUZZ_CHECK(read.log == reference.log);
  return 0;
}
