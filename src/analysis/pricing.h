// The price of a GPU-hour: from the user, an instance type, or the catalog (data/prices.json),
// in that order, and otherwise explicitly unknown (never a silent default).
#ifndef CGOV_ANALYSIS_PRICING_H_
#define CGOV_ANALYSIS_PRICING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"
#include "core/status.h"
#include "telemetry/gpu_sample.h"

namespace cgov {

struct CatalogPrice {
  std::optional<MicroUsd> on_demand;  // per GPU-hour
  std::optional<MicroUsd> spot;       // per GPU-hour; null where the provider lists none
  std::string source;
  std::string as_of;
};

// One provider's listed price for a GPU model: a per-GPU listing or an instance type.
struct CatalogOffer {
  std::string provider;       // "aws", "runpod"
  std::string region;         // "us-east-1", "Community Cloud"
  std::string instance_type;  // "p5.48xlarge"; empty for a per-GPU listing
  int gpus = 1;               // GPUs the listed price buys
  CatalogPrice price;         // per GPU-hour (the listed price / gpus)
};

// The middle of the providers' prices for one model and their spread: each provider counts
// once, at its lowest listed price per GPU-hour.
struct ReferencePrice {
  std::optional<MicroUsd> median;  // nullopt: no provider lists one
  MicroUsd low = 0, high = 0;
  int providers = 0;
  // Spot only: the median of the providers' spot discounts (1 - spot / on-demand, each from one
  // offer that lists both), which `median` applies to the on-demand reference; low and high apply
  // the largest and the smallest discount.
  double discount = 0, discount_low = 0, discount_high = 0;
  std::string oldest_as_of, newest_as_of;
  // Spot, when one provider's discount is the reference: the offer it was taken from (the one
  // the discount was computed on, not merely the first listing a spot price).
  std::string offer_provider, offer_source;
  MicroUsd offer_spot = 0, offer_on_demand = 0;
};

struct InstanceType {
  std::string name;
  int gpus = 0;
  std::string gpu_model;
  std::string provider, region;
  CatalogPrice price;  // per GPU-hour (the instance's hourly price / gpus)
};

struct GpuModelPrice {
  std::string model;               // the NVML name of the model
  std::string label;               // how a report names it: "H100 SXM 80GB"
  std::vector<std::string> match;  // whole words of NVML's device name
  std::optional<int> memory_gb;    // tells variants apart when the name does not
  std::vector<CatalogOffer> offers;
  ReferencePrice on_demand, spot;  // computed from `offers`
};

struct PriceCatalog {
  std::vector<InstanceType> instance_types;  // the offers that name an instance type
  std::vector<GpuModelPrice> gpu_models;
};

// The reference of a set of offers: per provider its lowest price, then the median of those
// (the mean of the middle two for an even count, rounded to the micro-dollar).
ReferencePrice ReferenceOf(const std::vector<CatalogOffer>& offers, bool spot);

// The spot reference of a model: a spot price is compared only with its own provider's on-demand
// price. Per provider, the discount of its offer with the lowest on-demand price among those that
// list both; the median discount (the mean of the middle two) is applied to `on_demand`. No
// provider with a discount above zero: no spot reference (a spot price is never above on-demand).
ReferencePrice SpotReferenceOf(const std::vector<CatalogOffer>& offers,
                               const ReferencePrice& on_demand);

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
  // `source` in a few words, for a metric label (a label value is an index key in every
  // Prometheus that scrapes it, so no prose): "--price-per-gpu-hour", "instance-type
  // p5.48xlarge", "catalog H100 SXM 80GB (spot)", "unknown".
  std::string label;
  // `label` with the part, if any: "catalog H100 SXM 80GB, MIG 3g.40gb at 49.3 %".
  std::string Label() const { return part.empty() ? label : label + ", " + part; }
};

// Resolution order: explicit price, instance type, the reference price of the catalog model
// whose `match` stands in `gpu_name` as a whole word (the longest match wins; a model whose
// memory_gb disagrees with the GPU's memory, when known, is passed over), else unknown. An
// unknown --instance-type is an error (a typo must not price at 0).
Result<ResolvedPrice> ResolvePrice(const PriceOptions& options, std::string_view gpu_name,
                                   const PriceCatalog& catalog,
                                   std::optional<uint64_t> memory_mib = std::nullopt);

// The catalog model a GPU name (and memory, when known) resolves to; nullptr when none does or
// two match equally well (*why says which).
const GpuModelPrice* FindModel(const PriceCatalog& catalog, std::string_view gpu_name,
                               std::optional<uint64_t> memory_mib, std::string* why);

// A part of a GPU (a MIG instance) costs its share of the GPU's price: every price in `whole`
// times `share` (0 < share <= 1), the source saying so (`what`: "MIG 3g.40gb"). A share of 0
// (unknown) leaves the part unpriced, never free.
ResolvedPrice ShareOfPrice(const ResolvedPrice& whole, double share, std::string_view what);

// The price of one sampled unit: a whole GPU by its name; a MIG instance as its share of its
// parent GPU's price (the parent's name is what the catalog knows).
Result<ResolvedPrice> ResolveUnitPrice(const PriceOptions& options, std::string_view gpu_name,
                                       const std::optional<MigInstance>& mig,
                                       const PriceCatalog& catalog,
                                       std::optional<uint64_t> memory_mib = std::nullopt);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_PRICING_H_
