// SQLite, loaded at run time by the first database a process opens (src/os/shared_library.h):
// a `cgov run` without --db neither maps nor initialises it, which was ~1 ms of every start on
// the 2-core VM (docs/benchmarks.md). Its functions, typed as sqlite3.h declares them: those of
// SQLite 3.31 (Ubuntu 20.04's), the oldest the portable build runs on (docs/install.md), so no
// sqlite3_changes64 (3.37) and no RETURNING clause (3.35) in cgov's SQL.
#ifndef CGOV_STORE_SQLITE_LIBRARY_H_
#define CGOV_STORE_SQLITE_LIBRARY_H_

#include <sqlite3.h>

#include "core/status.h"

namespace cgov {

struct SqliteLibrary {
  decltype(&sqlite3_open_v2) open_v2 = nullptr;
  decltype(&sqlite3_close) close = nullptr;
  decltype(&sqlite3_close_v2) close_v2 = nullptr;
  decltype(&sqlite3_extended_result_codes) extended_result_codes = nullptr;
  decltype(&sqlite3_errmsg) errmsg = nullptr;
  decltype(&sqlite3_errcode) errcode = nullptr;
  decltype(&sqlite3_errstr) errstr = nullptr;
  decltype(&sqlite3_exec) exec = nullptr;
  decltype(&sqlite3_free) free = nullptr;
  decltype(&sqlite3_changes) changes = nullptr;
  decltype(&sqlite3_last_insert_rowid) last_insert_rowid = nullptr;
  decltype(&sqlite3_progress_handler) progress_handler = nullptr;
  decltype(&sqlite3_prepare_v2) prepare_v2 = nullptr;
  decltype(&sqlite3_prepare_v3) prepare_v3 = nullptr;
  decltype(&sqlite3_finalize) finalize = nullptr;
  decltype(&sqlite3_step) step = nullptr;
  decltype(&sqlite3_reset) reset = nullptr;
  decltype(&sqlite3_clear_bindings) clear_bindings = nullptr;
  decltype(&sqlite3_bind_int64) bind_int64 = nullptr;
  decltype(&sqlite3_bind_double) bind_double = nullptr;
  decltype(&sqlite3_bind_text) bind_text = nullptr;
  decltype(&sqlite3_bind_blob) bind_blob = nullptr;
  decltype(&sqlite3_bind_null) bind_null = nullptr;
  decltype(&sqlite3_column_int64) column_int64 = nullptr;
  decltype(&sqlite3_column_double) column_double = nullptr;
  decltype(&sqlite3_column_type) column_type = nullptr;
  decltype(&sqlite3_column_text) column_text = nullptr;
  decltype(&sqlite3_column_blob) column_blob = nullptr;
  decltype(&sqlite3_column_bytes) column_bytes = nullptr;
};

// libsqlite3.so.0 (or the file CGOV_LIBSQLITE3 names: tests), opened once per process; or
// Unavailable saying what needs it and that the Debian package libsqlite3-0 installs it.
Result<const SqliteLibrary*> LoadSqlite();

}  // namespace cgov

#endif  // CGOV_STORE_SQLITE_LIBRARY_H_
