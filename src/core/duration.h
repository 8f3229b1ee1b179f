// Durations as users type them: "200ms", "1s", "30s", "5m", "2h", "7d".
#ifndef CGOV_CORE_DURATION_H_
#define CGOV_CORE_DURATION_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

// Parses non-negative integers each followed by a unit (ms, s, m, h, d, w, y), largest first, as
// Prometheus writes durations: "30s", "2h30m", "1w". No spaces, no fractions,
// no unit-less numbers (is "30" seconds or minutes?). The error names the text and the units.
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);

// Formats for people: "850ms", "42s", "5m 18s", "2h 5m", "3d 4h". Negative values as "0s".
std::string FormatDuration(std::chrono::milliseconds duration);
// FormatDuration of a count of milliseconds; and that count in hours.
inline std::string SpanOf(int64_t ms) { return FormatDuration(std::chrono::milliseconds(ms)); }
inline double HoursOf(int64_t ms) { return static_cast<double>(ms) / 3.6e6; }

}  // namespace cgov

#endif  // CGOV_CORE_DURATION_H_
