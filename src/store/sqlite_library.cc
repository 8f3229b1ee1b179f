#include "store/sqlite_library.h"

#include <string>

#include "os/shared_library.h"

namespace cgov {
namespace {

Result<SqliteLibrary> OpenSqlite() {
  return OpenLibrary<SqliteLibrary>(
      {"SQLite", "libsqlite3.so.0", "CGOV_LIBSQLITE3",
       "a history database (cgov daemon, --db, cgov report's history)", "libsqlite3-0"},
      [](SymbolResolver& resolve, SqliteLibrary& lib) {
        resolve(&lib.open_v2, "sqlite3_open_v2");
        resolve(&lib.close, "sqlite3_close");
        resolve(&lib.close_v2, "sqlite3_close_v2");
        resolve(&lib.extended_result_codes, "sqlite3_extended_result_codes");
        resolve(&lib.errmsg, "sqlite3_errmsg");
        resolve(&lib.errcode, "sqlite3_errcode");
        resolve(&lib.errstr, "sqlite3_errstr");
        resolve(&lib.exec, "sqlite3_exec");
        resolve(&lib.free, "sqlite3_free");
        resolve(&lib.changes, "sqlite3_changes");
        resolve(&lib.last_insert_rowid, "sqlite3_last_insert_rowid");
        resolve(&lib.progress_handler, "sqlite3_progress_handler");
        resolve(&lib.prepare_v2, "sqlite3_prepare_v2");
        resolve(&lib.prepare_v3, "sqlite3_prepare_v3");
        resolve(&lib.finalize, "sqlite3_finalize");
        resolve(&lib.step, "sqlite3_step");
        resolve(&lib.reset, "sqlite3_reset");
        resolve(&lib.clear_bindings, "sqlite3_clear_bindings");
        resolve(&lib.bind_int64, "sqlite3_bind_int64");
        resolve(&lib.bind_double, "sqlite3_bind_double");
        resolve(&lib.bind_text, "sqlite3_bind_text");
        resolve(&lib.bind_blob, "sqlite3_bind_blob");
        resolve(&lib.bind_null, "sqlite3_bind_null");
        resolve(&lib.column_int64, "sqlite3_column_int64");
        resolve(&lib.column_double, "sqlite3_column_double");
        resolve(&lib.column_type, "sqlite3_column_type");
        resolve(&lib.column_text, "sqlite3_column_text");
        resolve(&lib.column_blob, "sqlite3_column_blob");
        resolve(&lib.column_bytes, "sqlite3_column_bytes");
      });
}

}  // namespace

Result<const SqliteLibrary*> LoadSqlite() { return LoadOnce(&OpenSqlite); }

}  // namespace cgov
