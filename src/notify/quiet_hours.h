// A sink's quiet hours (docs/notifications.md, "Quiet hours"): "22:00-07:00" in the host's local
// time (its TZ), a window during which the sink's notices wait, queued, and go when it ends.
#ifndef CGOV_NOTIFY_QUIET_HOURS_H_
#define CGOV_NOTIFY_QUIET_HOURS_H_

#include <cstdint>
#include <string_view>

#include "core/status.h"

namespace cgov {

struct QuietHours {
  int start_min = -1;  // minutes after local midnight; -1: none
  int end_min = -1;    // the first minute that is not quiet; a window may cross midnight
  bool any() const { return start_min >= 0; }
  bool operator==(const QuietHours&) const = default;
};

// "HH:MM" (24-hour) as minutes after midnight, or -1.
int ClockMinutes(std::string_view text);

// "HH:MM-HH:MM", 24-hour, the two ends different. Errors say what is expected.
Result<QuietHours> ParseQuietHours(std::string_view text);

// When the quiet window that holds `now_ms` ends (ms since the epoch), or 0 when `now_ms` is
// not in one. Local time by localtime_r: across a change of the clocks (DST) the end may be an
// hour off, and the caller asks again when it wakes.
int64_t QuietUntilMs(const QuietHours& quiet, int64_t now_ms);

}  // namespace cgov

#endif  // CGOV_NOTIFY_QUIET_HOURS_H_
