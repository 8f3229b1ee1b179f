#include "report/text_style.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/text.h"

namespace cgov {
namespace {

constexpr std::string_view kBold = "\x1b[1m", kReset = "\x1b[0m";

}  // namespace

size_t TextWidth(std::string_view s) { return DisplayWidth(s); }

std::string TextTable(const std::vector<std::vector<std::string>>& rows, std::string_view right,
                      bool markdown) {
  if (rows.empty()) return "";
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], TextWidth(row[c]));
    }
  }
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string line = markdown ? "|" : " ";
    for (size_t c = 0; c < rows[r].size() && c < widths.size(); ++c) {
      const std::string& cell = rows[r][c];
      const std::string pad(widths[c] - TextWidth(cell), ' ');
      const bool is_right = c < right.size() && right[c] == 'r';
      line += " " + (is_right ? pad + cell : cell + pad) + (markdown ? " |" : " ");
    }
    while (!markdown && !line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (r == 0 && markdown) {
      out += "|";
      for (size_t c = 0; c < widths.size(); ++c) {
        const bool is_right = c < right.size() && right[c] == 'r';
        out += std::string(" ") + std::string(std::max<size_t>(3, widths[c]) - 1, '-') +
               (is_right ? ":" : "-") + " |";
      }
      out += "\n";
    }
  }
  return out;
}

std::string TextHeading(std::string_view title, const TextStyle& style, int level) {
  if (style.markdown) return fmt::format("\n{} {}\n\n", std::string(level, '#'), title);
  return fmt::format("\n{}\n\n", Strong(fmt::format("■ {}", title), style));
}

std::string Strong(std::string_view text, const TextStyle& style) {
  if (style.markdown) return fmt::format("**{}**", text);
  if (style.color) return fmt::format("{}{}{}", kBold, text, kReset);
  return std::string(text);
}

std::string SeverityTag(Severity severity, const TextStyle& style) {
  const std::string tag = fmt::format("[{}]", SeverityName(severity));
  if (style.markdown || !style.color) return tag;
  const std::string_view color = severity == Severity::kCritical  ? "\x1b[1;31m"
                                 : severity == Severity::kWarning ? "\x1b[1;33m"
                                                                  : "\x1b[2m";
  return fmt::format("{}{}{}", color, tag, kReset);
}

std::string FormatKwh(int64_t mj) {
  const double kwh = static_cast<double>(mj) / 3.6e9;
  if (mj == 0) return "0";
  return kwh >= 100 ? fmt::format("{:.0f}", kwh)
         : kwh >= 1 ? fmt::format("{:.1f}", kwh)
                    : fmt::format("{:.3f}", kwh);
}

std::string FormatEnergy(int64_t mj) {
  if (mj >= 3'600'000'000) return FormatKwh(mj) + " kWh";
  if (mj >= 3'600'000) return fmt::format("{:.1f} Wh", static_cast<double>(mj) / 3.6e6);
  return fmt::format("{:.0f} J", static_cast<double>(mj) / 1e3);
}

std::string IdleHeldReconciledSentence(std::string_view total, std::string_view bursts,
                                       std::string_view steady) {
  return fmt::format(
      "Idle-held, reconciled: {} = {} of short pauses on bursty GPUs (inside busy work: the "
      "input-pipeline finding) + {} on the other GPUs (the idle-held finding)",
      total, bursts, steady);
}

std::string Co2eLine(const EnergyBlock& e) {
  if (!e.grid_g_per_kwh) return "";
  return fmt::format("CO2e {:.1f} kg at {:g} g/kWh (--grid-intensity), of which idle {:.1f} kg\n",
                     *e.Co2eKg(e.total_mj), *e.grid_g_per_kwh, *e.Co2eKg(e.idle_mj));
}

std::string ElectricityLine(const EnergyBlock& e) {
  if (!e.price_per_kwh) return "";
  return fmt::format(
      "Electricity {} at {}/kWh (--energy-price), of which idle {}: beside the GPU-time dollars, "
      "not in them\n",
      FormatUsd(*e.CostOf(e.total_mj)), FormatUsd(*e.price_per_kwh, 3),
      FormatUsd(*e.CostOf(e.idle_mj)));
}

}  // namespace cgov
