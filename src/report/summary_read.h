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

// Reads and parses one summary.json (at most 64 MiB).
Result<RunDigest> ReadRunDigest(const std::string& path);

// The summary.json files named by `paths`: a file as given; a directory searched recursively for
// files named summary.json. Sorted by path within each directory; NotFound when a path does not
// exist, InvalidArgument when a directory holds none.
Result<std::vector<std::string>> FindSummaries(const std::vector<std::string>& paths);

}  // namespace cgov

#endif  // CGOV_REPORT_SUMMARY_READ_H_
