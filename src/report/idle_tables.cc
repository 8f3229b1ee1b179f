#include "report/idle_tables.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/time_format.h"

namespace cgov {
namespace {

std::string IdleCost(const HistorySummary& s, MicroUsd v) {
  return s.cost.priced ? FormatUsd(v) : "—";
}

// The pointers a day's or a host's figures share: its idle hours and their cost.
std::string IdlePointer(const std::string& at, const IdleColumn& c, double* scale) {
  *scale = 1;
  switch (c.kind) {
    case IdleColumn::Kind::kHours:
      *scale = 1.0 / 3600;
      return at + "idle_gpu_seconds";
    case IdleColumn::Kind::kCost:
      return at + "idle_cost_usd";
    case IdleColumn::Kind::kGpus:
      return at + "gpus";
    default:
      return "";
  }
}

}  // namespace

bool ShowsIdleByDay(const HistorySummary& s) { return s.idle_by_day.size() >= 2; }
bool ShowsIdleByHost(const HistorySummary& s) { return s.idle_by_host.size() >= 2; }

std::vector<IdleColumn> IdleByDayColumns(bool bars) {
  using K = IdleColumn::Kind;
  std::vector<IdleColumn> out = {
      {"Day (UTC)", K::kDay}, {"Idle GPU-hours", K::kHours}, {"Cost", K::kCost}};
  if (bars) out.push_back({"", K::kBar});
  return out;
}

std::vector<IdleColumn> IdleByHostColumns() {
  using K = IdleColumn::Kind;
  return {
      {"Host", K::kHost}, {"GPUs", K::kGpus}, {"Idle GPU-hours", K::kHours}, {"Cost", K::kCost}};
}

std::string IdleByDayCellText(const HistorySummary& s, const IdleColumn& c, size_t i) {
  const IdleDay& d = s.idle_by_day[i];
  switch (c.kind) {
    case IdleColumn::Kind::kDay:
      return FormatDateUtc(d.day_start_ms);
    case IdleColumn::Kind::kHours:
      return fmt::format("{:.2f}", HoursOf(d.idle_ms));
    case IdleColumn::Kind::kCost:
      return IdleCost(s, d.idle_cost);
    case IdleColumn::Kind::kBar: {  // 20 blocks for the idlest day
      int64_t most = 1;
      for (const IdleDay& other : s.idle_by_day) most = std::max(most, other.idle_ms);
      const size_t n = static_cast<size_t>(
          20.0 * static_cast<double>(d.idle_ms) / static_cast<double>(most) + 0.5);
      std::string bar;
      for (size_t b = 0; b < n; ++b) bar += "▇";
      return bar;
    }
    default:
      return "";
  }
}

std::string IdleByHostCellText(const HistorySummary& s, const IdleColumn& c, size_t i) {
  const IdleHost& h = s.idle_by_host[i];
  switch (c.kind) {
    case IdleColumn::Kind::kHost:
      return h.host;
    case IdleColumn::Kind::kGpus:
      return std::to_string(h.gpus);
    case IdleColumn::Kind::kHours:
      return fmt::format("{:.2f}", HoursOf(h.idle_ms));
    case IdleColumn::Kind::kCost:
      return IdleCost(s, h.idle_cost);
    default:
      return "";
  }
}

std::string IdleByDayCellPointer(const IdleColumn& c, size_t i, double* scale) {
  return IdlePointer(fmt::format("/idle_by_day/{}/", i), c, scale);
}

std::string IdleByHostCellPointer(const IdleColumn& c, size_t i, double* scale) {
  return IdlePointer(fmt::format("/idle_by_host/{}/", i), c, scale);
}

}  // namespace cgov
