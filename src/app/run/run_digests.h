// Earlier runs' summary.json files, found and read (`cgov run --baseline`, `runs`, `compare`).
#ifndef CGOV_APP_RUN_RUN_DIGESTS_H_
#define CGOV_APP_RUN_RUN_DIGESTS_H_

#include <string>
#include <vector>

#include "analysis/run_compare.h"
#include "core/status.h"

namespace cgov {

// Reads and parses one summary.json (at most 64 MiB).
Result<RunDigest> ReadRunDigest(const std::string& path);

// The summary.json files named by `paths`: a file as given; a directory searched recursively for
// files named summary.json. Sorted by path within each directory; NotFound when a path does not
// exist, InvalidArgument when a directory holds none.
Result<std::vector<std::string>> FindSummaries(const std::vector<std::string>& paths);

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_DIGESTS_H_
