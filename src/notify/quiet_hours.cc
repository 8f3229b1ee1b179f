#include "notify/quiet_hours.h"

#include <ctime>

namespace cgov {

int ClockMinutes(std::string_view t) {
  if (t.size() != 5 || t[2] != ':') return -1;
  for (size_t i : {0, 1, 3, 4}) {
    if (t[i] < '0' || t[i] > '9') return -1;
  }
  const int h = (t[0] - '0') * 10 + (t[1] - '0'), m = (t[3] - '0') * 10 + (t[4] - '0');
  return h < 24 && m < 60 ? h * 60 + m : -1;
}

Result<QuietHours> ParseQuietHours(std::string_view text) {
  const QuietHours q{text.size() == 11 && text[5] == '-' ? ClockMinutes(text.substr(0, 5)) : -1,
                     text.size() == 11 ? ClockMinutes(text.substr(6)) : -1};
  if (q.start_min < 0 || q.end_min < 0 || q.start_min == q.end_min) {
    return InvalidArgument(
        "expected \"HH:MM-HH:MM\" in the host's local time, the ends different (\"22:00-07:00\")");
  }
  return q;
}

int64_t QuietUntilMs(const QuietHours& q, int64_t now_ms) {
  if (!q.any()) return 0;
  const time_t t = static_cast<time_t>(now_ms / 1000);
  struct tm local {};
  if (localtime_r(&t, &local) == nullptr) return 0;
  const int minute = local.tm_hour * 60 + local.tm_min;
  const bool quiet = q.start_min < q.end_min ? minute >= q.start_min && minute < q.end_min
                                             : minute >= q.start_min || minute < q.end_min;
  if (!quiet) return 0;
  const int64_t minute_start_ms = now_ms - (local.tm_sec * 1000 + now_ms % 1000);
  return minute_start_ms + int64_t{(q.end_min - minute + 1440) % 1440} * 60'000;
}

}  // namespace cgov
