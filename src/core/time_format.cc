#include "core/time_format.h"

#include <time.h>

#include <fmt/format.h>

namespace cgov {
namespace {

tm Utc(int64_t unix_ns) {
  time_t seconds = static_cast<time_t>(unix_ns / 1'000'000'000);
  if (unix_ns < 0 && unix_ns % 1'000'000'000 != 0) --seconds;
  tm out{};
  gmtime_r(&seconds, &out);
  return out;
}

}  // namespace

std::string FormatRfc3339Utc(int64_t unix_ns) {
  tm t = Utc(unix_ns);
  int64_t ms = ((unix_ns % 1'000'000'000) + 1'000'000'000) % 1'000'000'000 / 1'000'000;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ms);
}

std::string FormatCompactUtc(int64_t unix_ns) {
  tm t = Utc(unix_ns);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                     t.tm_hour, t.tm_min, t.tm_sec);
}

}  // namespace cgov
