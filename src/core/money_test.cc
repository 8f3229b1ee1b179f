#include "core/money.h"

#include <cmath>
#include <limits>

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
// Issue 57, 11: `--price-per-gpu-hour 999999999` (documented as valid) crashed text reports and
// `cgov run` (SIGSEGV, the job's exit status lost): the saturated yearly projection overflowed
// the formatter. Every amount formats.
TEST(Money, APriceFromOutsideIsClampedNeverAnOverflow) {
  EXPECT_EQ(PriceFromUsd(2.5), 2'500'000);
  EXPECT_EQ(PriceFromUsd(std::nan("")), 0);
  EXPECT_EQ(PriceFromUsd(-1), 0);
  EXPECT_EQ(PriceFromUsd(1e308), kMaxPriceMicroUsd);
  EXPECT_EQ(PriceFromUsd(std::numeric_limits<double>::infinity()), kMaxPriceMicroUsd);
}

// Issue 62: a kWh is 3.6e9 mJ; the cost rounds once, half up, and saturates rather than wraps.
TEST(Money, EnergyCostIsThePriceTimesTheKwhRoundedOnce) {
  EXPECT_EQ(EnergyCostOf(125'000, 3'600'000'000), 125'000) << "a kWh at $0.125";
  EXPECT_EQ(EnergyCostOf(125'000, 43'500'000), 1'510) << "43.5 kJ: $0.00151041...";
  EXPECT_EQ(EnergyCostOf(1, 1'800'000'000), 1) << "half a micro-dollar rounds up";
  EXPECT_EQ(EnergyCostOf(1, 1'799'999'999), 0);
  EXPECT_EQ(EnergyCostOf(125'000, 0), 0);
  EXPECT_EQ(EnergyCostOf(0, 3'600'000'000), 0);
  EXPECT_EQ(EnergyCostOf(125'000, -5), 0) << "no energy, no cost";
  EXPECT_EQ(EnergyCostOf(kMaxPriceMicroUsd, std::numeric_limits<int64_t>::max()),
            std::numeric_limits<MicroUsd>::max())
      << "saturates";
}

TEST(Money, CentsForASpreadsheetHaveNoSignOrSeparatorAndEveryValueFits) {
  EXPECT_EQ(FormatCentsPlain(0), "0.00");
  EXPECT_EQ(FormatCentsPlain(5), "0.05");
  EXPECT_EQ(FormatCentsPlain(123456), "1234.56");
  EXPECT_EQ(FormatCentsPlain(-205), "-2.05");
  EXPECT_EQ(FormatCentsPlain(INT64_MAX), "92233720368547758.07");
  EXPECT_EQ(FormatCentsPlain(INT64_MIN), "-92233720368547758.08");  // no negation overflow
}

TEST(Money, EveryAmountFormatsTheLargestAndTheSmallestToo) {
  const MicroUsd max = std::numeric_limits<MicroUsd>::max();
  EXPECT_EQ(FormatUsd(max), "$9,223,372,036,854.78");
  EXPECT_EQ(FormatUsd(max, 6), "$9,223,372,036,854.775807");
  EXPECT_EQ(FormatUsd(max, 0), "$9,223,372,036,855");
  EXPECT_EQ(FormatUsd(std::numeric_limits<MicroUsd>::min()), "-$9,223,372,036,854.78");
  EXPECT_EQ(FormatUsd(CostOf(999'999'999'000'000, 365LL * 24 * 3'600'000)), "$8,759,999,991,240.00")
      << "a GPU-year at the largest price";
  EXPECT_EQ(FormatUsd(CostOf(999'999'999'000'000, 8 * 365LL * 24 * 3'600'000)),
            "$9,223,372,036,854.78")
      << "eight of them saturate, and format";
  EXPECT_EQ(FormatUsd(1'234'565), "$1.23") << "half a cent rounds up only from half";
  EXPECT_EQ(FormatUsd(1'235'000), "$1.24");
  EXPECT_EQ(FormatUsd(-1'235'000), "-$1.24");
  EXPECT_EQ(FormatUsd(500, 9), "$0.000500") << "decimals past micro-dollars are micro-dollars";
}

}  // namespace cgov
