// A thin RAII wrapper over the SQLite C API: a connection and prepared statements whose errors
// come back as Status values naming the database file. Not thread-safe; one per thread.
#ifndef CGOV_STORE_SQLITE_DB_H_
#define CGOV_STORE_SQLITE_DB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace cgov {

class SqliteDb;
struct SqliteLibrary;

// "PATH: the database is corrupt (SQLite<how>: FINDING); nothing was written. Keep a copy, then
// salvage ..." (docs/history-db.md): how a corrupt page is reported, whether a query met it or
// the writer's quick_check on open found it.
Status CorruptDatabase(const std::string& path, std::string_view how, std::string_view finding);
// True for SQLITE_CORRUPT and SQLITE_NOTADB, extended codes included.
bool IsCorruption(int rc);
// Whether `path` starts with the 16 bytes every SQLite 3 database starts with; nullopt when it
// cannot be opened or holds fewer than 16 bytes (an empty file SQLite would make a database of).
std::optional<bool> HasSqliteHeader(const std::string& path);

class SqliteStmt {
 public:
  SqliteStmt() = default;  // to assign a prepared one to, or destroy: nothing else
  SqliteStmt(SqliteStmt&& other) noexcept;
  SqliteStmt& operator=(SqliteStmt&& other) noexcept;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;
  ~SqliteStmt();

  // Parameters are 1-based, as in SQLite.
  SqliteStmt& Bind(int index, int64_t value);
  SqliteStmt& Bind(int index, std::string_view text);
  SqliteStmt& BindDouble(int index, double value);
  SqliteStmt& BindBlob(int index, std::string_view bytes);
  SqliteStmt& BindNull(int index);

  // true: a row is ready; false: done. Resets itself after done or an error.
  Result<bool> Step();
  // Steps until done (for statements that return no rows).
  Status Run();
  void Reset();

  int64_t Int(int column) const;
  double Double(int column) const;
  bool IsNull(int column) const;
  std::string_view Text(int column) const;
  // A stored string as it may be shown: display-safe (core/text.h's SafeText). A database may
  // come from elsewhere (`--db` names any file), so every name read back for a view passes here.
  std::string SafeString(int column) const;
  std::string_view Blob(int column) const;

 private:
  friend class SqliteDb;
  SqliteStmt(sqlite3_stmt* stmt, const SqliteDb* db) : stmt_(stmt), db_(db) {}
  Status Error(int rc) const;

  sqlite3_stmt* stmt_ = nullptr;
  const SqliteDb* db_ = nullptr;
};

class SqliteDb {
 public:
  enum class OpenMode { kReadOnly, kReadWrite, kCreate };
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path, OpenMode mode);
  ~SqliteDb();

  Status Exec(std::string_view sql);
  Result<SqliteStmt> Prepare(std::string_view sql) const;
  // The single integer a query such as "PRAGMA user_version" returns.
  Result<int64_t> QueryInt(std::string_view sql) const;
  int64_t Changes() const;          // rows changed by the last statement
  int64_t LastInsertRowid() const;  // the rowid the last INSERT gave its row
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }
  const SqliteLibrary& lib() const { return *lib_; }  // for raw(): SQLite is loaded at run time

  // "PATH: <what>: <SQLite's message>"; or, when SQLite found a page it read corrupt (or the
  // file is no database at all), CorruptDatabase's message.
  Status Error(std::string_view what) const;

 private:
  SqliteDb(const SqliteLibrary* lib, sqlite3* db, std::string path)
      : lib_(lib), db_(db), path_(std::move(path)) {}
  const SqliteLibrary* lib_;
  sqlite3* db_;
  std::string path_;
};

}  // namespace cgov

#endif  // CGOV_STORE_SQLITE_DB_H_
