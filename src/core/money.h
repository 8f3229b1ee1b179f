// Money as integer micro-dollars (1 USD = 1,000,000), shown to the cent. No floating point
// touches a dollar figure after the price is parsed.
#ifndef CGOV_CORE_MONEY_H_
#define CGOV_CORE_MONEY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cgov {

using MicroUsd = int64_t;
__extension__ using Int128 = __int128;  // GCC and Clang; for products that overflow 64 bits
inline constexpr MicroUsd kMicroPerUsd = 1'000'000;
inline constexpr MicroUsd kMicroPerCent = 10'000;

// The largest price Cost Governor takes: $999,999,999.999999 per GPU-hour. Costs computed from
// it saturate at the largest MicroUsd instead of wrapping (AddUsd, CostOf).
inline constexpr MicroUsd kMaxPriceMicroUsd = 999'999'999'999'999;

// "8", "8.5", "12.29", "0.000125": a non-negative decimal number of dollars, at most 6 decimals
// and at most kMaxPriceMicroUsd.
Result<MicroUsd> ParseUsd(std::string_view text);

// The largest amount a bill line or total may reach: $9e12, far from overflow.
inline constexpr MicroUsd kMaxAmountMicroUsd = 9'000'000'000'000'000'000;

// A cost as billed ("0.0345678901", "-12.5", "1.2E-5") in micro-dollars, rounded half away
// from zero; nullopt when it is not a number or too large (beyond ±$9e12).
// (A price a person types is ParseUsd's: strict, as a typo must not price anything.)
std::optional<MicroUsd> ParseAmountMicroUsd(std::string_view text);

// a + b and a × n for non-negative amounts, saturating at the largest MicroUsd (never wrapping
// negative).
MicroUsd AddUsd(MicroUsd a, MicroUsd b);
MicroUsd MulUsd(MicroUsd a, int64_t n);

// Rounds half away from zero to whole cents.
MicroUsd RoundToCent(MicroUsd amount);

// Allocates cents once: `parts` (micro-dollars, any sign) rounded to whole cents so that they add
// up to `total_micro` rounded to the cent (half away from zero): each part's floor, then one cent
// each to the largest remainders (the earlier part on a tie). Returns cents, one per part.
// When they add up to something else (a total itself made of cents rounded elsewhere: the idle
// line is two phases' cents), the difference goes a cent at a time to the largest remainders, or
// is taken from the smallest, round after round: the cents always add up to the total (for a
// positive total and non-negative parts).
std::vector<int64_t> AllocateCents(const std::vector<MicroUsd>& parts, MicroUsd total_micro);

// price per GPU-hour x GPU-milliseconds / 3,600,000, rounded to the micro-dollar (128-bit math),
// saturating at the largest MicroUsd.
MicroUsd CostOf(MicroUsd price_per_gpu_hour, int64_t gpu_ms);

// price per kWh x millijoules / 3,600,000,000 (a kWh is 3.6e9 mJ), rounded to the micro-dollar
// (128-bit math), saturating at the largest MicroUsd; 0 for no energy.
MicroUsd EnergyCostOf(MicroUsd price_per_kwh, int64_t mj);

// A price per GPU-hour in dollars from outside (a Prometheus answer, OpenCost) as micro-dollars:
// 0 for a negative or non-finite value, at most kMaxPriceMicroUsd (never an overflow).
MicroUsd PriceFromUsd(double usd_per_gpu_hour);

// a / b rounded to the micro-dollar (saturating); nullopt when b <= 0.
std::optional<MicroUsd> Divide(MicroUsd amount, double divisor);

// "$1,234.56" (rounded to the cent); "$0.0004" style with `decimals` > 2 for unit costs.
std::string FormatUsd(MicroUsd amount, int decimals = 2);

// Cents as "1234.56" (a "-" before a negative amount; no currency sign or thousands separator):
// a spreadsheet's number, for the CSV outputs.
std::string FormatCentsPlain(int64_t cents);

// The dollars as a JSON number with `decimals` places (e.g. 80.0, 13.33).
double UsdNumber(MicroUsd amount, int decimals = 2);

}  // namespace cgov

#endif  // CGOV_CORE_MONEY_H_
