// Brings a gpu-usage-audit history into a Cost Governor history database. Idempotent:
// importing the same data twice adds nothing.
#ifndef CGOV_APP_IMPORT_GUA_IMPORT_H_
#define CGOV_APP_IMPORT_GUA_IMPORT_H_

#include <cstdint>
#include <string>

#include "core/status.h"

namespace cgov {

struct ImportCounts {
  int64_t added = 0;    // ticks written
  int64_t skipped = 0;  // ticks already there
};

// Imports the gpu-usage-audit database `source_path` into the history database `db` (created if
// missing), all or nothing: on an error nothing of this import is kept.
Result<ImportCounts> ImportGuaDatabase(const std::string& source_path, const std::string& db);

}  // namespace cgov

#endif  // CGOV_APP_IMPORT_GUA_IMPORT_H_
