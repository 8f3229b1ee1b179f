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

// Prometheus's units: "ms" before "m" and "s" (the longest suffix wins).
constexpr std::array<Unit, 7> kUnits = {{
    {"ms", 1},
    {"s", 1000},
    {"m", 60'000},
    {"h", 3'600'000},
    {"d", 86'400'000},
    {"w", 7 * 86'400'000LL},
    {"y", 365 * 86'400'000LL},
}};

Status BadDuration(std::string_view text, std::string_view why) {
  return InvalidArgument(fmt::format(
      "bad duration '{}': {} (write whole numbers with units, largest first: 200ms, 30s, 5m, "
      "2h30m, 7d, 1w)",
      SafeText(text), SafeText(why)));
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  // One or more <number><unit> parts, each unit smaller than the one before (as Prometheus
  // writes them: 1w, 2h30m, 1d12h).
  if (text.empty()) return BadDuration(text, "it is empty");
  int64_t total = 0;
  int64_t previous_unit = std::numeric_limits<int64_t>::max();
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0) {
      return BadDuration(text, total == 0 && rest == text ? "it does not start with a number"
                                                          : "a unit must follow each number");
    }
    int64_t count = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + digits, count);
    if (ec != std::errc() || end != rest.data() + digits)
      return BadDuration(text, "number too large");
    rest.remove_prefix(digits);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (rest.starts_with(u.suffix) &&
          (rest.size() == u.suffix.size() ||
           (rest[u.suffix.size()] >= '0' && rest[u.suffix.size()] <= '9'))) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) {
      size_t n = 0;
      while (n < rest.size() && !(rest[n] >= '0' && rest[n] <= '9')) ++n;
      return BadDuration(text, rest.empty() ? "the unit is missing"
                                            : fmt::format("unknown unit '{}'", rest.substr(0, n)));
    }
    if (unit->ms >= previous_unit) {
      return BadDuration(text, "units must come largest first, each once (2h30m, not 30m2h)");
    }
    previous_unit = unit->ms;
    rest.remove_prefix(unit->suffix.size());
    if (count > (std::numeric_limits<int64_t>::max() - total) / unit->ms) {
      return BadDuration(text, "number too large");
    }
    total += count * unit->ms;
  }
  return std::chrono::milliseconds(total);
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
