#include "core/from_chars.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace cgov {
namespace {

constexpr double kUntouched = 12345.678;

struct FromCharsAnswer {
  FromCharsAnswer(size_t read_in, std::errc error_in, double value_in)
      : read(read_in), error(error_in), value(value_in) {}
  size_t read;  // characters read
  std::errc error;
  double value;
};

FromCharsAnswer ReadWith(bool via_strtod, const std::string& text) {
  double value = kUntouched;
  const char* first = text.data();
  const auto [ptr, ec] = via_strtod ? FromCharsViaStrtod(first, first + text.size(), value)
                                    : std::from_chars(first, first + text.size(), value);
  return {static_cast<size_t>(ptr - first), ec, value};
}

// The same answer, bit for bit (a NaN's payload aside, which neither promises).
void ExpectSameAnswer(const std::string& text) {
  const FromCharsAnswer want = ReadWith(false, text);
  const FromCharsAnswer got = ReadWith(true, text);
  EXPECT_EQ(got.read, want.read) << "'" << text << "'";
  EXPECT_EQ(static_cast<int>(got.error), static_cast<int>(want.error)) << "'" << text << "'";
  if (std::isnan(want.value)) {
    EXPECT_TRUE(std::isnan(got.value)) << "'" << text << "'";
    EXPECT_EQ(std::signbit(got.value), std::signbit(want.value)) << "'" << text << "'";
  } else {
    EXPECT_EQ(std::memcmp(&got.value, &want.value, sizeof(double)), 0)
        << "'" << text << "': " << got.value << " against " << want.value;
  }
}

TEST(FromChars, TheFallbackReadsWhatStdFromCharsReads) {
  for (const char* text : {"0",         "-0",
                           "1",         "-1",
                           "3.25",      ".5",
                           "-.5",       "5.",
                           "1e3",       "1E-3",
                           "1e",        "1e+",
                           "1e+5x",     "12abc",
                           "0x1p3",     "-0x10",
                           "0X",        "inf",
                           "-INF",      "infinity",
                           "Infinity!", "infin",
                           "nan",       "-nan",
                           "NaN(123)",  "nan(",
                           "+1",        " 1",
                           "\t1",       "",
                           "-",         ".",
                           "-.",        "e5",
                           "1.5e308",   "1e309",
                           "-1e309",    "1e-400",
                           "4.9e-324",  "2.2250738585072014e-308",
                           "1e-310",    "0.000000000000000000000000000000000000000001",
                           "1,5",       "1_000",
                           "0.1",       "123456789012345678901234567890"}) {
    ExpectSameAnswer(text);
  }
}

// Generated texts: digits, points, signs, exponents, letters and spaces in any order, and
// numbers near the ends of a double's range.
TEST(FromChars, TheFallbackAgreesOnGeneratedTexts) {
  uint64_t seed = std::random_device{}();
  if (const char* env = std::getenv("CGOV_FROM_CHARS_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  }
  std::printf("CGOV_FROM_CHARS_SEED=%llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 random(seed);
  static constexpr char kAlphabet[] =
      "0123456789012345678901234567890123456789..--+eEeE xXinfaINFAN()";
  for (int i = 0; i < 20'000; ++i) {
    std::string text;
    const size_t length = random() % 12;
    for (size_t k = 0; k < length; ++k) text += kAlphabet[random() % (sizeof kAlphabet - 1)];
    ExpectSameAnswer(text);
    // A well-formed number with an exponent anywhere from underflow to overflow.
    const std::string number = std::to_string(random() % 100'000) + "." +
                               std::to_string(random() % 1'000'000) + "e" +
                               std::to_string(static_cast<int>(random() % 720) - 360);
    ExpectSameAnswer(number);
    ExpectSameAnswer("-" + number);
    if (HasFailure()) break;
  }
}

TEST(FromChars, ReadsADoubleAsStdFromCharsDoes) {
  double value = 0;
  const std::string text = "-2.5e2 rest";
  const auto [ptr, ec] = FromChars(text.data(), text.data() + text.size(), value);
  EXPECT_EQ(ec, std::errc());
  EXPECT_EQ(ptr, text.data() + 6);
  EXPECT_EQ(value, -250.0);
  value = kUntouched;
  const std::string huge = "1e999";
  EXPECT_EQ(FromChars(huge.data(), huge.data() + huge.size(), value).ec,
            std::errc::result_out_of_range);
  EXPECT_EQ(value, kUntouched);
}

}  // namespace
}  // namespace cgov
