#include "cli/prices.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command_table.h"
#include "cli/price_flags.h"
#include "core/json_writer.h"
#include "core/text.h"

namespace cgov::cli {
namespace {

using nlohmann::json;

std::string Usd(const std::optional<MicroUsd>& price) {
  return price ? FormatUsd(*price, 4) : "-";
}

json UsdJson(const std::optional<MicroUsd>& price) {
  return price ? json(static_cast<double>(*price) / kMicroPerUsd) : json(nullptr);
}

std::string Text(const PriceCatalog& catalog, const std::string& from,
                 const std::vector<std::pair<std::string, ResolvedPrice>>& resolved) {
  std::string out = fmt::format("Price catalog: {} (USD per GPU-hour)\n\nGPU models\n", from);
  out += fmt::format("  {:<24} {:<18} {:>10} {:>10}  {:<11} {}\n", "MODEL", "MATCHES", "ON-DEMAND",
                     "SPOT", "AS OF", "SOURCE");
  for (const GpuModelPrice& m : catalog.gpu_models) {
    std::string matches;
    for (const std::string& s : m.match) matches += (matches.empty() ? "" : ", ") + SafeText(s);
    out += fmt::format("  {:<24} {:<18} {:>10} {:>10}  {:<11} {}\n", SafeText(m.model), matches,
                       Usd(m.price.on_demand), Usd(m.price.spot), SafeText(m.price.as_of),
                       SafeText(m.price.source));
  }
  out += fmt::format("\nInstance types (the instance's price / its GPUs)\n");
  out += fmt::format("  {:<24} {:>4} {:<24} {:>10} {:>10}  {}\n", "NAME", "GPUS", "GPU MODEL",
                     "ON-DEMAND", "SPOT", "AS OF");
  for (const InstanceType& t : catalog.instance_types) {
    out += fmt::format("  {:<24} {:>4} {:<24} {:>10} {:>10}  {}\n", SafeText(t.name), t.gpus,
                       SafeText(t.gpu_model), Usd(t.price.on_demand), Usd(t.price.spot),
                       SafeText(t.price.as_of));
  }
  if (!resolved.empty()) out += "\nResolved\n";
  for (const auto& [gpu, price] : resolved) {
    out += price.per_gpu_hour
               ? fmt::format("  {}: {}/GPU-hour ({})\n", SafeText(gpu),
                             FormatUsd(*price.per_gpu_hour, 4), price.Describe())
               : fmt::format("  {}: {}\n", SafeText(gpu), price.Describe());
  }
  return out;
}

json Json(const PriceCatalog& catalog, const std::string& from,
          const std::vector<std::pair<std::string, ResolvedPrice>>& resolved) {
  json out = {{"catalog", from}, {"gpu_models", json::array()}, {"instance_types", json::array()},
              {"resolved", json::array()}};
  for (const GpuModelPrice& m : catalog.gpu_models) {
    out["gpu_models"].push_back({{"model", m.model}, {"match", m.match},
                                 {"on_demand_usd_per_gpu_hour", UsdJson(m.price.on_demand)},
                                 {"spot_usd_per_gpu_hour", UsdJson(m.price.spot)},
                                 {"source", m.price.source}, {"as_of", m.price.as_of}});
  }
  for (const InstanceType& t : catalog.instance_types) {
    out["instance_types"].push_back({{"name", t.name}, {"gpus", t.gpus}, {"gpu_model", t.gpu_model},
                                     {"on_demand_usd_per_gpu_hour", UsdJson(t.price.on_demand)},
                                     {"spot_usd_per_gpu_hour", UsdJson(t.price.spot)},
                                     {"source", t.price.source}, {"as_of", t.price.as_of}});
  }
  for (const auto& [gpu, price] : resolved) {
    out["resolved"].push_back({{"gpu", gpu}, {"usd_per_gpu_hour", UsdJson(price.per_gpu_hour)},
                               {"source", price.Describe()}});
  }
  return out;
}

}  // namespace

int RunPrices(int argc, char** argv) {
  CLI::App app{"List the price catalog cgov prices GPUs with, and which entry a GPU name resolves "
               "to. Every price is per GPU-hour, with its source and date.",
               "cgov prices"};
  std::string catalog_path, format = "text";
  std::vector<std::string> gpus;
  PriceOptions options;
  if (const char* env = std::getenv("CGOV_PRICE_CATALOG")) catalog_path = env;
  app.add_option("--price-catalog", catalog_path,
                 "a catalog file in data/prices.json's format (env CGOV_PRICE_CATALOG; default: "
                 "the one built in)");
  app.add_option("--gpu", gpus, "a GPU name as NVML reports it (nvidia-smi --query-gpu=name): "
                 "show the price it resolves to; repeatable");
  app.add_flag("--spot", options.spot, "resolve --gpu names to spot prices");
  app.add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
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
