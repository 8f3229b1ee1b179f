#include "core/time_format.h"
#include "core/text.h"

#include <time.h>

#include <chrono>
#include <ctime>

#include <date/date.h>
#include <fmt/format.h>

namespace cgov {
namespace {

// The calendar's arithmetic, not gmtime_r: glibc's takes a lock and goes through its time-zone
// code, ~3 % of `cgov run`'s 1 Hz tick, which stamps every line of samples.jsonl.
tm Utc(int64_t unix_ns) {
  const date::sys_time<std::chrono::nanoseconds> t{std::chrono::nanoseconds{unix_ns}};
  const date::sys_days day = date::floor<date::days>(t);  // floor: before 1970 too
  const date::year_month_day ymd{day};
  const date::hh_mm_ss<std::chrono::seconds> hms{date::floor<std::chrono::seconds>(t - day)};
  tm out{};
  out.tm_year = static_cast<int>(ymd.year()) - 1900;
  out.tm_mon = static_cast<int>(static_cast<unsigned>(ymd.month())) - 1;
  out.tm_mday = static_cast<int>(static_cast<unsigned>(ymd.day()));
  out.tm_hour = static_cast<int>(hms.hours().count());
  out.tm_min = static_cast<int>(hms.minutes().count());
  out.tm_sec = static_cast<int>(hms.seconds().count());
  return out;
}

}  // namespace

std::string FormatRfc3339Utc(int64_t unix_ns) {
  tm t = Utc(unix_ns);
  int64_t ms = ((unix_ns % 1'000'000'000) + 1'000'000'000) % 1'000'000'000 / 1'000'000;
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ms);
}

std::string FormatMinuteUtc(int64_t unix_ms) {
  return FormatRfc3339Utc(unix_ms * 1'000'000).substr(0, 16) + "Z";
}

std::string FormatDateUtc(int64_t unix_ms) {
  return FormatRfc3339Utc(unix_ms * 1'000'000).substr(0, 10);
}

std::string FormatCompactUtc(int64_t unix_ns) {
  tm t = Utc(unix_ns);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", t.tm_year + 1900, t.tm_mon + 1, t.tm_mday,
                     t.tm_hour, t.tm_min, t.tm_sec);
}

Result<int64_t> ParseTimestampMs(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument(
        fmt::format("\"{}\" is not a timestamp (expected e.g. 2026-11-21, 2026-11-21T10:00Z or "
                    "2026-11-21T10:00:00+02:00)",
                    SafeText(text)));
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
  // 2026-02-30 is not a day (mktime-style normalising would make it 2026-03-02); the calendar
  // is Howard Hinnant's date library's (Debian libhowardhinnant-date-dev), not ours.
  const date::year_month_day ymd{date::year{year}, date::month{static_cast<unsigned>(month)},
                                 date::day{static_cast<unsigned>(day)}};
  if (!ymd.ok()) {
    const auto last =
        date::year_month_day_last{date::year{year}, date::month_day_last{ymd.month()}}.day();
    return InvalidArgument(fmt::format("\"{}\" is not a date: {:04}-{:02} has {} days",
                                       SafeText(text), year, month, static_cast<unsigned>(last)));
  }
  const int64_t days = date::sys_days{ymd}.time_since_epoch().count();
  const int64_t seconds =
      days * 86'400 + hour * 3600 + minute * 60 + second - int64_t{offset_min} * 60;
  const int64_t ms = seconds * 1000 + millis;
  if (ms < kMinTimestampMs || ms >= kEndTimestampMs) {
    return InvalidArgument(fmt::format(
        "\"{}\" is outside the times cgov takes: 1970-01-01 to 2199-12-31", SafeText(text)));
  }
  return ms;
}

}  // namespace cgov
