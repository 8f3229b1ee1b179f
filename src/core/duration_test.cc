#include "core/duration.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

using std::chrono::milliseconds;

TEST(ParseDuration, AcceptsEveryUnit) {
  struct Case {
    const char* text;
    int64_t ms;
  } cases[] = {
      {"200ms", 200},
      {"1s", 1000},
      {"30s", 30'000},
      {"5m", 300'000},
      {"2h", 7'200'000},
      {"7d", 604'800'000},
      {"0s", 0},
      {"90m", 5'400'000},
      {"1w", 604'800'000},
      {"2h30m", 9'000'000},
      {"1d12h", 129'600'000},
      {"1m30s500ms", 90'500},
      {"1y", 31'536'000'000},
  };
  for (const Case& c : cases) {
    auto parsed = ParseDuration(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << parsed.status().message();
    EXPECT_EQ(parsed->count(), c.ms) << c.text;
  }
}

TEST(ParseDuration, RejectsWithAMessageNamingTheText) {
  for (const char* text :
       {"", "1x", "s", "1", "1.5s", "-1s", " 1s", "1s ", "1 s", "10sec", "99999999999999999999s",
        "9999999999999999d", "30m2h", "1h1h", "2h30", "1w9999999999999999d"}) {
    auto parsed = ParseDuration(text);
    ASSERT_FALSE(parsed.ok()) << "'" << text << "' parsed as " << parsed->count();
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.status().message().find(std::string("'") + text + "'"), std::string::npos)
        << parsed.status().message();
  }
}

TEST(FormatDuration, ReadsLikeAPersonWouldWriteIt) {
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(-5)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(850)), "850ms");
  EXPECT_EQ(FormatDuration(milliseconds(42'000)), "42s");
  EXPECT_EQ(FormatDuration(milliseconds(318'000)), "5m 18s");
  EXPECT_EQ(FormatDuration(milliseconds(300'000)), "5m");
  EXPECT_EQ(FormatDuration(milliseconds(7'500'000)), "2h 5m");
  EXPECT_EQ(FormatDuration(milliseconds(273'600'000)), "3d 4h");
}

}  // namespace
}  // namespace cgov
