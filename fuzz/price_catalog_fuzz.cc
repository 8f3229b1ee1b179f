// A price catalog (--price-catalog FILE): any bytes. It parses or is refused with an error that
// names the file; a parsed catalog never holds a price above the documented bound, and pricing
// a GPU from it (whole, or a MIG share) never wraps.
#include <cstdint>
#include <string_view>

#include "analysis/pricing.h"
#include "core/money.h"
#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

namespace {

void CheckPrice(const std::optional<MicroUsd>& price) {
  if (price) FUZZ_CHECK(*price >= 0 && *price <= kMaxPriceMicroUsd);
}

void CheckResolved(const ResolvedPrice& p) {
  CheckPrice(p.per_gpu_hour);
  CheckPrice(p.on_demand);
  CheckPrice(p.spot);
  if (p.per_gpu_hour) {
    const MicroUsd year = CostOf(*p.per_gpu_hour, int64_t{365} * 24 * 3600 * 1000);
    FUZZ_CHECK(year >= 0);
  }
}

}  // namespace

CGOV_FUZZ_TARGET(price_catalog_fuzz) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<PriceCatalog> catalog = ParsePriceCatalog(text, "fuzz.json");
  if (!catalog.ok()) {
    FUZZ_CHECK(catalog.status().message().starts_with("fuzz.json"));
    FUZZ_CHECK(IsSafeText(catalog.status().message()));
    return 0;
  }
  for (const InstanceType& t : catalog->instance_types) {
    CheckPrice(t.price.on_demand);
    CheckPrice(t.price.spot);
    for (bool spot : {false, true}) {
      Result<ResolvedPrice> p = ResolvePrice({std::nullopt, t.name, spot}, "", *catalog);
      if (p.ok()) CheckResolved(*p);
    }
  }
  for (const GpuModelPrice& m : catalog->gpu_models) {
    for (const CatalogOffer& o : m.offers) {
      CheckPrice(o.price.on_demand);
      CheckPrice(o.price.spot);
    }
    for (const ReferencePrice* r : {&m.on_demand, &m.spot}) {
      CheckPrice(r->median);
      if (r->median) FUZZ_CHECK(r->low <= *r->median && *r->median <= r->high);
    }
    for (const std::string& match : m.match) {
      for (std::optional<uint64_t> mib :
           {std::optional<uint64_t>(), std::optional<uint64_t>(81920)}) {
        Result<ResolvedPrice> p = ResolvePrice({}, "NVIDIA " + match + " 80GB", *catalog, mib);
        if (!p.ok()) continue;
        CheckResolved(*p);
        CheckResolved(ShareOfPrice(*p, 3.0 / 7.0, "MIG 3g.40gb"));
      }
    }
  }
  return 0;
}
