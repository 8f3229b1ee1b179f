// Small helpers the end-to-end tests share: reading a history database the real binary wrote,
// and finding a finding in a report's JSON.
#ifndef CGOV_TESTS_E2E_E2E_HELPERS_H_
#define CGOV_TESTS_E2E_E2E_HELPERS_H_

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "store/sqlite_db.h"

namespace cgov::e2e {

// One integer from `sql` on the database at `db`, read-only and patient with a writer; -1 when
// the database or the query fails (a test's WaitFor keeps polling).
inline int64_t QueryDb(const std::string& db, const std::string& sql) {
  auto opened = SqliteDb::Open(db, SqliteDb::OpenMode::kReadOnly);
  if (!opened.ok()) return -1;
  (void)(*opened)->Exec("PRAGMA busy_timeout = 5000");
  auto v = (*opened)->QueryInt(sql);
  return v.ok() ? *v : -1;
}

// The finding with `id` in a summary's or report's "findings" array, or nullptr.
inline const nlohmann::json* FindingById(const nlohmann::json& findings, const std::string& id) {
  for (const nlohmann::json& f : findings) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

}  // namespace cgov::e2e

#endif  // CGOV_TESTS_E2E_E2E_HELPERS_H_
