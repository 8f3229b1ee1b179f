#include "store/sqlite_db.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "core/text.h"
#include "os/input_file.h"
#include "store/sqlite_library.h"

namespace cgov {

SqliteStmt::SqliteStmt(SqliteStmt&& other) noexcept : stmt_(other.stmt_), db_(other.db_) {
  other.stmt_ = nullptr;
}

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) db_->lib().finalize(stmt_);
    stmt_ = other.stmt_;
    db_ = other.db_;
    other.stmt_ = nullptr;
  }
  return *this;
}

SqliteStmt::~SqliteStmt() {
  if (stmt_ != nullptr) db_->lib().finalize(stmt_);
}

SqliteStmt& SqliteStmt::Bind(int index, int64_t value) {
  db_->lib().bind_int64(stmt_, index, value);
  return *this;
}

SqliteStmt& SqliteStmt::Bind(int index, std::string_view text) {
  db_->lib().bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStmt& SqliteStmt::BindDouble(int index, double value) {
  db_->lib().bind_double(stmt_, index, value);
  return *this;
}

SqliteStmt& SqliteStmt::BindBlob(int index, std::string_view bytes) {
  db_->lib().bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()),
                       SQLITE_TRANSIENT);
  return *this;
}

SqliteStmt& SqliteStmt::BindNull(int index) {
  db_->lib().bind_null(stmt_, index);
  return *this;
}

Result<bool> SqliteStmt::Step() {
  const int rc = db_->lib().step(stmt_);
  if (rc == SQLITE_ROW) return true;
  Status error = rc == SQLITE_DONE ? Status::Ok() : Error(rc);
  db_->lib().reset(stmt_);
  db_->lib().clear_bindings(stmt_);
  if (!error.ok()) return error;
  return false;
}

Status SqliteStmt::Run() {
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void SqliteStmt::Reset() {
  db_->lib().reset(stmt_);
  db_->lib().clear_bindings(stmt_);
}

int64_t SqliteStmt::Int(int column) const { return db_->lib().column_int64(stmt_, column); }

double SqliteStmt::Double(int column) const { return db_->lib().column_double(stmt_, column); }

bool SqliteStmt::IsNull(int column) const {
  return db_->lib().column_type(stmt_, column) == SQLITE_NULL;
}

std::string_view SqliteStmt::Text(int column) const {
  const auto* text = reinterpret_cast<const char*>(db_->lib().column_text(stmt_, column));
  if (text == nullptr) return {};
  return {text, static_cast<size_t>(db_->lib().column_bytes(stmt_, column))};
}

std::string SqliteStmt::SafeString(int column) const { return SafeText(Text(column)); }

std::string_view SqliteStmt::Blob(int column) const {
  const auto* data = static_cast<const char*>(db_->lib().column_blob(stmt_, column));
  if (data == nullptr) return {};
  return {data, static_cast<size_t>(db_->lib().column_bytes(stmt_, column))};
}

Status CorruptDatabase(const std::string& path, std::string_view how, std::string_view finding) {
  return InvalidArgument(fmt::format(
      "{}: the database is corrupt (SQLite{}: {}); nothing was written. Keep a copy, then "
      "salvage what is readable with `sqlite3 {} .recover | sqlite3 NEW.db`",
      path, how, SafeText(finding), path));
}

bool IsCorruption(int rc) { return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB; }

std::optional<bool> HasSqliteHeader(const std::string& path) {
  char header[16] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  const ssize_t n = ::read(fd, header, sizeof header);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof header)) return std::nullopt;
  return std::memcmp(header, "SQLite format 3", sizeof header) == 0;
}

Status SqliteStmt::Error(int rc) const {
  if (IsCorruption(rc)) return CorruptDatabase(db_->path(), "", db_->lib().errmsg(db_->raw()));
  return IoError(fmt::format("{}: {} ({})", db_->path(), db_->lib().errmsg(db_->raw()),
                             db_->lib().errstr(rc)));
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path, OpenMode mode) {
  CGOV_RETURN_IF_ERROR(CheckRegularOrAbsent(path, "database"));  // a FIFO or a device: refused
  int flags = SQLITE_OPEN_NOMUTEX;
  switch (mode) {
    case OpenMode::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case OpenMode::kReadWrite:
      flags |= SQLITE_OPEN_READWRITE;
      break;
    case OpenMode::kCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
  }
  CGOV_ASSIGN_OR_RETURN(const SqliteLibrary* lib, LoadSqlite());
  sqlite3* db = nullptr;
  const int rc = lib->open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? lib->errmsg(db) : lib->errstr(rc);
    lib->close(db);
    return IoError(fmt::format("{}: cannot open: {}", path, message));
  }
  lib->extended_result_codes(db, 1);
  return std::unique_ptr<SqliteDb>(new SqliteDb(lib, db, path));
}

SqliteDb::~SqliteDb() { lib_->close_v2(db_); }

Status SqliteDb::Exec(std::string_view sql) {
  char* message = nullptr;
  const std::string text(sql);
  const int rc = lib_->exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return Status::Ok();
  if (IsCorruption(rc)) {
    Status corrupt = CorruptDatabase(path_, "", message != nullptr ? message : lib_->errstr(rc));
    lib_->free(message);
    return corrupt;
  }
  Status error = IoError(
      fmt::format("{}: {} ({})", path_, message != nullptr ? message : "", lib_->errstr(rc)));
  lib_->free(message);
  return error;
}

Result<SqliteStmt> SqliteDb::Prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  const int rc = lib_->prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                  SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Error(fmt::format("preparing \"{}\"", sql));
  return SqliteStmt(stmt, this);
}

Result<int64_t> SqliteDb::QueryInt(std::string_view sql) const {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, Prepare(sql));
  CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Internal(fmt::format("{}: \"{}\" returned no row", path_, sql));
  const int64_t value = stmt.Int(0);
  stmt.Reset();
  return value;
}

int64_t SqliteDb::Changes() const { return lib_->changes(db_); }

int64_t SqliteDb::LastInsertRowid() const { return lib_->last_insert_rowid(db_); }

Status SqliteDb::Error(std::string_view what) const {
  if (IsCorruption(lib_->errcode(db_))) return CorruptDatabase(path_, "", lib_->errmsg(db_));
  return IoError(fmt::format("{}: {}: {}", path_, what, lib_->errmsg(db_)));
}

}  // namespace cgov
