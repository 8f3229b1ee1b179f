#include "cli/prices.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/price_flags.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "core/json_writer.h"
#include "core/text.h"

namespace cgov::cli {
namespace {

using nlohmann::json;

std::string Usd(const std::optional<MicroUsd>& price) {
  if (!price) return "-";
  return FormatUsd(*price, *price % 10'000 == 0 ? 2 : 4);
}

json UsdJson(const std::optional<MicroUsd>& price) {
  return price ? json(static_cast<double>(*price) / kMicroPerUsd) : json(nullptr);
}

std::string Range(const ReferencePrice& r) {
  if (!r.median) return "-";
  return r.low == r.high ? Usd(r.low) : Usd(r.low) + "–" + Usd(r.high);
}

std::string AsOf(const ReferencePrice& r) {
  if (!r.median) return "-";
  return r.oldest_as_of == r.newest_as_of ? r.oldest_as_of : r.oldest_as_of + "…" + r.newest_as_of;
}

std::string Text(const PriceCatalog& catalog, const std::string& from,
                 const std::vector<std::pair<std::string, ResolvedPrice>>& resolved) {
  // The answer first (--gpu), then the catalog it came from.
  std::string out;
  if (!resolved.empty()) out += "Resolved\n";
  for (const auto& [gpu, price] : resolved) {
    out += price.per_gpu_hour
               ? fmt::format("  {}: {}/GPU-hour ({})\n", SafeText(gpu),
                             FormatUsd(*price.per_gpu_hour, 4), SafeText(price.Describe()))
               : fmt::format("  {}: {}\n", SafeText(gpu), SafeText(price.Describe()));
  }
  if (!resolved.empty()) out += "\n";
  out += fmt::format(
      "Price catalog: {} (USD per GPU-hour)\n\nReference prices: the median over providers of "
      "each provider's lowest list price, and their range; spot: the on-demand reference less the "
      "median of the providers' own spot discounts (none listed: -)\n",
      from);
  out += fmt::format("  {:<16} {:>9} {:<17} {:>5} {:>9}  {:<21} {}\n", "MODEL", "ON-DEMAND",
                     "RANGE", "PROVS", "SPOT", "AS OF", "MATCHES (NVML NAME)");
  for (const GpuModelPrice& m : catalog.gpu_models) {
    std::string matches;
    for (const std::string& s : m.match) matches += (matches.empty() ? "" : ", ") + SafeText(s);
    if (m.memory_gb) matches += fmt::format(" ({} GB)", *m.memory_gb);
    out += fmt::format("  {:<16} {:>9} {:<17} {:>5} {:>9}  {:<21} {}\n", SafeText(m.label),
                       Usd(m.on_demand.median), Range(m.on_demand), m.on_demand.providers,
                       Usd(m.spot.median), AsOf(m.on_demand), matches);
  }
  out += "\nOffers (the listed price / the GPUs it buys)\n";
  out += fmt::format("  {:<16} {:<8} {:<34} {:>4} {:>9} {:>9}  {:<10} {}\n", "MODEL", "PROVIDER",
                     "INSTANCE OR REGION", "GPUS", "ON-DEMAND", "SPOT", "AS OF", "SOURCE");
  for (const GpuModelPrice& m : catalog.gpu_models) {
    for (const CatalogOffer& o : m.offers) {
      const std::string where =
          o.instance_type.empty() ? o.region : o.instance_type + " " + o.region;
      out += fmt::format("  {:<16} {:<8} {:<34} {:>4} {:>9} {:>9}  {:<10} {}\n", SafeText(m.label),
                         SafeText(o.provider), SafeText(where), o.gpus, Usd(o.price.on_demand),
                         Usd(o.price.spot), SafeText(o.price.as_of), SafeText(o.price.source));
    }
    if (m.offers.empty()) {
      out += fmt::format("  {:<16} (no provider price found: pass --price-per-gpu-hour)\n",
                         SafeText(m.label));
    }
  }
  // Instance types a version-1 catalog lists beside its models (version 2 lists them as offers).
  bool header = false;
  for (const InstanceType& t : catalog.instance_types) {
    bool listed = false;
    for (const GpuModelPrice& m : catalog.gpu_models) {
      for (const CatalogOffer& o : m.offers) listed = listed || o.instance_type == t.name;
    }
    if (listed) continue;
    if (!header) {
      out += "\nInstance types (the instance's price / its GPUs)\n";
      header = true;
    }
    out += fmt::format("  {:<24} {:>4} {:<24} {:>9} {:>9}  {}\n", SafeText(t.name), t.gpus,
                       SafeText(t.gpu_model), Usd(t.price.on_demand), Usd(t.price.spot),
                       SafeText(t.price.as_of));
  }
  return out;
}

json ReferenceJson(const ReferencePrice& r, bool spot = false) {
  if (!r.median) return nullptr;
  json out = {{"usd_per_gpu_hour", UsdJson(r.median)}, {"low_usd", UsdJson(r.low)},
              {"high_usd", UsdJson(r.high)},           {"providers", r.providers},
              {"as_of_oldest", r.oldest_as_of},        {"as_of_newest", r.newest_as_of}};
  if (spot) out["discount_fraction"] = r.discount;  // applied to the on-demand reference
  return out;
}

json Json(const PriceCatalog& catalog, const std::string& from,
          const std::vector<std::pair<std::string, ResolvedPrice>>& resolved) {
  json out = {{"catalog", from},
              {"gpu_models", json::array()},
              {"instance_types", json::array()},
              {"resolved", json::array()}};
  for (const GpuModelPrice& m : catalog.gpu_models) {
    json offers = json::array();
    for (const CatalogOffer& o : m.offers) {
      offers.push_back(
          {{"provider", o.provider},
           {"region", o.region},
           {"instance_type", o.instance_type.empty() ? json(nullptr) : json(o.instance_type)},
           {"gpus", o.gpus},
           {"on_demand_usd_per_gpu_hour", UsdJson(o.price.on_demand)},
           {"spot_usd_per_gpu_hour", UsdJson(o.price.spot)},
           {"source", o.price.source},
           {"as_of", o.price.as_of}});
    }
    out["gpu_models"].push_back({{"model", m.model},
                                 {"label", m.label},
                                 {"match", m.match},
                                 {"memory_gb", m.memory_gb ? json(*m.memory_gb) : json(nullptr)},
                                 {"on_demand_reference", ReferenceJson(m.on_demand)},
                                 {"spot_reference", ReferenceJson(m.spot, true)},
                                 {"offers", std::move(offers)}});
  }
  for (const InstanceType& t : catalog.instance_types) {
    out["instance_types"].push_back({{"name", t.name},
                                     {"gpus", t.gpus},
                                     {"gpu_model", t.gpu_model},
                                     {"provider", t.provider},
                                     {"region", t.region},
                                     {"on_demand_usd_per_gpu_hour", UsdJson(t.price.on_demand)},
                                     {"spot_usd_per_gpu_hour", UsdJson(t.price.spot)},
                                     {"source", t.price.source},
                                     {"as_of", t.price.as_of}});
  }
  for (const auto& [gpu, price] : resolved) {
    out["resolved"].push_back({{"gpu", gpu},
                               {"usd_per_gpu_hour", UsdJson(price.per_gpu_hour)},
                               {"source", price.Describe()}});
  }
  return out;
}

}  // namespace

int RunPrices(int argc, char** argv) {
  CLI::App app{
      "List the price catalog cgov prices GPUs with, and which entry a GPU name resolves to. Every "
      "price is per GPU-hour, with its source and date.",
      "cgov prices"};
  std::string catalog_path, format = "text";
  std::vector<std::string> gpus;
  PriceOptions options;
  if (const char* env = std::getenv("CGOV_PRICE_CATALOG")) catalog_path = env;
  app.add_option("--price-catalog", catalog_path,
                 "a catalog file in data/prices.json's format (env CGOV_PRICE_CATALOG; default: "
                 "the one built in)");
  app.add_option("--gpu", gpus,
                 "a GPU name as NVML reports it (nvidia-smi --query-gpu=name): show the price it "
                 "resolves to; repeatable");
  app.add_flag("--spot", options.spot, "resolve --gpu names to spot prices");
  app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  PriceCatalog catalog;
  if (Status s = ApplyPriceFlags(catalog_path, "", &options, &catalog); !s.ok()) {
    fmt::print(stderr, "cgov prices: {}\n", s.message());
    return kExitFailure;
  }
  std::vector<std::pair<std::string, ResolvedPrice>> resolved;
  for (const std::string& gpu : gpus) {
    Result<ResolvedPrice> price = ResolvePrice(options, gpu, catalog);
    if (!price.ok()) {
      fmt::print(stderr, "cgov prices: {}\n", price.status().message());
      return kExitFailure;
    }
    resolved.emplace_back(gpu, *price);
  }
  const std::string from = catalog_path.empty() ? "built in (data/prices.json)" : catalog_path;
  if (format == "json") {
    fmt::print("{}\n", DumpJson(Json(catalog, from, resolved), 2));
  } else {
    fmt::print("{}", Text(catalog, from, resolved));
  }
  return kExitOk;
}

}  // namespace cgov::cli
