#include "analysis/pricing.h"

#include <cctype>
#include <cmath>

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
  if (!object.is_object() || !object.contains(key)) throw CatalogError{where + "." + key, "missing"};
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
    throw CatalogError{where + "." + key,
                       "must be a number of dollars from 0 to 999999999.999999 per GPU-hour, "
                       "or null"};
  }
  return static_cast<MicroUsd>(std::llround(usd * kMicroPerUsd));
}

std::string Describe(const CatalogPrice& p) {
  return fmt::format("{}, {}", p.source, p.as_of);
}

}  // namespace

Result<PriceCatalog> ParsePriceCatalog(std::string_view text, std::string_view file) {
  try {
    json root = json::parse(text);
    if (Field(root, "schema_version", "(top)") != 1) {
      throw CatalogError{"schema_version", "unsupported (this cgov reads version 1)"};
    }
    PriceCatalog catalog;
    const json& instances = Field(root, "instance_types", "(top)");
    for (size_t i = 0; i < instances.size(); ++i) {
      const std::string at = fmt::format("instance_types[{}]", i);
      const json& e = instances[i];
      InstanceType t;
      t.name = Text(e, "name", at);
      const json& gpus = Field(e, "gpus", at);
      if (!gpus.is_number_integer() || gpus.get<int>() <= 0) throw CatalogError{at + ".gpus", "must be > 0"};
      t.gpus = gpus.get<int>();
      t.gpu_model = Text(e, "gpu_model", at);
      t.price = {Usd(e, "on_demand_usd_per_hour", at, t.gpus), Usd(e, "spot_usd_per_hour", at, t.gpus),
                 Text(e, "source", at), Text(e, "as_of", at)};
      catalog.instance_types.push_back(std::move(t));
    }
    const json& models = Field(root, "gpu_models", "(top)");
    for (size_t i = 0; i < models.size(); ++i) {
      const std::string at = fmt::format("gpu_models[{}]", i);
      const json& e = models[i];
      GpuModelPrice m;
      m.model = Text(e, "model", at);
      for (const json& s : Field(e, "match", at)) {
        if (!s.is_string() || s.get<std::string>().empty()) throw CatalogError{at + ".match", "strings"};
        m.match.push_back(s.get<std::string>());
      }
      m.price = {Usd(e, "on_demand_usd_per_gpu_hour", at), Usd(e, "spot_usd_per_gpu_hour", at),
                 Text(e, "source", at), Text(e, "as_of", at)};
      catalog.gpu_models.push_back(std::move(m));
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

std::string InstanceTypeFromMetadata(std::string_view body) {
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r' || body.back() == ' ')) {
    body.remove_suffix(1);
  }
  if (const size_t slash = body.rfind('/'); slash != std::string_view::npos) {
    body.remove_prefix(slash + 1);
  }
  for (char c : body) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) return "";
  }
  return std::string(body.substr(0, 64));
}

Result<ResolvedPrice> ResolvePrice(const PriceOptions& o, std::string_view gpu_name,
                                   const PriceCatalog& catalog) {
  ResolvedPrice r;
  r.is_spot = o.spot;
  const CatalogPrice* found = nullptr;
  std::string found_name;
  if (!o.instance_type.empty()) {
    for (const InstanceType& t : catalog.instance_types) {
      if (t.name == o.instance_type) {
        found = &t.price;
        found_name = t.name;
      }
    }
    if (found == nullptr) {
      std::string known;
      for (const InstanceType& t : catalog.instance_types) known += (known.empty() ? "" : ", ") + t.name;
      return InvalidArgument(fmt::format(
          "--instance-type {}: not in the price catalog (known: {}); pass --price-per-gpu-hour",
          o.instance_type, known));
    }
  } else {
    // The longest `match` that stands in the name as a whole word wins: "L4" is not in
    // "NVIDIA L40S", and a catalog can tell "H100 NVL" from "H100".
    size_t best = 0;
    for (const GpuModelPrice& m : catalog.gpu_models) {
      for (const std::string& needle : m.match) {
        if (needle.size() > best && ContainsWord(gpu_name, needle)) {
          best = needle.size();
          found = &m.price;
          found_name = m.model;
        }
      }
    }
  }
  if (found != nullptr) {
    r.on_demand = found->on_demand;
    r.spot = found->spot;
  }
  if (o.price_per_gpu_hour) {
    r.per_gpu_hour = o.price_per_gpu_hour;
    r.source = fmt::format("--price-per-gpu-hour {}{}", FormatUsd(*o.price_per_gpu_hour, 4),
                           o.spot ? " (spot)" : "");
    return r;
  }
  if (found == nullptr) {
    r.source = fmt::format("price unknown: no catalog entry for '{}' (pass --price-per-gpu-hour "
                           "or --instance-type)", gpu_name.empty() ? "unknown GPU" : gpu_name);
    return r;
  }
  const std::optional<MicroUsd> price = o.spot ? found->spot : found->on_demand;
  if (!price) {
    r.source = fmt::format("price unknown: the catalog has no {} price for {} (pass "
                           "--price-per-gpu-hour)", o.spot ? "spot" : "on-demand", found_name);
    return r;
  }
  r.per_gpu_hour = price;
  r.source = fmt::format("catalog list price{}: {} ({})", o.spot ? " (spot)" : "", found_name,
                         Describe(*found));
  return r;
}

ResolvedPrice ShareOfPrice(const ResolvedPrice& whole, double share, std::string_view what) {
  ResolvedPrice part = whole;
  if (!(share > 0 && share <= 1)) {
    part.per_gpu_hour = part.on_demand = part.spot = std::nullopt;
    part.source = fmt::format("price unknown: {}'s share of its GPU is unknown (its memory or "
                              "the GPU's could not be read)", what);
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
                                       const PriceCatalog& catalog) {
  if (!mig) return ResolvePrice(options, gpu_name, catalog);
  CGOV_ASSIGN_OR_RETURN(ResolvedPrice whole,
                        ResolvePrice(options, mig->parent_name.empty() ? gpu_name
                                                                       : mig->parent_name,
                                     catalog));
  return ShareOfPrice(whole, mig->price_share, "MIG " + mig->profile);
}

}  // namespace cgov
