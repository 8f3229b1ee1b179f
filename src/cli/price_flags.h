// The pricing flags `cgov run` and `cgov report` share: --price-catalog, --price-per-gpu-hour,
// --instance-type, --spot. Validated before any work starts (a typo must not price at zero).
#ifndef CGOV_CLI_PRICE_FLAGS_H_
#define CGOV_CLI_PRICE_FLAGS_H_

#include <string>
#include <string_view>

#include "analysis/pricing.h"

namespace cgov::cli {

// Loads `catalog_path` (the built-in catalog when empty) into *catalog, parses `price_text` (when
// non-empty) into price->price_per_gpu_hour and checks price->instance_type against the catalog.
// Errors name the flag and the file.
Status ApplyPriceFlags(const std::string& catalog_path,
                       const std::string& price_text, PriceOptions* price, PriceCatalog* catalog);

}  // namespace cgov::cli

#endif  // CGOV_CLI_PRICE_FLAGS_H_
