#include "analysis/pricing.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/text.h"

namespace cgov {

extern const char kBuiltinPriceCatalog[];  // generated from data/prices.json at build time

namespace {

using nlohmann::json;

struct CatalogError {
  std::string where;
  std::string what;
};

const json& Field(const json& object, const char* key, const std::string& where) {
  if (!object.is_object() || !object.contains(key))
    throw CatalogError{where + "." + key, "missing"};
  return object.at(key);
}

std::string Text(const json& object, const char* key, const std::string& where) {
  const json& v = Field(object, key, where);
  if (!v.is_string() || v.get<std::string>().empty()) {
    throw CatalogError{where + "." + key, "must be a non-empty string"};
  }
  return v.get<std::string>();
}

std::optional<MicroUsd> Usd(const json& object, const char* key, const std::string& where,
                            double divide_by = 1) {
  const json& v = Field(object, key, where);
  if (v.is_null()) return std::nullopt;
  // Bounded like --price-per-gpu-hour: a bigger number would wrap the micro-dollar arithmetic.
  const double usd = v.is_number() ? v.get<double>() / divide_by : -1;
  if (!(usd >= 0) || usd * kMicroPerUsd > static_cast<double>(kMaxPriceMicroUsd)) {
    throw CatalogError{
        where + "." + key,
        "must be a number of dollars from 0 to 999999999.999999 per GPU-hour, or null"};
  }
  return static_cast<MicroUsd>(std::llround(usd * kMicroPerUsd));
}

// A price as a person reads it: to the cent when that is exact, else to 1/10000 of a dollar.
std::string PriceText(MicroUsd price) { return FormatUsd(price, price % 10'000 == 0 ? 2 : 4); }

std::vector<std::string> Strings(const json& object, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const json& v = Field(object, key, where);
  if (!v.is_array()) throw CatalogError{where + "." + key, "must be an array of strings"};
  for (const json& s : v) {
    if (!s.is_string() || s.get<std::string>().empty()) {
      throw CatalogError{where + "." + key, "must be an array of non-empty strings"};
    }
    out.push_back(s.get<std::string>());
  }
  return out;
}

const json& Array(const json& object, const char* key, const std::string& where) {
  const json& v = Field(object, key, where);
  if (!v.is_array()) throw CatalogError{where + "." + key, "must be an array"};
  return v;
}

int PositiveInt(const json& object, const char* key, const std::string& where) {
  const json& v = Field(object, key, where);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > 1'000'000) {
    throw CatalogError{where + "." + key, "must be a whole number from 1 to 1000000"};
  }
  return v.get<int>();
}

// What every version says of a model: its NVML name, how reports name it, what matches it.
GpuModelPrice ModelHead(const json& e, const std::string& at) {
  GpuModelPrice m;
  m.model = Text(e, "model", at);
  m.label = e.contains("label") ? Text(e, "label", at) : m.model;
  m.match = Strings(e, "match", at);
  return m;
}

// Version 1: one price per model, instance types beside the models.
void ParseV1(const json& root, PriceCatalog* catalog) {
  const json& instances = Array(root, "instance_types", "(top)");
  for (size_t i = 0; i < instances.size(); ++i) {
    const std::string at = fmt::format("instance_types[{}]", i);
    const json& e = instances[i];
    InstanceType t;
    t.name = Text(e, "name", at);
    t.gpus = PositiveInt(e, "gpus", at);
    t.gpu_model = Text(e, "gpu_model", at);
    t.provider = e.contains("provider") ? Text(e, "provider", at) : "catalog";
    t.price = {Usd(e, "on_demand_usd_per_hour", at, t.gpus),
               Usd(e, "spot_usd_per_hour", at, t.gpus), Text(e, "source", at),
               Text(e, "as_of", at)};
    catalog->instance_types.push_back(std::move(t));
  }
  const json& models = Array(root, "gpu_models", "(top)");
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string at = fmt::format("gpu_models[{}]", i);
    const json& e = models[i];
    GpuModelPrice m = ModelHead(e, at);
    CatalogOffer offer;
    offer.provider = "catalog";
    offer.price = {Usd(e, "on_demand_usd_per_gpu_hour", at), Usd(e, "spot_usd_per_gpu_hour", at),
                   Text(e, "source", at), Text(e, "as_of", at)};
    m.offers.push_back(std::move(offer));
    catalog->gpu_models.push_back(std::move(m));
  }
}

// Version 2: each model with its providers' offers; instance types are offers that name one.
void ParseV2(const json& root, PriceCatalog* catalog) {
  const json& models = Array(root, "gpu_models", "(top)");
  for (size_t i = 0; i < models.size(); ++i) {
    const std::string at = fmt::format("gpu_models[{}]", i);
    const json& e = models[i];
    GpuModelPrice m = ModelHead(e, at);
    if (e.contains("memory_gb")) m.memory_gb = PositiveInt(e, "memory_gb", at);
    const json& offers = Array(e, "offers", at);
    for (size_t k = 0; k < offers.size(); ++k) {
      const std::string oat = fmt::format("{}.offers[{}]", at, k);
      const json& o = offers[k];
      CatalogOffer offer;
      offer.provider = Text(o, "provider", oat);
      offer.region = Text(o, "region", oat);
      if (o.contains("instance_type")) offer.instance_type = Text(o, "instance_type", oat);
      offer.gpus = PositiveInt(o, "gpus", oat);
      offer.price = {Usd(o, "on_demand_usd_per_hour", oat, offer.gpus),
                     Usd(o, "spot_usd_per_hour", oat, offer.gpus), Text(o, "source", oat),
                     Text(o, "as_of", oat)};
      if (!offer.instance_type.empty()) {
        catalog->instance_types.push_back(
            {offer.instance_type, offer.gpus, m.model, offer.provider, offer.region, offer.price});
      }
      m.offers.push_back(std::move(offer));
    }
    catalog->gpu_models.push_back(std::move(m));
  }
}

// The words of a reference price's source: "median of 6 providers' on-demand list prices,
// $2.69–$12.29, as of 2026-09-25…2026-11-09" or one provider's.
// The spot reference's words: the discount, whose it is, and the on-demand price it applies to.
std::string DescribeSpotReference(const GpuModelPrice& m) {
  const ReferencePrice& r = m.spot;
  const std::string dates =
      r.oldest_as_of == r.newest_as_of ? r.oldest_as_of : r.oldest_as_of + "…" + r.newest_as_of;
  const std::string base =
      m.on_demand.providers == 1
          ? fmt::format("the on-demand price {}", PriceText(*m.on_demand.median))
          : fmt::format("the on-demand reference {} (median of {} providers)",
                        PriceText(*m.on_demand.median), m.on_demand.providers);
  if (r.providers == 1) {
    return fmt::format(
        "reference price (spot): {}, {} less {:.1f} %, the spot discount of {} ({} spot against {} "
        "on-demand; {}, as of {})",
        m.label, base, r.discount * 100, r.offer_provider, PriceText(r.offer_spot),
        PriceText(r.offer_on_demand), r.offer_source, dates);
  }
  return fmt::format(
      "reference price (spot): {}, {} less {:.1f} %, the median spot discount of {} providers "
      "({:.1f}–{:.1f} %, as of {}; pass --price-per-gpu-hour or --instance-type for yours)",
      m.label, base, r.discount * 100, r.providers, r.discount_low * 100, r.discount_high * 100,
      dates);
}

std::string DescribeReference(const GpuModelPrice& m, bool spot) {
  if (spot) return DescribeSpotReference(m);
  const ReferencePrice& r = m.on_demand;
  const char* kind = spot ? "spot" : "on-demand";
  const std::string dates =
      r.oldest_as_of == r.newest_as_of ? r.oldest_as_of : r.oldest_as_of + "…" + r.newest_as_of;
  if (r.providers == 1) {
    const CatalogOffer* best = nullptr;
    for (const CatalogOffer& o : m.offers) {
      const std::optional<MicroUsd>& p = spot ? o.price.spot : o.price.on_demand;
      if (p && *p == *r.median && best == nullptr) best = &o;
    }
    const std::string where = best == nullptr                ? ""
                              : !best->instance_type.empty() ? " " + best->instance_type
                              : best->region.empty()         ? ""
                                                             : " " + best->region;
    return fmt::format("catalog list price{}: {}, {}{} ({}, {}; the only provider in the catalog)",
                       spot ? " (spot)" : "", m.label, best ? best->provider : "?", where,
                       best ? best->price.source : "", dates);
  }
  return fmt::format(
      "reference price{}: {}, median of {} providers' {} list prices ({}–{} per GPU-hour, as of "
      "{}; pass --price-per-gpu-hour or --instance-type for yours)",
      spot ? " (spot)" : "", m.label, r.providers, kind, PriceText(r.low), PriceText(r.high),
      dates);
}

// Widens the reference's span of dates to take `as_of`.
void TakeAsOf(const std::string& as_of, ReferencePrice* r) {
  if (r->oldest_as_of.empty() || as_of < r->oldest_as_of) r->oldest_as_of = as_of;
  if (as_of > r->newest_as_of) r->newest_as_of = as_of;
}

}  // namespace

ReferencePrice ReferenceOf(const std::vector<CatalogOffer>& offers, bool spot) {
  std::map<std::string, const CatalogOffer*> cheapest;  // by provider
  for (const CatalogOffer& o : offers) {
    const std::optional<MicroUsd>& p = spot ? o.price.spot : o.price.on_demand;
    if (!p) continue;
    auto [it, inserted] = cheapest.emplace(o.provider, &o);
    const std::optional<MicroUsd>& q = spot ? it->second->price.spot : it->second->price.on_demand;
    if (!inserted && *p < *q) it->second = &o;
  }
  ReferencePrice r;
  std::vector<MicroUsd> prices;
  for (const auto& [provider, o] : cheapest) {
    prices.push_back(spot ? *o->price.spot : *o->price.on_demand);
    TakeAsOf(o->price.as_of, &r);
  }
  if (prices.empty()) return r;
  std::sort(prices.begin(), prices.end());
  const size_t n = prices.size();
  r.providers = static_cast<int>(n);
  r.low = prices.front();
  r.high = prices.back();
  // Both halves are at most kMaxPriceMicroUsd, so the sum cannot overflow; round half up.
  r.median = n % 2 == 1 ? prices[n / 2] : (prices[n / 2 - 1] + prices[n / 2] + 1) / 2;
  return r;
}

ReferencePrice SpotReferenceOf(const std::vector<CatalogOffer>& offers,
                               const ReferencePrice& on_demand) {
  ReferencePrice r;
  if (!on_demand.median) return r;
  std::map<std::string, const CatalogOffer*> chosen;  // by provider
  for (const CatalogOffer& o : offers) {
    if (!o.price.spot || !o.price.on_demand || *o.price.on_demand <= 0) continue;
    auto [it, inserted] = chosen.emplace(o.provider, &o);
    if (!inserted && *o.price.on_demand < *it->second->price.on_demand) it->second = &o;
  }
  std::vector<double> discounts;
  for (const auto& [provider, o] : chosen) {
    const double d =
        1.0 - static_cast<double>(*o->price.spot) / static_cast<double>(*o->price.on_demand);
    if (d <= 0) continue;  // a "spot" price at or above on-demand is no discount
    discounts.push_back(std::min(d, 1.0));
    TakeAsOf(o->price.as_of, &r);
    // Kept for the words when it stays the only one (issue 57, 5: the first offer listing a
    // spot price was named, with a custom catalog another provider's than the discount's).
    r.offer_provider = o->provider;
    r.offer_source = o->price.source;
    r.offer_spot = *o->price.spot;
    r.offer_on_demand = *o->price.on_demand;
  }
  if (discounts.empty()) return r;
  std::sort(discounts.begin(), discounts.end());
  const size_t n = discounts.size();
  r.providers = static_cast<int>(n);
  r.discount = n % 2 == 1 ? discounts[n / 2] : (discounts[n / 2 - 1] + discounts[n / 2]) / 2;
  r.discount_low = discounts.front();
  r.discount_high = discounts.back();
  auto apply = [&](double d) {
    return static_cast<MicroUsd>(std::llround(static_cast<double>(*on_demand.median) * (1 - d)));
  };
  r.median = apply(r.discount);
  r.low = apply(r.discount_high);
  r.high = apply(r.discount_low);
  return r;
}

Result<PriceCatalog> ParsePriceCatalog(std::string_view text, std::string_view file) {
  try {
    json root = json::parse(text);
    const json& version = Field(root, "schema_version", "(top)");
    PriceCatalog catalog;
    if (version == 1) {
      ParseV1(root, &catalog);
    } else if (version == 2) {
      ParseV2(root, &catalog);
    } else {
      throw CatalogError{"schema_version", "unsupported (this cgov reads versions 1 and 2)"};
    }
    for (GpuModelPrice& m : catalog.gpu_models) {
      m.on_demand = ReferenceOf(m.offers, false);
      m.spot = SpotReferenceOf(m.offers, m.on_demand);
    }
    return catalog;
  } catch (const CatalogError& e) {
    return InvalidArgument(fmt::format("{}: {}: {}", file, SafeText(e.where), SafeText(e.what)));
  } catch (const json::exception& e) {
    // SafeText: the parser quotes the bytes it stopped at, and they are the file's (any bytes).
    return InvalidArgument(fmt::format("{}: not valid JSON: {}", file, SafeText(e.what())));
  }
}

// `needle` in `text` with no letter or digit on either side of it.
bool ContainsWord(std::string_view text, std::string_view needle) {
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + 1)) {
    const size_t end = at + needle.size();
    if ((at == 0 || !alnum(text[at - 1])) && (end == text.size() || !alnum(text[end]))) {
      return true;
    }
  }
  return false;
}

const PriceCatalog& BuiltinCatalog() {
  static const PriceCatalog catalog = [] {
    Result<PriceCatalog> parsed = ParsePriceCatalog(kBuiltinPriceCatalog, "data/prices.json");
    return parsed.ok() ? std::move(parsed).value() : PriceCatalog{};  // a test guards validity
  }();
  return catalog;
}

namespace {

// --price-per-gpu-hour wins over the catalog (which still says what on-demand and spot are).
ResolvedPrice GivenPrice(const PriceOptions& o, ResolvedPrice r) {
  r.per_gpu_hour = o.price_per_gpu_hour;
  r.source = fmt::format("--price-per-gpu-hour {}{}", FormatUsd(*o.price_per_gpu_hour, 4),
                         o.spot ? " (spot)" : "");
  r.label = o.spot ? "--price-per-gpu-hour (spot)" : "--price-per-gpu-hour";
  return r;
}

}  // namespace

const GpuModelPrice* FindModel(const PriceCatalog& catalog, std::string_view gpu_name,
                               std::optional<uint64_t> memory_mib, std::string* why) {
  // A GPU's reported memory is a little under its marketed size (an "80GB" H100 reports 79.6
  // GiB, an L40S 45 of its 48 GB): it agrees from 85 % to 110 % of memory_gb.
  auto memory_agrees = [&](const GpuModelPrice& m) {
    if (!memory_mib || !m.memory_gb) return true;
    const double gib = static_cast<double>(*memory_mib) / 1024.0;
    return gib >= 0.85 * *m.memory_gb && gib <= 1.10 * *m.memory_gb;
  };
  // The longest `match` that stands in the name as a whole word wins: "L4" is not in
  // "NVIDIA L40S", and "H100 NVL" beats "H100".
  size_t best = 0;
  std::vector<const GpuModelPrice*> found;
  for (const GpuModelPrice& m : catalog.gpu_models) {
    size_t longest = 0;
    for (const std::string& needle : m.match) {
      if (needle.size() > longest && ContainsWord(gpu_name, needle)) longest = needle.size();
    }
    if (longest == 0 || !memory_agrees(m)) continue;
    if (longest > best) found.clear();
    if (longest >= best) {
      best = longest;
      found.push_back(&m);
    }
  }
  if (found.size() == 1) return found.front();
  if (found.size() > 1 && why != nullptr) {
    *why = fmt::format("'{}' matches both {} and {} and its memory size is unknown", gpu_name,
                       found[0]->label, found[1]->label);
  }
  return nullptr;
}

Result<ResolvedPrice> ResolvePrice(const PriceOptions& o, std::string_view gpu_name,
                                   const PriceCatalog& catalog,
                                   std::optional<uint64_t> memory_mib) {
  ResolvedPrice r;
  r.is_spot = o.spot;
  if (!o.instance_type.empty()) {
    const InstanceType* found = nullptr;
    for (const InstanceType& t : catalog.instance_types) {
      if (t.name == o.instance_type) found = &t;
    }
    if (found == nullptr) {
      std::string known;
      for (const InstanceType& t : catalog.instance_types)
        known += (known.empty() ? "" : ", ") + t.name;
      return InvalidArgument(fmt::format(
          "--instance-type {}: not in the price catalog (known: {}); pass --price-per-gpu-hour",
          o.instance_type, known));
    }
    r.on_demand = found->price.on_demand;
    r.spot = found->price.spot;
    // A listed "spot" price at or above the same instance's on-demand price is no spot price.
    if (r.spot && r.on_demand && *r.spot >= *r.on_demand) r.spot.reset();
    if (o.price_per_gpu_hour) return GivenPrice(o, std::move(r));
    r.per_gpu_hour = o.spot ? r.spot : found->price.on_demand;
    r.label = !r.per_gpu_hour
                  ? "unknown"
                  : fmt::format("instance-type {}{}", found->name, o.spot ? " (spot)" : "");
    r.source = r.per_gpu_hour ? fmt::format("catalog list price{}: {} ({} {}, {} GPU{}; {}, {})",
                                            o.spot ? " (spot)" : "", found->name, found->provider,
                                            found->region, found->gpus, found->gpus == 1 ? "" : "s",
                                            found->price.source, found->price.as_of)
                              : fmt::format(
                                    "price unknown: the catalog has no {} price for {} (pass "
                                    "--price-per-gpu-hour)",
                                    o.spot ? "spot" : "on-demand", found->name);
    return r;
  }
  std::string ambiguous;
  const GpuModelPrice* model = FindModel(catalog, gpu_name, memory_mib, &ambiguous);
  if (model != nullptr) {
    r.on_demand = model->on_demand.median;
    r.spot = model->spot.median;
  }
  if (o.price_per_gpu_hour) return GivenPrice(o, std::move(r));
  if (model == nullptr) {
    r.label = "unknown";
    r.source = !ambiguous.empty()
                   ? fmt::format("price unknown: {} (pass --price-per-gpu-hour or --instance-type)",
                                 ambiguous)
                   : fmt::format(
                         "price unknown: no catalog entry for '{}' (pass --price-per-gpu-hour or "
                         "--instance-type)",
                         gpu_name.empty() ? "unknown GPU" : gpu_name);
    return r;
  }
  const ReferencePrice& ref = o.spot ? model->spot : model->on_demand;
  if (!ref.median) {
    r.label = "unknown";
    r.source =
        fmt::format("price unknown: the catalog has no {} price for {} (pass --price-per-gpu-hour)",
                    o.spot ? "spot" : "on-demand", model->label);
    return r;
  }
  r.per_gpu_hour = ref.median;
  r.source = DescribeReference(*model, o.spot);
  r.label = fmt::format("catalog {}{}", model->label, o.spot ? " (spot)" : "");
  return r;
}

ResolvedPrice ShareOfPrice(const ResolvedPrice& whole, double share, std::string_view what) {
  ResolvedPrice part = whole;
  if (!(share > 0 && share <= 1)) {
    part.per_gpu_hour = part.on_demand = part.spot = std::nullopt;
    part.label = "unknown";
    part.source = fmt::format(
        "price unknown: {}'s share of its GPU is unknown (its memory or the GPU's could not be "
        "read)",
        what);
    return part;
  }
  auto scale = [&](std::optional<MicroUsd>* price) {
    if (*price) *price = static_cast<MicroUsd>(std::llround(static_cast<double>(**price) * share));
  };
  scale(&part.per_gpu_hour);
  scale(&part.on_demand);
  scale(&part.spot);
  if (part.per_gpu_hour) part.part = fmt::format("{} at {:.1f} %", what, share * 100);
  return part;
}

Result<ResolvedPrice> ResolveUnitPrice(const PriceOptions& options, std::string_view gpu_name,
                                       const std::optional<MigInstance>& mig,
                                       const PriceCatalog& catalog,
                                       std::optional<uint64_t> memory_mib) {
  if (!mig) return ResolvePrice(options, gpu_name, catalog, memory_mib);
  // An instance's own memory is not its GPU's: the parent's, when known, tells variants apart.
  std::optional<uint64_t> parent_mib;
  if (mig->parent_memory_total_bytes) parent_mib = *mig->parent_memory_total_bytes >> 20;
  CGOV_ASSIGN_OR_RETURN(
      ResolvedPrice whole,
      ResolvePrice(options, mig->parent_name.empty() ? gpu_name : mig->parent_name, catalog,
                   parent_mib));
  return ShareOfPrice(whole, mig->price_share, "MIG " + mig->profile);
}

}  // namespace cgov
