#include "report/summary_read.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/text.h"

namespace cgov {
namespace {

using nlohmann::json;

// The member `key` of `obj` (or nullptr); obj must be an object.
const json* Member(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

Status FieldError(const std::string& name, const std::string& field, const std::string& expected) {
  return InvalidArgument(fmt::format("{}: {}: expected {}", name, field, expected));
}

// A required object member.
Result<const json*> Object(const json& obj, const char* key, const std::string& name,
                           const std::string& field) {
  const json* v = Member(obj, key);
  if (v == nullptr || !v->is_object()) return FieldError(name, field, "an object");
  return v;
}

// A number, or null when `nullable`.
Result<std::optional<double>> Number(const json& obj, const char* key, const std::string& name,
                                     const std::string& field, bool nullable) {
  // Dollars are summed in cents (cgov runs): a bound keeps any sum of runs inside int64.
  constexpr double kLimit = 1e12;
  const json* v = Member(obj, key);
  if (v != nullptr && v->is_number()) {
    const double x = v->get<double>();
    if (!std::isfinite(x) || std::abs(x) > kLimit) {
      return FieldError(name, field, "a number between -1e12 and 1e12");
    }
    return std::optional<double>(x);
  }
  if (nullable && (v == nullptr || v->is_null())) return std::optional<double>();
  return FieldError(name, field, nullable ? "a number or null" : "a number");
}

// run: tags, exit code, start, duration.
Status ReadRun(const json& doc, const std::string& name, RunDigest* d) {
  CGOV_ASSIGN_OR_RETURN(const json* run, Object(doc, "run", name, "run"));
  if (const json* tags = Member(*run, "tags"); tags != nullptr && tags->is_object()) {
    for (const auto& [k, v] : tags->items()) {
      if (!v.is_string()) return FieldError(name, "run.tags." + k, "a string");
      d->tags[k] = v.get<std::string>();
    }
  } else {
    return FieldError(name, "run.tags", "an object");
  }
  if (const json* code = Member(*run, "exit_code"); code != nullptr && code->is_number_integer()) {
    d->exit_code = code->get<int>();
  }
  if (const json* at = Member(*run, "started_at"); at != nullptr && at->is_string()) {
    d->started_at = at->get<std::string>();
  }
  CGOV_ASSIGN_OR_RETURN(auto duration, Number(*run, "duration_s", name, "run.duration_s", false));
  d->duration_s = *duration;
  return Status::Ok();
}

// cost: hours, dollars, waste, the work done; with the sampling interval and the GPU count.
Status ReadCost(const json& doc, const std::string& name, RunDigest* d) {
  CGOV_ASSIGN_OR_RETURN(const json* cost, Object(doc, "cost", name, "cost"));
  CGOV_ASSIGN_OR_RETURN(auto hours, Number(*cost, "gpu_hours", name, "cost.gpu_hours", false));
  d->gpu_hours = *hours;
  CGOV_ASSIGN_OR_RETURN(auto effective, Number(*cost, "effective_gpu_hours", name,
                                               "cost.effective_gpu_hours", false));
  d->effective_gpu_hours = *effective;
  CGOV_ASSIGN_OR_RETURN(d->total_usd, Number(*cost, "total_usd", name, "cost.total_usd", true));
  CGOV_ASSIGN_OR_RETURN(d->waste_usd, Number(*cost, "waste_usd", name, "cost.waste_usd", true));
  if (const json* micro = Member(*cost, "total_micro_usd");
      micro != nullptr && micro->is_number_integer() && d->total_usd) {
    const int64_t v = micro->get<int64_t>();
    if (v < 0) return FieldError(name, "cost.total_micro_usd", "at least 0");
    d->total_micro_usd = v;
  }
  if (const json* price = Member(*cost, "price_per_gpu_hour_usd");
      price != nullptr && price->is_number() && d->total_usd) {
    d->price_per_gpu_hour_usd = price->get<double>();
  }
  if (const json* sampling = Member(doc, "sampling");
      sampling != nullptr && sampling->is_object()) {
    if (const json* i = Member(*sampling, "interval_s"); i != nullptr && i->is_number()) {
      d->interval_s = std::max(0.0, i->get<double>());
    }
  }
  if (const json* gpus = Member(doc, "gpus"); gpus != nullptr && gpus->is_array()) {
    d->gpu_count = gpus->size();
  }
  CGOV_ASSIGN_OR_RETURN(auto waste,
                        Number(*cost, "waste_fraction", name, "cost.waste_fraction", false));
  d->waste_pct = *waste * 100;
  if (const json* work = Member(*cost, "work"); work != nullptr && !work->is_null()) {
    if (!work->is_object()) return FieldError(name, "cost.work", "an object or null");
    CGOV_ASSIGN_OR_RETURN(d->work, Number(*work, "units", name, "cost.work.units", false));
    const json* unit = Member(*work, "unit");
    if (unit == nullptr || !unit->is_string())
      return FieldError(name, "cost.work.unit", "a string");
    d->unit = unit->get<std::string>();
    CGOV_ASSIGN_OR_RETURN(d->cost_per_unit_usd, Number(*work, "cost_per_unit_usd", name,
                                                       "cost.work.cost_per_unit_usd", true));
  }
  return Status::Ok();
}

Status ReadPhases(const json& doc, const std::string& name, RunDigest* d) {
  CGOV_ASSIGN_OR_RETURN(const json* phases, Object(doc, "phases", name, "phases"));
  for (size_t p = 0; p < kPhaseCount; ++p) {
    const std::string key(PhaseKey(static_cast<Phase>(p)));
    const json* phase = Member(*phases, key.c_str());
    if (phase == nullptr || !phase->is_object())
      return FieldError(name, "phases." + key, "an object");
    CGOV_ASSIGN_OR_RETURN(auto share,
                          Number(*phase, "share_pct", name, "phases." + key + ".share_pct", false));
    d->phase_share_pct[p] = *share;
  }
  return Status::Ok();
}

// "observed 12.5 % (threshold: util < 30 %)" when the finding says both.
std::string Evidence(const json& f) {
  const json* observed = Member(f, "observed");
  const json* threshold = Member(f, "threshold");
  if (observed == nullptr || !observed->is_object() || threshold == nullptr ||
      !threshold->is_object()) {
    return "";
  }
  const json* value = Member(*observed, "value");
  const json* unit = Member(*observed, "unit");
  const json* rule = Member(*threshold, "rule");
  if (value == nullptr || !value->is_number() || unit == nullptr || !unit->is_string() ||
      rule == nullptr || !rule->is_string()) {
    return "";
  }
  return fmt::format("observed {:.1f} {} (threshold: {})", value->get<double>(),
                     unit->get<std::string>(), rule->get<std::string>());
}

Result<FindingDigest> ReadFinding(const json& f, const std::string& name, const std::string& at) {
  if (!f.is_object()) return FieldError(name, at, "an object");
  const json* id = Member(f, "id");
  const json* severity = Member(f, "severity");
  const json* title = Member(f, "title");
  if (id == nullptr || !id->is_string()) return FieldError(name, at + ".id", "a string");
  if (severity == nullptr || !severity->is_string()) {
    return FieldError(name, at + ".severity", "info, warning or critical");
  }
  FindingDigest digest;
  digest.id = id->get<std::string>();
  const std::string s = severity->get<std::string>();
  if (s == "info") {
    digest.severity = Severity::kInfo;
  } else if (std::optional<Severity> parsed = ParseSeverity(s)) {
    digest.severity = *parsed;
  } else {
    return FieldError(name, at + ".severity", "info, warning or critical");
  }
  if (title != nullptr && title->is_string()) digest.title = title->get<std::string>();
  if (const json* advice = Member(f, "recommendation"); advice != nullptr && advice->is_string()) {
    digest.recommendation = advice->get<std::string>();
  }
  digest.evidence = Evidence(f);
  return digest;
}

Status ReadBaseline(const json& doc, const std::string& name, RunDigest* d) {
  const json* b = Member(doc, "baseline");
  if (b == nullptr || !b->is_object()) return Status::Ok();
  const json* name_of = Member(*b, "figure_name");
  const json* gate = Member(*b, "gate");
  if (name_of == nullptr || !name_of->is_string() || gate == nullptr || !gate->is_object()) {
    return FieldError(name, "baseline", "figure_name and gate (docs/summary.schema.json)");
  }
  d->baseline_figure = name_of->get<std::string>();
  CGOV_ASSIGN_OR_RETURN(d->baseline_change_pct,
                        Number(*b, "change_pct", name, "baseline.change_pct", true));
  const json* regressed = Member(*gate, "regressed");
  const json* verdict = Member(*gate, "verdict");
  if (regressed == nullptr || !regressed->is_boolean()) {
    return FieldError(name, "baseline.gate.regressed", "true or false");
  }
  d->baseline_regressed = regressed->get<bool>();
  if (verdict != nullptr && verdict->is_string()) d->baseline_verdict = verdict->get<std::string>();
  return Status::Ok();
}

}  // namespace

Result<RunDigest> DigestFromSummaryJson(const json& doc, const std::string& name) {
  if (!doc.is_object()) return FieldError(name, "(document)", "a JSON object (summary.json)");
  const json* version = Member(doc, "schema_version");
  if (version == nullptr || !version->is_number_integer() || version->get<int64_t>() != 1) {
    return FieldError(name, "schema_version", "1 (a cgov run summary.json)");
  }
  RunDigest d;
  d.path = name;
  CGOV_RETURN_IF_ERROR(ReadRun(doc, name, &d));
  CGOV_RETURN_IF_ERROR(ReadCost(doc, name, &d));
  CGOV_RETURN_IF_ERROR(ReadPhases(doc, name, &d));
  const json* findings = Member(doc, "findings");
  if (findings == nullptr || !findings->is_array()) return FieldError(name, "findings", "an array");
  for (size_t i = 0; i < findings->size(); ++i) {
    CGOV_ASSIGN_OR_RETURN(FindingDigest f,
                          ReadFinding((*findings)[i], name, fmt::format("findings[{}]", i)));
    d.findings.push_back(std::move(f));
  }
  CGOV_RETURN_IF_ERROR(ReadBaseline(doc, name, &d));
  return d;
}

}  // namespace cgov
