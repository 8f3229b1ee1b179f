// `cgov import gpu-usage-audit`: a database from another tool, any values in any column (SQLite
// keeps what it is given whatever the declared type), with or without the columns older
// gpu-usage-audit versions lack. The fuzzer's bytes choose the rows (FuzzedDataProvider); the
// import into a fresh history database either succeeds or fails with an error naming the file,
// and a second import of the same source adds nothing (the import is idempotent).
#include <fuzzer/FuzzedDataProvider.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "app/import/gua_import.h"
#include "core/text.h"
#include "core/time_format.h"
#include "fuzz_check.h"
#include "fuzz_target.h"

using namespace cgov;

namespace {

const std::string& WorkDir() {
  // Never destroyed: the exit handler that removes it runs after static destructors would.
  static const std::string* const dir = [] {
    // Memory-backed when it can be: two SQLite files created and synced per input.
    const char* tmp = std::getenv("TMPDIR");
    const std::string base = access("/dev/shm", W_OK) == 0    ? "/dev/shm"
                             : tmp != nullptr && *tmp != '\0' ? tmp
                                                              : "/tmp";
    auto* pattern = new std::string(base + "/cgov-import-fuzz-XXXXXX");
    FUZZ_CHECK(mkdtemp(pattern->data()) != nullptr);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(WorkDir(), ec);
    });
    return pattern;
  }();
  return *dir;
}

void Remove(const std::string& db) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) unlink((db + suffix).c_str());
}

void Exec(sqlite3* db, const std::string& sql) {
  FUZZ_CHECK(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK);
}

// A value of any storage class, weighted towards what the column is meant to hold.
void BindAny(FuzzedDataProvider& p, sqlite3_stmt* s, int column, int64_t usual_min,
             int64_t usual_max) {
  switch (p.ConsumeIntegralInRange(0, 7)) {
    case 0:
      sqlite3_bind_null(s, column);
      break;
    case 1:
      sqlite3_bind_int64(s, column, p.ConsumeIntegral<int64_t>());
      break;
    case 2:
      sqlite3_bind_double(s, column, p.ConsumeFloatingPoint<double>());
      break;
    case 3: {
      const std::string text = p.ConsumeRandomLengthString(24);
      sqlite3_bind_text(s, column, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      break;
    }
    default:
      sqlite3_bind_int64(s, column, p.ConsumeIntegralInRange(usual_min, usual_max));
  }
}

void BindText(sqlite3_stmt* s, int column, const std::string& text) {
  sqlite3_bind_text(s, column, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
}

// A timestamp: mostly one of a few valid ones (so rows share ticks), sometimes any text.
std::string Timestamp(FuzzedDataProvider& p) {
  if (p.ConsumeIntegralInRange(0, 7) == 0) return p.ConsumeRandomLengthString(32);
  const int64_t base_ms = 1'763'700'000'000;  // 2025-11
  return FormatRfc3339Utc((base_ms + p.ConsumeIntegralInRange(0, 5) * 1000) * 1'000'000);
}

std::string Uuid(FuzzedDataProvider& p) {
  if (p.ConsumeIntegralInRange(0, 7) == 0) return p.ConsumeRandomLengthString(16);
  return "GPU-" + std::to_string(p.ConsumeIntegralInRange(0, 2));
}

void Insert(sqlite3* db, const std::string& sql, const std::function<void(sqlite3_stmt*)>& bind) {
  sqlite3_stmt* s = nullptr;
  FUZZ_CHECK(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
  bind(s);
  sqlite3_step(s);  // a NOT NULL violation is fine: that row is simply not there
  sqlite3_finalize(s);
}

void WriteSource(FuzzedDataProvider& p, const std::string& path) {
  sqlite3* db = nullptr;
  FUZZ_CHECK(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  const bool current = p.ConsumeBool();  // the newest schema, or the oldest one
  Exec(db,
       "CREATE TABLE host (hostname TEXT NOT NULL, env_kind TEXT NOT NULL, driver_version TEXT, "
       "first_seen DATETIME NOT NULL, last_seen DATETIME NOT NULL);CREATE TABLE daemon_run (id "
       "INTEGER PRIMARY KEY AUTOINCREMENT, started_at DATETIME NOT NULL, interval_seconds REAL NOT "
       "NULL);CREATE TABLE gpu_device (gpu_uuid TEXT NOT NULL, name TEXT NOT NULL, memory_total_mb "
       "INTEGER NOT NULL, first_seen DATETIME NOT NULL, last_seen DATETIME NOT NULL);");
  Exec(db, current
               ? "CREATE TABLE gpu_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL, "
                 "util_pct INTEGER NOT NULL, run_id INTEGER, usage_state TEXT, gpu_index "
                 "INTEGER, memory_used_mb INTEGER, temperature_c INTEGER, power_w INTEGER);"
                 "CREATE TABLE proc_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL, pid "
                 "INTEGER NOT NULL, mem_used_mb INTEGER, loginuid_user TEXT, owner_user TEXT, "
                 "run_id INTEGER, gpu_index INTEGER, process_name TEXT, process_type TEXT NOT "
                 "NULL DEFAULT 'compute');"
               : "CREATE TABLE gpu_sample (ts DATETIME NOT NULL, gpu_uuid TEXT NOT NULL, util_pct "
                 "INTEGER NOT NULL);CREATE TABLE proc_sample (ts DATETIME NOT NULL, gpu_uuid TEXT "
                 "NOT NULL, pid INTEGER NOT NULL, mem_used_mb INTEGER, owner_user TEXT);");
  Exec(db, "BEGIN");
  Insert(db, "INSERT INTO host VALUES (?, 'bare', NULL, '2025-11-21', '2025-11-21')",
         [&](sqlite3_stmt* s) { BindText(s, 1, p.ConsumeRandomLengthString(24)); });
  for (int i = p.ConsumeIntegralInRange(0, 3); i > 0; --i) {
    Insert(db, "INSERT INTO daemon_run (id, started_at, interval_seconds) VALUES (?, ?, ?)",
           [&](sqlite3_stmt* s) {
             sqlite3_bind_int64(s, 1, p.ConsumeIntegralInRange(1, 3));
             BindText(s, 2, Timestamp(p));
             if (p.ConsumeBool())
               sqlite3_bind_double(s, 3, p.ConsumeFloatingPoint<double>());
             else
               sqlite3_bind_double(s, 3, p.ConsumeIntegralInRange(1, 60));
           });
  }
  for (int i = p.ConsumeIntegralInRange(0, 3); i > 0; --i) {
    Insert(db, "INSERT INTO gpu_device VALUES (?, ?, ?, '2025-11-21', '2025-11-21')",
           [&](sqlite3_stmt* s) {
             BindText(s, 1, Uuid(p));
             BindText(s, 2, p.ConsumeRandomLengthString(24));
             BindAny(p, s, 3, 1, 200'000);
           });
  }
  for (int i = p.ConsumeIntegralInRange(0, 24); i > 0; --i) {
    Insert(db,
           current ? "INSERT INTO gpu_sample VALUES (?, ?, ?, ?, 'active', ?, ?, ?, ?)"
                   : "INSERT INTO gpu_sample VALUES (?, ?, ?)",
           [&](sqlite3_stmt* s) {
             BindText(s, 1, Timestamp(p));
             BindText(s, 2, Uuid(p));
             BindAny(p, s, 3, 0, 100);
             if (!current) return;
             BindAny(p, s, 4, 1, 3);
             BindAny(p, s, 5, 0, 7);
             BindAny(p, s, 6, 0, 200'000);
             BindAny(p, s, 7, 0, 100);
             BindAny(p, s, 8, 0, 1000);
           });
  }
  for (int i = p.ConsumeIntegralInRange(0, 24); i > 0; --i) {
    Insert(db,
           current ? "INSERT INTO proc_sample VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                   : "INSERT INTO proc_sample VALUES (?, ?, ?, ?, ?)",
           [&](sqlite3_stmt* s) {
             BindText(s, 1, Timestamp(p));
             BindText(s, 2, Uuid(p));
             BindAny(p, s, 3, 1, 4'194'304);
             BindAny(p, s, 4, 0, 200'000);
             BindText(s, 5, p.ConsumeRandomLengthString(12));
             if (!current) return;
             BindText(s, 6, p.ConsumeRandomLengthString(12));
             BindAny(p, s, 7, 1, 3);
             BindAny(p, s, 8, 0, 7);
             BindText(s, 9, p.ConsumeRandomLengthString(16));
             BindText(s, 10, p.ConsumeBool() ? "compute" : p.ConsumeRandomLengthString(8));
           });
  }
  Exec(db, "COMMIT");
  sqlite3_close(db);
}

}  // namespace

CGOV_FUZZ_TARGET(import_fuzz) {
  FuzzedDataProvider provider(data, size);
  const std::string source = WorkDir() + "/gua.db", target = WorkDir() + "/cgov.db";
  Remove(source);
  Remove(target);
  WriteSource(provider, source);
  Result<ImportCounts> first = ImportGuaDatabase(source, target);
  if (!first.ok()) {
    FUZZ_CHECK(IsSafeText(first.status().message()));
    FUZZ_CHECK(first.status().message().find(source) != std::string::npos ||
               first.status().message().find(target) != std::string::npos);
    return 0;
  }
  Result<ImportCounts> second = ImportGuaDatabase(source, target);
  FUZZ_CHECK(second.ok());
  FUZZ_CHECK(second->added == 0);
  FUZZ_CHECK(second->skipped == first->added + first->skipped);
  return 0;
}
