#include "notify/quiet_hours.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "local_zone.h"

namespace cgov {
namespace {

using QuietHoursTest = LocalZoneTest;  // tests/support/local_zone.h

constexpr int64_t kMonday = 1'794'787'200'000;  // 2026-11-16T00:00:00Z
constexpr int64_t kMinute = 60'000, kHour = 60 * kMinute;

TEST_F(QuietHoursTest, AWindowAcrossMidnightEndsAtItsEndInLocalTime) {
  Zone("UTC0");
  const QuietHours night = *ParseQuietHours("22:00-07:00");
  EXPECT_EQ(QuietUntilMs(night, kMonday + 21 * kHour + 59 * kMinute), 0) << "21:59 is not quiet";
  EXPECT_EQ(QuietUntilMs(night, kMonday + 22 * kHour), kMonday + 31 * kHour);
  EXPECT_EQ(QuietUntilMs(night, kMonday + 23 * kHour + 30 * kMinute + 1234), kMonday + 31 * kHour)
      << "seconds and ms within the minute";
  EXPECT_EQ(QuietUntilMs(night, kMonday + 3 * kHour), kMonday + 7 * kHour);
  EXPECT_EQ(QuietUntilMs(night, kMonday + 7 * kHour), 0) << "07:00 is not quiet";
  const QuietHours lunch = *ParseQuietHours("12:00-13:30");
  EXPECT_EQ(QuietUntilMs(lunch, kMonday + 12 * kHour + 5 * kMinute),
            kMonday + 13 * kHour + 30 * kMinute);
  EXPECT_EQ(QuietUntilMs(lunch, kMonday + 11 * kHour), 0);
  EXPECT_EQ(QuietUntilMs(QuietHours{}, kMonday), 0) << "no quiet hours";
}

TEST_F(QuietHoursTest, TheHostsZoneDecides) {
  Zone("IST-5:30");  // UTC+05:30: 22:00 there is 16:30 UTC
  const QuietHours night = *ParseQuietHours("22:00-07:00");
  EXPECT_EQ(QuietUntilMs(night, kMonday + 16 * kHour + 29 * kMinute), 0);
  EXPECT_EQ(QuietUntilMs(night, kMonday + 16 * kHour + 30 * kMinute),
            kMonday + 25 * kHour + 30 * kMinute)
      << "07:00 the next morning there";
}

TEST(QuietHours, OnlyTwoDifferentTimesOfDayParse) {
  EXPECT_EQ(*ParseQuietHours("00:00-23:59"), (QuietHours{0, 1439}));
  for (const char* bad : {"", "22:00", "22:00-22:00", "24:00-07:00", "22:60-07:00", "2200-0700",
                          "22:00 - 07:00", "22:00-07:00x", "-1:00-07:00", "aa:bb-cc:dd"}) {
    EXPECT_FALSE(ParseQuietHours(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace cgov
