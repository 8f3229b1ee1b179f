#include "report/history_who_table.h"

#include <fmt/format.h>

#include "report/text_style.h"

namespace cgov {
namespace {

double Hours(int64_t ms) { return static_cast<double>(ms) / 3'600'000.0; }

}  // namespace

std::vector<HistoryWhoColumn> HistoryWhoColumns(const HistorySummary& s) {
  using K = HistoryWhoColumn::Kind;
  std::vector<HistoryWhoColumn> out = {
      {HistoryByName(s.by), K::kKey}, {"GPU-h held", K::kHeld}, {"Idle-held h", K::kIdleHeld},
      {"Share %", K::kShare},         {"Cost", K::kCost},       {"Idle-held $", K::kIdleHeldCost}};
  if (s.energy.known_ms > 0) {
    out.insert(out.end(), {{"kWh", K::kEnergy}, {"Idle-held kWh", K::kIdleHeldEnergy}});
    if (s.energy.grid_g_per_kwh) out.push_back({"CO2e kg", K::kCo2e});
    if (s.energy.price_per_kwh) out.push_back({"Energy $", K::kEnergyCost});
  }
  return out;
}

std::vector<HistoryWhoRow> HistoryWhoRows(const HistorySummary& s) {
  std::vector<HistoryWhoRow> out;
  for (size_t i = 0; i < s.who.size(); ++i) out.push_back({&s.who[i], i});
  if (s.unattributed_ms > 0) out.push_back({});
  return out;
}

std::string HistoryWhoCellText(const HistorySummary& s, const HistoryWhoColumn& c,
                               const HistoryWhoRow& r) {
  using K = HistoryWhoColumn::Kind;
  const WhoRow* w = r.who;
  auto money = [&](MicroUsd v) { return s.cost.priced ? FormatUsd(v) : std::string("—"); };
  const int64_t energy_mj = w ? w->energy_mj : s.energy.unattributed_mj;
  switch (c.kind) {
    case K::kKey: {
      if (!w) return "(no compute process)";
      std::string key = w->key.empty() ? "(unknown)" : w->key;
      if (s.by != HistoryBy::kUser && !w->users.empty()) {
        std::string users;
        for (const std::string& u : w->users) users += (users.empty() ? "" : ",") + u;
        key += " (" + users + ")";
      }
      return key;
    }
    case K::kHeld:
      return fmt::format("{:.2f}", Hours(w ? w->held_ms : s.unattributed_ms));
    case K::kIdleHeld:
      return w ? fmt::format("{:.2f}", Hours(w->idle_held_ms)) : "—";
    case K::kShare:
      return fmt::format("{:.1f}", w ? w->share_pct : s.unattributed_share_pct);
    case K::kCost:
      return money(w ? w->cost : s.unattributed_cost);
    case K::kIdleHeldCost:
      return w ? money(w->idle_held_cost) : "—";
    case K::kEnergy:
      return FormatKwh(energy_mj);
    case K::kIdleHeldEnergy:
      return w ? FormatKwh(w->idle_held_energy_mj) : "—";
    case K::kCo2e: {
      const std::optional<double> kg = s.energy.Co2eKg(energy_mj);
      return w && kg ? fmt::format("{:.1f}", *kg) : "—";
    }
    case K::kEnergyCost: {
      const std::optional<MicroUsd> usd = s.energy.CostOf(energy_mj);
      return w && usd ? FormatUsd(*usd) : "—";
    }
  }
  return "";
}

std::string HistoryWhoCellPointer(const HistoryWhoColumn& c, const HistoryWhoRow& r,
                                  double* scale) {
  using K = HistoryWhoColumn::Kind;
  *scale = 1;
  const std::string at = r.who ? fmt::format("/who/{}/", r.index) : "/unattributed/";
  switch (c.kind) {
    case K::kKey:
      return "";
    case K::kHeld:
      *scale = 1.0 / 3600;
      return at + (r.who ? "held_seconds" : "gpu_seconds");
    case K::kIdleHeld:
      *scale = 1.0 / 3600;
      return r.who ? at + "idle_held_seconds" : "";
    case K::kShare:
      return at + "share_pct";
    case K::kCost:
      return at + "cost_usd";
    case K::kIdleHeldCost:
      return r.who ? at + "idle_held_cost_usd" : "";
    case K::kEnergy:
      *scale = 1.0 / 3.6e6;
      return at + "energy_joules";
    case K::kIdleHeldEnergy:
      *scale = 1.0 / 3.6e6;
      return r.who ? at + "idle_held_energy_joules" : "";
    case K::kCo2e:
      return r.who ? at + "co2e_kg" : "";
    case K::kEnergyCost:
      return r.who ? at + "energy_cost_usd" : "";
  }
  return "";
}

}  // namespace cgov
