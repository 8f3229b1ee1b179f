#include "core/duration.h"
#include "core/text.h"

#include <array>
#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace cgov {
namespace {

struct Unit {
  std::string_view suffix;
  int64_t ms;
};

// "ms" before "m" and "s": the longest suffix wins.
constexpr std::array<Unit, 5> kUnits = {{
    {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000},
}};

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgument(fmt::format(
      "bad duration '{}': {} (write a whole number and a unit: 200ms, 1s, 30s, 5m, 2h, 7d)",
      SafeText(text), SafeText(why)));
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return BadDuration(text, "it does not start with a number");
  std::string_view suffix = text.substr(digits);
  if (suffix.empty()) return BadDuration(text, "the unit is missing");

  int64_t count = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, count);
  if (ec != std::errc() || end != text.data() + digits) return BadDuration(text, "number too large");
  for (const Unit& unit : kUnits) {
    if (suffix != unit.suffix) continue;
    if (count > std::numeric_limits<int64_t>::max() / unit.ms) {
      return BadDuration(text, "number too large");
    }
    return std::chrono::milliseconds(count * unit.ms);
  }
  return BadDuration(text, fmt::format("unknown unit '{}'", suffix));
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  int64_t ms = duration.count();
  if (ms <= 0) return "0s";
  if (ms < 1000) return fmt::format("{}ms", ms);
  int64_t s = ms / 1000;
  const int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
  if (d > 0) return h > 0 ? fmt::format("{}d {}h", d, h) : fmt::format("{}d", d);
  if (h > 0) return m > 0 ? fmt::format("{}h {}m", h, m) : fmt::format("{}h", h);
  if (m > 0) return sec > 0 ? fmt::format("{}m {}s", m, sec) : fmt::format("{}m", m);
  return fmt::format("{}s", sec);
}

}  // namespace cgov
