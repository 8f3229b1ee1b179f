// A unit test whose code reads the host's local time (localtime_r, mktime): the zone is the TZ
// the test sets, a POSIX TZ string that needs no tz database ("UTC0",
// "CET-1CEST,M3.5.0,M10.5.0/3"), and the process's own TZ again when the test ends.
#ifndef CGOV_TESTS_SUPPORT_LOCAL_ZONE_H_
#define CGOV_TESTS_SUPPORT_LOCAL_ZONE_H_

#include <stdlib.h>
#include <time.h>

#include <gtest/gtest.h>

namespace cgov {

class LocalZoneTest : public ::testing::Test {
 protected:
  void Zone(const char* tz) {
    setenv("TZ", tz, 1);
    tzset();
  }
  void TearDown() override {
    unsetenv("TZ");
    tzset();
  }
};

}  // namespace cgov

#endif  // CGOV_TESTS_SUPPORT_LOCAL_ZONE_H_
