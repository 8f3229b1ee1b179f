#include "core/money.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

TEST(Money, APriceAPersonTypesIsStrict) {
  EXPECT_EQ(ParseUsd("2.49").value(), 2'490'000);
  EXPECT_EQ(ParseUsd("$8").value(), 8'000'000);
  for (const char* bad : {"", "2.", "-1", "1e3", "2.1234567", "1,5", "abc"}) {
    EXPECT_FALSE(ParseUsd(bad).ok()) << bad;
  }
}

TEST(Money, BilledAmountsAreExactMicroDollars) {
  EXPECT_EQ(ParseAmountMicroUsd("12.5"), 12'500'000);
  EXPECT_EQ(ParseAmountMicroUsd("0.0345678901"), 34'568);  // rounded half away from zero
  EXPECT_EQ(ParseAmountMicroUsd("-0.0000005"), -1);
  EXPECT_EQ(ParseAmountMicroUsd("7"), 7'000'000);
  EXPECT_EQ(ParseAmountMicroUsd("1.2E-5"), 12);
  EXPECT_EQ(ParseAmountMicroUsd(" 3.10 "), 3'100'000);
  // (The last one overflowed int64 before the bound was checked: found by billing_fuzz.)
  for (const char* bad : {"", "abc", "1.2.3", "-", ".", "1e400", "99999999999999",
                          "-5555555555555555555555555555555551.000001"}) {
    EXPECT_FALSE(ParseAmountMicroUsd(bad)) << bad;
  }
}

}  // namespace
}  // namespace cgov
