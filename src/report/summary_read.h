// Reading summary.json files back (`cgov run --baseline`, `cgov compare`, `cgov runs`): the
// fields a comparison or a cross-run report needs, each checked, errors naming the file, the line
// (for malformed JSON) and the field.
#ifndef CGOV_REPORT_SUMMARY_READ_H_
#define CGOV_REPORT_SUMMARY_READ_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/run_compare.h"
#include "core/status.h"

namespace cgov {

// `name`: how errors name the document (its path).
Result<RunDigest> DigestFromSummaryJson(const nlohmann::json& doc, const std::string& name);

}  // namespace cgov

#endif  // CGOV_REPORT_SUMMARY_READ_H_
