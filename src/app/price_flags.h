// The pricing flags `cgov run` and `cgov report` share: --price-catalog, --price-per-gpu-hour,
// --instance-type, --spot. Validated before any work starts (a typo must not price at zero).
#ifndef CGOV_APP_PRICE_FLAGS_H_
#define CGOV_APP_PRICE_FLAGS_H_

#include <optional>
#include <string>
#include <string_view>

#include "analysis/pricing.h"

namespace cgov {

// Loads `catalog_path` (the built-in catalog when empty) into *catalog, parses `price_text` (when
// non-empty) into price->price_per_gpu_hour and checks price->instance_type against the catalog.
// Errors name the flag and the file.
Status ApplyPriceFlags(const std::string& catalog_path, const std::string& price_text,
                       PriceOptions* price, PriceCatalog* catalog);

// The same, for a caller that leaves the built-in catalog unparsed until it is used (`cgov run`:
// parsing it costs ~1 ms before the job could start). *loaded holds `catalog_path`'s catalog, or
// stays empty without one: then the built-in catalog applies (BuiltinCatalog(), parsed here only
// when price->instance_type must be checked against it).
Status ApplyPriceFlags(const std::string& catalog_path, const std::string& price_text,
                       PriceOptions* price, std::optional<PriceCatalog>* loaded);

// --grid-intensity G: grams of CO2e a kWh, a plain finite number, 0 to 2,000 (the dirtiest grids
// publish ~1,100). The error names the flag.
Result<double> ParseGridIntensity(std::string_view text);

// --energy-price USD: dollars a kWh of electricity, ParseUsd's strict decimal, 0 to 10 (retail
// electricity is cents to a dollar a kWh). The error names the flag.
Result<MicroUsd> ParseEnergyPrice(std::string_view text);

}  // namespace cgov

#endif  // CGOV_APP_PRICE_FLAGS_H_
