// Wall-clock timestamps as text. All UTC.
#ifndef CGOV_CORE_TIME_FORMAT_H_
#define CGOV_CORE_TIME_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cgov {

inline constexpr int64_t kHourMs = 3'600'000;
inline constexpr int64_t kDayMs = 24 * kHourMs;  // a UTC day (Unix time has no leap seconds)

// "2026-11-21T11:19:27.123Z" (RFC 3339, milliseconds, UTC).
std::string FormatRfc3339Utc(int64_t unix_ns);

// "2026-11-21T11:19Z": to the minute, as reports show a time.
std::string FormatMinuteUtc(int64_t unix_ms);

// "2026-11-21": the UTC day.
std::string FormatDateUtc(int64_t unix_ms);

// "20261121T111927Z": for directory names (sorts by time, no ':' for other filesystems).
std::string FormatCompactUtc(int64_t unix_ns);

// The times cgov takes as input: 1970-01-01T00:00Z up to, not including, 2200-01-01T00:00Z.
inline constexpr int64_t kMinTimestampMs = 0;
inline constexpr int64_t kEndTimestampMs = 7'258'118'400'000;

// Parses "2026-11-21", "2026-11-21T10:00", "2026-11-21T10:00:05Z", "...T10:00:05.250+02:00"
// (UTC unless an offset is given) into Unix milliseconds, within [kMinTimestampMs,
// kEndTimestampMs). The error names the text.
Result<int64_t> ParseTimestampMs(std::string_view text);

}  // namespace cgov

#endif  // CGOV_CORE_TIME_FORMAT_H_
