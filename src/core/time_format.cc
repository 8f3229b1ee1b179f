#include "core/time_format.h"
#include "core/text.h"

#include <time.h>

#include <ctime>

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

Result<int64_t> ParseTimestampMs(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument(fmt::format("\"{}\" is not a timestamp (expected e.g. 2026-11-21, "
                                       "2026-11-21T10:00Z or 2026-11-21T10:00:00+02:00)", SafeText(text)));
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, millis = 0;
  size_t pos = 0;
  auto number = [&](size_t digits, int* out) {
    if (pos + digits > text.size()) return false;
    int v = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char c = text[pos + i];
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    pos += digits;
    *out = v;
    return true;
  };
  auto expect = [&](char c) { return pos < text.size() && text[pos] == c ? (++pos, true) : false; };
  if (!number(4, &year) || !expect('-') || !number(2, &month) || !expect('-') || !number(2, &day)) {
    return bad();
  }
  int offset_min = 0;
  if (pos < text.size()) {
    if (!(expect('T') || expect('t') || expect(' ')) || !number(2, &hour) || !expect(':') ||
        !number(2, &minute)) {
      return bad();
    }
    if (expect(':')) {
      if (!number(2, &second)) return bad();
      if (expect('.')) {
        int scale = 100;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
          millis += (text[pos++] - '0') * scale;
          scale /= 10;
        }
      }
    }
    if (expect('Z') || expect('z')) {
    } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      const int sign = text[pos++] == '-' ? -1 : 1;
      int oh = 0, om = 0;
      if (!number(2, &oh) || !expect(':') || !number(2, &om)) return bad();
      offset_min = sign * (oh * 60 + om);
    }
    if (pos != text.size()) return bad();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return bad();
  }
  // 2026-02-30 is not a day (mktime-style normalising would make it 2026-03-02).
  static constexpr int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int days_in_month = kDays[month - 1] + (month == 2 && leap ? 1 : 0);
  if (day > days_in_month) {
    return InvalidArgument(fmt::format("\"{}\" is not a date: {:04}-{:02} has {} days",
                                       SafeText(text), year, month, days_in_month));
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const int64_t seconds = static_cast<int64_t>(timegm(&tm)) - int64_t{offset_min} * 60;
  const int64_t ms = seconds * 1000 + millis;
  if (ms < kMinTimestampMs || ms >= kEndTimestampMs) {
    return InvalidArgument(fmt::format("\"{}\" is outside the times cgov takes: 1970-01-01 to "
                                       "2199-12-31", SafeText(text)));
  }
  return ms;
}

}  // namespace cgov
