#include "core/money.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "core/text.h"

namespace cgov {

Result<MicroUsd> ParseUsd(std::string_view text) {
  std::string_view t = text;
  if (!t.empty() && t.front() == '$') t.remove_prefix(1);
  const size_t dot = t.find('.');
  std::string_view whole = t.substr(0, dot);
  std::string_view frac = dot == std::string_view::npos ? "" : t.substr(dot + 1);
  auto digits = [](std::string_view s) {
    for (char c : s) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (whole.empty() || !digits(whole) || !digits(frac) || frac.size() > 6 ||
      (dot != std::string_view::npos && frac.empty())) {
    return InvalidArgument(fmt::format(
        "bad price '{}': write dollars as a number with at most 6 decimals, e.g. 8 or 2.49",
        SafeText(text)));
  }
  while (whole.size() > 1 && whole.front() == '0') whole.remove_prefix(1);
  if (whole.size() > 9) {
    return InvalidArgument(
        fmt::format("bad price '{}': at most $999,999,999.999999", SafeText(text)));
  }
  MicroUsd value = 0;
  for (char c : whole) value = value * 10 + (c - '0');
  value *= kMicroPerUsd;
  MicroUsd scale = kMicroPerUsd / 10;
  for (char c : frac) {
    value += (c - '0') * scale;
    scale /= 10;
  }
  return value;
}

MicroUsd RoundToCent(MicroUsd amount) {
  const MicroUsd sign = amount < 0 ? -1 : 1;
  const MicroUsd a = amount == std::numeric_limits<MicroUsd>::min()
                         ? std::numeric_limits<MicroUsd>::max()
                         : amount * sign;
  const MicroUsd up =
      a > std::numeric_limits<MicroUsd>::max() - kMicroPerCent / 2 ? a : a + kMicroPerCent / 2;
  return sign * (up / kMicroPerCent * kMicroPerCent);
}

std::vector<int64_t> AllocateCents(const std::vector<MicroUsd>& parts, MicroUsd total_micro) {
  auto floor_div = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && (a < 0)); };
  const int64_t total = RoundToCent(total_micro) / kMicroPerCent;
  std::vector<int64_t> cents(parts.size());
  std::vector<std::pair<int64_t, size_t>> remainders;
  int64_t sum = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    cents[i] = floor_div(parts[i], kMicroPerCent);
    sum += cents[i];
    remainders.emplace_back(parts[i] - cents[i] * kMicroPerCent, i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // One cent each to the largest remainders; when the total is more cents above the floors than
  // there are parts (a total rounded from other parts: two phases' cents), round after round.
  for (size_t k = 0; sum < total && !remainders.empty(); ++k, ++sum) {
    ++cents[remainders[k % remainders.size()].second];
  }
  // The floors already pass the total (the parts were rounded up elsewhere): take cents back
  // from the smallest remainders of parts that have one to give, round after round.
  while (sum > total) {
    bool taken = false;
    for (size_t k = remainders.size(); sum > total && k-- > 0;) {
      if (cents[remainders[k].second] <= 0) continue;
      --cents[remainders[k].second];
      --sum;
      taken = true;
    }
    if (!taken) break;  // nothing left to take: parts of zero cannot go below it
  }
  return cents;
}

MicroUsd AddUsd(MicroUsd a, MicroUsd b) {
  MicroUsd sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<MicroUsd>::max() : sum;
}

MicroUsd MulUsd(MicroUsd a, int64_t n) {
  MicroUsd product = 0;
  return __builtin_mul_overflow(a, n, &product) ? std::numeric_limits<MicroUsd>::max() : product;
}

MicroUsd CostOf(MicroUsd price_per_gpu_hour, int64_t gpu_ms) {
  const Int128 product = static_cast<Int128>(price_per_gpu_hour) * gpu_ms;
  const Int128 cost = (product + 1'800'000) / 3'600'000;
  constexpr MicroUsd kMax = std::numeric_limits<MicroUsd>::max();
  return cost > kMax ? kMax : static_cast<MicroUsd>(cost);
}

MicroUsd EnergyCostOf(MicroUsd price_per_kwh, int64_t mj) {
  if (mj <= 0 || price_per_kwh <= 0) return 0;
  const Int128 cost = (static_cast<Int128>(price_per_kwh) * mj + 1'800'000'000) / 3'600'000'000;
  constexpr MicroUsd kMax = std::numeric_limits<MicroUsd>::max();
  return cost > kMax ? kMax : static_cast<MicroUsd>(cost);
}

MicroUsd PriceFromUsd(double usd_per_gpu_hour) {
  if (!(usd_per_gpu_hour > 0)) return 0;  // NaN too
  const double micro = usd_per_gpu_hour * kMicroPerUsd;
  if (!(micro < static_cast<double>(kMaxPriceMicroUsd))) return kMaxPriceMicroUsd;
  return static_cast<MicroUsd>(std::llround(micro));
}

std::optional<MicroUsd> Divide(MicroUsd amount, double divisor) {
  if (!(divisor > 0)) return std::nullopt;
  const double quotient = static_cast<double>(amount) / divisor;
  // 2^63 as a double: anything at or above it does not fit (llround would be undefined).
  if (!(quotient < 9.223372036854775807e18)) return std::numeric_limits<MicroUsd>::max();
  return static_cast<MicroUsd>(std::llround(quotient));
}

std::string FormatUsd(MicroUsd amount, int decimals) {
  decimals = std::clamp(decimals, 0, 6);
  const bool negative = amount < 0;
  // Unsigned, so that every amount is total: -INT64_MIN, and a saturated cost rounded up (the
  // yearly projection of the largest price overflowed `a + unit / 2` and crashed the report).
  const uint64_t a = negative ? 0 - static_cast<uint64_t>(amount) : static_cast<uint64_t>(amount);
  uint64_t unit = 1;
  for (int i = decimals; i < 6; ++i) unit *= 10;
  const uint64_t rounded = a / unit + ((a % unit) * 2 >= unit ? 1 : 0);  // 10^-decimals dollars
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const std::string digits = std::to_string(rounded / scale);
  std::string whole;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) whole += ',';
    whole += digits[i];
  }
  std::string out = std::string(negative ? "-" : "") + "$" + whole;
  if (decimals > 0) out += fmt::format(".{:0{}}", rounded % scale, decimals);
  return out;
}

double UsdNumber(MicroUsd amount, int decimals) {
  double scale = std::pow(10.0, decimals);
  return std::round(static_cast<double>(amount) / kMicroPerUsd * scale) / scale;
}

std::optional<MicroUsd> ParseAmountMicroUsd(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  if (text.empty() || text.size() > 64) return std::nullopt;
  if (text.find_first_of("eE") != std::string_view::npos) {  // 1.2E-5: rare, double is enough
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v) || std::fabs(v) > 9e12) {
      return std::nullopt;
    }
    return std::llround(v * 1e6);
  }
  bool negative = false;
  if (text.front() == '-' || text.front() == '+') {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  int64_t micro = 0;
  int decimals = -1;  // digits after the point; -1 before it
  bool digits = false, round_up = false;
  for (char c : text) {
    if (c == '.' && decimals < 0) {
      decimals = 0;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    digits = true;
    if (decimals >= 6) {
      if (decimals == 6) round_up = c >= '5';
      ++decimals;
      continue;
    }
    if (micro > (kMaxAmountMicroUsd - 9) / 10) return std::nullopt;  // before it could overflow
    micro = micro * 10 + (c - '0');
    if (decimals >= 0) ++decimals;
  }
  if (!digits) return std::nullopt;
  for (int d = std::max(decimals, 0); d < 6; ++d) {
    if (micro > kMaxAmountMicroUsd / 10) return std::nullopt;
    micro *= 10;
  }
  if (round_up) ++micro;
  return negative ? -micro : micro;
}

std::string FormatCentsPlain(int64_t cents) {
  const uint64_t a = cents < 0 ? 0 - static_cast<uint64_t>(cents) : static_cast<uint64_t>(cents);
  return fmt::format("{}{}.{:02}", cents < 0 ? "-" : "", a / 100, a % 100);
}

}  // namespace cgov
