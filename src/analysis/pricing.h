// The price of a GPU-hour: from the user, an instance type, or the catalog (data/prices.json),
// in that order, and otherwise explicitly unknown (never a silent default).
#ifndef CGOV_ANALYSIS_PRICING_H_
#define CGOV_ANALYSIS_PRICING_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/money.h"
#include "core/status.h"
#include "telemetry/gpu_sample.h"

namespace cgov {

struct CatalogPrice {
  std::optional<MicroUsd> on_demand;  // per GPU-hour
  std::optional<MicroUsd> spot;       // per GPU-hour; null in the shipped catalog
  std::string source;
  std::string as_of;
};

struct InstanceType {
  std::string name;
  int gpus = 0;
  std::string gpu_model;
  CatalogPrice price;  // per GPU-hour (the instance's hourly price / gpus)
};

struct GpuModelPrice {
  std::string model;
  std::vector<std::string> match;  // substrings of NVML's device name
  CatalogPrice price;
};

struct PriceCatalog {
  std::vector<InstanceType> instance_types;
  std::vector<GpuModelPrice> gpu_models;
};

// Parses catalog JSON; errors name the file and the field ("prices.json: gpu_models[2].as_of").
Result<PriceCatalog> ParsePriceCatalog(std::string_view text, std::string_view file);
// True when `needle` stands in `text` as a whole word (no letter or digit right before or after
// it): how a catalog `match` finds a GPU name ("L4" in "NVIDIA L4", not in "NVIDIA L40S").
bool ContainsWord(std::string_view text, std::string_view needle);
// The catalog compiled into cgov from data/prices.json.
const PriceCatalog& BuiltinCatalog();

struct PriceOptions {
  std::optional<MicroUsd> price_per_gpu_hour;  // --price-per-gpu-hour
  std::string instance_type;                   // --instance-type
  bool spot = false;                           // --spot
};

// The price that applies to one GPU, with where it came from.
struct ResolvedPrice {
  std::optional<MicroUsd> per_gpu_hour;  // nullopt: unknown
  std::optional<MicroUsd> on_demand;     // the catalog's on-demand price, when known
  std::optional<MicroUsd> spot;          // the catalog's spot price, when known
  bool is_spot = false;
  std::string source;  // "--price-per-gpu-hour", "catalog: p5.48xlarge (…)", or why unknown
  // A part of a GPU priced at its share of `source`'s price: "MIG 3g.40gb at 49.3 %"; empty for
  // a whole GPU.
  std::string part;
  // `source` with the part, if any: "MIG 3g.40gb at 49.3 % of catalog list price: …".
  std::string Describe() const { return part.empty() ? source : part + " of " + source; }
};

// The instance type in a metadata answer: AWS answers "p5.48xlarge", GCP
// "projects/123/machineTypes/a2-highgpu-1g" (the last path segment). Empty when none.
std::string InstanceTypeFromMetadata(std::string_view body);

// Resolution order: explicit price, instance type, catalog entry whose `match` is a substring of
// `gpu_name`, else unknown. An unknown --instance-type is an error (a typo must not price at 0).
Result<ResolvedPrice> ResolvePrice(const PriceOptions& options, std::string_view gpu_name,
                                   const PriceCatalog& catalog);

// A part of a GPU (a MIG instance) costs its share of the GPU's price: every price in `whole`
// times `share` (0 < share <= 1), the source saying so (`what`: "MIG 3g.40gb"). A share of 0
// (unknown) leaves the part unpriced, never free.
ResolvedPrice ShareOfPrice(const ResolvedPrice& whole, double share, std::string_view what);

// The price of one sampled unit: a whole GPU by its name; a MIG instance as its share of its
// parent GPU's price (the parent's name is what the catalog knows).
Result<ResolvedPrice> ResolveUnitPrice(const PriceOptions& options, std::string_view gpu_name,
                                       const std::optional<MigInstance>& mig,
                                       const PriceCatalog& catalog);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_PRICING_H_
