// Wall-clock timestamps as text. All UTC.
#ifndef CGOV_CORE_TIME_FORMAT_H_
#define CGOV_CORE_TIME_FORMAT_H_

#include <cstdint>
#include <string>

namespace cgov {

// "2026-11-21T11:19:27.123Z" (RFC 3339, milliseconds, UTC).
std::string FormatRfc3339Utc(int64_t unix_ns);

// "20261121T111927Z": for directory names (sorts by time, no ':' for other filesystems).
std::string FormatCompactUtc(int64_t unix_ns);

}  // namespace cgov

#endif  // CGOV_CORE_TIME_FORMAT_H_
