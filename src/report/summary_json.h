// summary.json of a run (schema: docs/summary.schema.json, version RunSummary::kSchemaVersion).
#ifndef CGOV_REPORT_SUMMARY_JSON_H_
#define CGOV_REPORT_SUMMARY_JSON_H_

#include <nlohmann/json.hpp>

#include "analysis/run_summary.h"

namespace cgov {

// Keys sorted (nlohmann's std::map objects), numbers rounded to 3 decimals, unknown as null.
nlohmann::json SummaryJson(const RunSummary& summary);

// Parts shared with `cgov report --format json`.
nlohmann::json CostJson(const CostBlock& cost);
nlohmann::json FindingsJson(const std::vector<Finding>& findings);
nlohmann::json SavingsJson(const SavingsBlock& savings);
// An energy block as summary.json and the history report's JSON write it (issue 62): `joules`
// (exact to the millijoule credited), `kwh`, `phase_joules`, `unknown_phase_joules`,
// `idle_joules`, `power_known_gpu_seconds`; the history adds its own fields.
nlohmann::json EnergyJson(const EnergyBlock& energy);

}  // namespace cgov

#endif  // CGOV_REPORT_SUMMARY_JSON_H_
