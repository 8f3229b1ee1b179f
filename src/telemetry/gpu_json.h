// A GPU's MIG instance and memory health as JSON, the same in samples.jsonl, summary.json and
// `cgov doctor --json`.
#ifndef CGOV_TELEMETRY_GPU_JSON_H_
#define CGOV_TELEMETRY_GPU_JSON_H_

#include <nlohmann/json.hpp>

#include "telemetry/gpu_sample.h"

namespace cgov {

nlohmann::json MigInstanceJson(const MigInstance& mig);
// Remapped rows or retired pages.
nlohmann::json MemoryHealthJson(const MemoryHealth& health);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_GPU_JSON_H_
