#include "app/price_flags.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/from_chars.h"
#include "core/text.h"
#include "os/env.h"
#include "os/input_file.h"

namespace cgov {

Status ApplyPriceFlags(const std::string& catalog_path, const std::string& price_text,
                       PriceOptions* price, std::optional<PriceCatalog>* loaded) {
  loaded->reset();
  if (!catalog_path.empty()) {
    const std::string context = "--price-catalog";
    // The shipped catalog is a few KB; 16 MiB leaves room for any real one.
    CGOV_ASSIGN_OR_RETURN(std::string text,
                          Env::Default()->ReadUserFile(catalog_path, 16 << 20, context));
    Result<PriceCatalog> parsed = ParsePriceCatalog(text, catalog_path);
    if (!parsed.ok()) return parsed.status().WithContext(context);
    *loaded = std::move(parsed).value();
  }
  if (!price_text.empty()) {
    Result<MicroUsd> usd = ParseUsd(price_text);
    if (!usd.ok()) return usd.status().WithContext("--price-per-gpu-hour");
    price->price_per_gpu_hour = *usd;
  }
  if (!price->instance_type.empty()) {
    Result<ResolvedPrice> check =
        ResolvePrice(*price, "", loaded->has_value() ? **loaded : BuiltinCatalog());
    if (!check.ok()) return check.status();
  }
  return Status::Ok();
}

Status ApplyPriceFlags(const std::string& catalog_path, const std::string& price_text,
                       PriceOptions* price, PriceCatalog* catalog) {
  std::optional<PriceCatalog> loaded;
  CGOV_RETURN_IF_ERROR(ApplyPriceFlags(catalog_path, price_text, price, &loaded));
  *catalog = loaded.has_value() ? std::move(*loaded) : BuiltinCatalog();
  return Status::Ok();
}

Result<double> ParseGridIntensity(std::string_view text) {
  double g = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = FromChars(text.data(), end, g);
  if (ec != std::errc() || ptr != end || !std::isfinite(g) || g < 0 || g > 2000) {
    return InvalidArgument(
        fmt::format("--grid-intensity {}: expected grams of CO2e a kWh, 0 to 2000 (your grid "
                    "operator's or region's published average; none is assumed)",
                    SafeText(text)));
  }
  return g;
}

Result<MicroUsd> ParseEnergyPrice(std::string_view text) {
  Result<MicroUsd> usd = ParseUsd(text);
  if (!usd.ok() || *usd > 10 * kMicroPerUsd) {
    return InvalidArgument(
        fmt::format("--energy-price {}: expected dollars a kWh of electricity, 0 to 10 (0.12, "
                    "0.085); none is assumed",
                    SafeText(text)));
  }
  return *usd;
}

}  // namespace cgov
