#include "store/history_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <sqlite3.h>

#include "core/text.h"
#include "os/env.h"
#include "os/input_file.h"
#include "store/sqlite_library.h"

namespace cgov {
namespace {

constexpr int64_t kApplicationId = 0x63676f76;  // "cgov"

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE run (id INTEGER PRIMARY KEY, started_ms INTEGER NOT NULL,
                  interval_ms INTEGER NOT NULL, source TEXT NOT NULL, hostname TEXT NOT NULL);
CREATE TABLE gpu (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, idx INTEGER NOT NULL,
                  name TEXT NOT NULL, mem_total_mib INTEGER, pci_bus_id TEXT NOT NULL);
CREATE TABLE identity (id INTEGER PRIMARY KEY, user TEXT NOT NULL, owner TEXT NOT NULL,
                       pod TEXT NOT NULL, container TEXT NOT NULL, slurm_job TEXT NOT NULL,
                       project TEXT NOT NULL, team TEXT NOT NULL, tags TEXT NOT NULL,
                       UNIQUE (user, owner, pod, container, slurm_job, project, team, tags));
CREATE TABLE command (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE tick (ts_ms INTEGER PRIMARY KEY, run INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE gpu_hour (hour INTEGER NOT NULL, gpu INTEGER NOT NULL, data BLOB NOT NULL,
                       PRIMARY KEY (hour, gpu)) WITHOUT ROWID;
CREATE TABLE identity_hour (hour INTEGER NOT NULL, identity INTEGER NOT NULL,
                            gpu INTEGER NOT NULL, data BLOB NOT NULL,
                            PRIMARY KEY (hour, identity, gpu)) WITHOUT ROWID;
CREATE TABLE session (start_ms INTEGER NOT NULL, gpu INTEGER NOT NULL, pid INTEGER NOT NULL,
                      end_ms INTEGER NOT NULL, identity INTEGER NOT NULL,
                      command INTEGER NOT NULL, held_ms INTEGER NOT NULL,
                      idle_held_ms INTEGER NOT NULL, mem_max_mib INTEGER NOT NULL,
                      idle_streak_ms INTEGER NOT NULL, idle_streak_max_ms INTEGER NOT NULL,
                      idle_streak_max_start_ms INTEGER NOT NULL, open INTEGER NOT NULL, PRIMARY KEY (start_ms, gpu, pid)) WITHOUT ROWID;
CREATE INDEX session_by_end ON session (end_ms);
)sql";

// Version 2: what the driver reports about a GPU besides its samples (Xid errors).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE gpu_event (ts_ms INTEGER NOT NULL, gpu INTEGER NOT NULL, kind TEXT NOT NULL,
                        code INTEGER NOT NULL);
CREATE INDEX gpu_event_by_ts ON gpu_event (ts_ms);
)sql";

// Version 3: MIG instances, each a row of `gpu` (keyed by its MIG- uuid) with its parent and share.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE gpu ADD COLUMN mig_profile TEXT;
ALTER TABLE gpu ADD COLUMN gpu_instance_id INTEGER;
ALTER TABLE gpu ADD COLUMN compute_instance_id INTEGER;
ALTER TABLE gpu ADD COLUMN mig_slices INTEGER;
ALTER TABLE gpu ADD COLUMN parent_uuid TEXT;
ALTER TABLE gpu ADD COLUMN parent_name TEXT;
ALTER TABLE gpu ADD COLUMN price_share REAL;
)sql";

// Version 4: the price the writer priced each GPU at, from when (one row per change), so that a
// report prices the history as the daemon's /metrics did.
constexpr const char* kSchemaV4 = R"sql(
CREATE TABLE gpu_price (gpu INTEGER NOT NULL, since_ms INTEGER NOT NULL, micro_usd INTEGER,
                        on_demand_micro_usd INTEGER, spot_micro_usd INTEGER,
                        is_spot INTEGER NOT NULL, source TEXT NOT NULL,
                        PRIMARY KEY (gpu, since_ms)) WITHOUT ROWID;
)sql";

// Version 5: Kubernetes names of the pods and containers that identities name by UID and
// container id (from the API server, `cgov daemon --kubernetes`). One pod UID is one pod for
// ever, so the names sit beside the identity rows, not in their key.
constexpr const char* kSchemaV5 = R"sql(
CREATE TABLE kube_pod (uid TEXT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL)
  WITHOUT ROWID;
CREATE TABLE kube_container (id TEXT PRIMARY KEY, pod_uid TEXT NOT NULL, name TEXT NOT NULL)
  WITHOUT ROWID;
)sql";

// Version 6: a tick may list the GPUs the kubelet allocated to pods (the tick encoding's
// allocation list, docs/history-db.md). No table changes: the version keeps an older cgov, which
// would misread such ticks, from opening the file.
constexpr const char* kSchemaV6 = "-- ticks may carry GPU allocations";

// Version 7: what `cgov daemon --policy` did to processes (docs/policy.md).
constexpr const char* kSchemaV7 = R"sql(
CREATE TABLE policy_action (ts_ms INTEGER NOT NULL, policy TEXT NOT NULL, action TEXT NOT NULL,
                            gpu INTEGER NOT NULL, pid INTEGER NOT NULL, user TEXT NOT NULL,
                            command TEXT NOT NULL, idle_held_ms INTEGER NOT NULL,
                            outcome TEXT NOT NULL);
CREATE INDEX policy_action_by_ts ON policy_action (ts_ms);
)sql";

// Version 8: every uid of a process the policy acted on (real, effective, saved, login).
constexpr const char* kSchemaV8 = "ALTER TABLE policy_action ADD COLUMN uids TEXT;";

// Version 9: a session's share of its GPU's idle-held time (SessionRecord::idle_held_share_ms);
// NULL in rows written before it (read as the session's whole idle-held time).
constexpr const char* kSchemaV9 = "ALTER TABLE session ADD COLUMN idle_held_share_ms INTEGER;";

// Version 10: a tick may carry the driver's energy counter (StoredGpuField::kEnergyMj), and the
// rollups their energy (gpu_hour version 4, identity_hour version 3). No table changes: the
// version keeps an older cgov, which would misread such ticks, from opening the file.
constexpr const char* kSchemaV10 = "-- ticks may carry the energy counter";

// Steps from version N-1 to N, in order. Version 1 is the first; a later schema appends here.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> steps = {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4,
                                                 kSchemaV5, kSchemaV6, kSchemaV7, kSchemaV8,
                                                 kSchemaV9, kSchemaV10};
  return steps;
}

// Unopenable or short: SQLite says why, or makes a database of an empty file.
bool LooksLikeSqlite(const std::string& path) { return HasSqliteHeader(path).value_or(true); }

Status CheckIdentity(SqliteDb& db) {
  CGOV_ASSIGN_OR_RETURN(int64_t app, db.QueryInt("PRAGMA application_id"));
  CGOV_ASSIGN_OR_RETURN(int64_t version, db.QueryInt("PRAGMA user_version"));
  CGOV_ASSIGN_OR_RETURN(int64_t tables, db.QueryInt("SELECT count(*) FROM sqlite_master"));
  if (app == 0 && tables == 0) return Status::Ok();  // a new, empty database
  if (app != kApplicationId) {
    return InvalidArgument(fmt::format(
        "{}: a SQLite database, but not a Cost Governor history (application_id {}, {} schema "
        "objects); nothing was changed. A gpu-usage-audit database is imported with `cgov import "
        "gpu-usage-audit {} --db NEW.db`",
        db.path(), app, tables, db.path()));
  }
  if (version > kHistorySchemaVersion) {
    return InvalidArgument(
        fmt::format("{}: schema version {} was written by a newer cgov (this one reads up to {}); "
                    "nothing was changed",
                    db.path(), version, kHistorySchemaVersion));
  }
  return Status::Ok();
}

// A deadline for SQLite's progress handler: a non-zero return interrupts the statement.
int PastDeadline(void* deadline_ns) {
  return Env::Default()->MonotonicNs() > *static_cast<int64_t*>(deadline_ns);
}

// PRAGMA quick_check(1) within `budget`: an error when SQLite finds the file corrupt (its first
// finding quoted), false when the budget ran out first (not an error: the caller says so), true
// when the whole file was checked and is sound. Reads only.
Result<bool> QuickCheck(SqliteDb& db, std::chrono::milliseconds budget) {
  const SqliteLibrary& sqlite = db.lib();
  int64_t deadline_ns = Env::Default()->MonotonicNs() + std::chrono::nanoseconds(budget).count();
  sqlite.progress_handler(db.raw(), 10'000, &PastDeadline, &deadline_ns);
  std::string finding;
  int rc = SQLITE_OK;
  {
    sqlite3_stmt* stmt = nullptr;
    rc = sqlite.prepare_v2(db.raw(), "PRAGMA quick_check(1)", -1, &stmt, nullptr);
    if (rc == SQLITE_OK) {
      rc = sqlite.step(stmt);
      if (rc == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite.column_text(stmt, 0));
        finding = text != nullptr ? text : "";
      }
    }
    if (rc != SQLITE_ROW) finding = sqlite.errmsg(db.raw());
    sqlite.finalize(stmt);
  }
  sqlite.progress_handler(db.raw(), 0, nullptr, nullptr);
  if (rc == SQLITE_INTERRUPT) return false;
  if (rc == SQLITE_ROW && finding == "ok") return true;
  // "*** in database main ***\nPage 5: btreeInitPage() returns error code 11": one line.
  if (finding.starts_with("*** in database main ***\n")) finding.erase(0, 25);
  std::replace(finding.begin(), finding.end(), '\n', ' ');
  return CorruptDatabase(db.path(), " quick_check", finding);
}

Status Migrate(SqliteDb& db) {
  CGOV_ASSIGN_OR_RETURN(int64_t version, db.QueryInt("PRAGMA user_version"));
  if (version >= kHistorySchemaVersion) return Status::Ok();
  CGOV_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  for (auto v = static_cast<size_t>(version); v < Migrations().size(); ++v) {
    Status step = db.Exec(Migrations()[v]);
    if (!step.ok()) {
      (void)db.Exec("ROLLBACK");
      return step.WithContext(fmt::format("migrating the schema to version {}", v + 1));
    }
  }
  CGOV_RETURN_IF_ERROR(db.Exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {}",
                                           kApplicationId, kHistorySchemaVersion)));
  return db.Exec("COMMIT");
}

// The pid recorded by the writer holding the lock, for the error message.
std::string LockHolder(SqliteDb& db) {
  Result<SqliteStmt> stmt = db.Prepare("SELECT value FROM meta WHERE key = 'writer_pid'");
  if (!stmt.ok()) return "";
  Result<bool> row = stmt->Step();
  if (!row.ok() || !*row) return "";
  std::string pid(stmt->Text(0));
  stmt->Reset();
  return " (pid " + pid + ")";
}

Result<int> TakeWriterLock(const std::string& path, SqliteDb& db) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(fmt::format("{}: {}", path, std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Unavailable(
          fmt::format("{}: another cgov is writing to this database{}; one writer at a time "
                      "(reports can run alongside it)",
                      path, LockHolder(db)));
    }
    return IoError(fmt::format("{}: cannot lock: {}", path, std::strerror(err)));
  }
  return fd;
}

}  // namespace

Status CheckNoWriter(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Ok();  // nothing there (or nothing a writer could hold either)
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases the lock if it was taken
  if (!held) return Status::Ok();
  std::string holder;
  if (auto db = SqliteDb::Open(path, SqliteDb::OpenMode::kReadOnly); db.ok()) {
    holder = LockHolder(**db);
  }
  return Unavailable(fmt::format("{}: a cgov is writing to this database{}", path, holder));
}

std::string HistoryStore::FileChange() const {
  if (lock_fd_ < 0) return "";
  struct stat open {};
  struct stat named {};
  if (::fstat(lock_fd_, &open) != 0) return "";
  if (::stat(path_.c_str(), &named) != 0) {
    return errno == ENOENT ? "was removed" : "";  // another error says nothing of the file
  }
  if (open.st_dev != named.st_dev || open.st_ino != named.st_ino) {
    return "was replaced by another file";
  }
  return "";
}

// Removes the database file `path` that this process created, and SQLite's files beside it,
// after a failed open (a full disk: SQLite made the file, then could not write its first page),
// so that no empty database is left behind. Only while no writer holds it and it is still empty:
// another cgov may have opened it meanwhile.
void RemoveCreatedDatabase(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st {};
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &st) == 0 && st.st_size == 0) {
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    if (ec || wal == 0) {
      for (const char* suffix : {"-wal", "-shm", "-journal", ""}) {
        std::filesystem::remove(path + suffix, ec);
      }
    }
  }
  ::close(fd);
}

namespace {

// Why a new database could not be created at `path`, by name: its directory missing or not
// writable by this user.
Status CannotCreate(const std::string& path, int err) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (err == ENOENT) {
    return IoError(
        fmt::format("{}: cannot create the database: directory {} does not exist", path, dir));
  }
  if (err == EACCES || err == EPERM || err == EROFS) {
    return IoError(
        fmt::format("{}: cannot create the database: {}: directory {} is not writable by uid {}",
                    path, std::strerror(err), dir, ::geteuid()));
  }
  return IoError(fmt::format("{}: cannot create the database: {}", path, std::strerror(err)));
}

}  // namespace

Result<std::unique_ptr<HistoryStore>> HistoryStore::Open(const std::string& path, Mode mode) {
  // A FIFO would block every open; a device (/dev/null) would get a journal written beside it.
  CGOV_RETURN_IF_ERROR(CheckRegularOrAbsent(path, "--db"));
  // A writer creates a new database itself, so that it knows the file is its own to remove if
  // the open then fails (SQLite would create it as well, and leave it empty).
  bool created = false;
  if (mode == Mode::kWrite) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      created = true;
      ::close(fd);
    } else if (errno != EEXIST) {
      // SQLite would say only "unable to open database file": name the cause.
      return CannotCreate(path, errno);
    }
  }
  Result<std::unique_ptr<HistoryStore>> store = OpenFile(path, mode, /*exists=*/!created);
  if (!store.ok() && created) RemoveCreatedDatabase(path);
  return store;
}

Result<std::unique_ptr<HistoryStore>> HistoryStore::OpenFile(const std::string& path, Mode mode,
                                                             bool exists_before) {
  std::error_code ec;
  const bool exists = exists_before && std::filesystem::exists(path, ec);
  if (mode == Mode::kRead && !exists && ec) {
    return IoError(
        fmt::format("{}: cannot read: {} (uid {}; a daemon run by systemd keeps its database "
                    "readable by root only: sudo)",
                    path, ec.message(), ::geteuid()));
  }
  if (mode == Mode::kRead && !exists) {
    return NotFound(
        fmt::format("{}: no such database (cgov daemon --db or cgov demo --db creates one)", path));
  }
  if (exists && !LooksLikeSqlite(path)) {
    return InvalidArgument(fmt::format("{}: not a SQLite database; nothing was changed", path));
  }
  const auto open_mode =
      mode == Mode::kRead ? SqliteDb::OpenMode::kReadOnly : SqliteDb::OpenMode::kCreate;
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path, open_mode));
  CGOV_RETURN_IF_ERROR(db->Exec("PRAGMA busy_timeout = 5000"));
  if (mode == Mode::kWrite) {
    // A writer appends at the end of its tables and reads a database through once (the quick
    // check below): SQLite's default 2 MiB page cache would only fill up with pages it never
    // reads again, and stay in the daemon's memory for good (docs/benchmarks.md).
    CGOV_RETURN_IF_ERROR(db->Exec(fmt::format("PRAGMA cache_size = -{}", kWriterCacheKib)));
  }
  CGOV_RETURN_IF_ERROR(CheckIdentity(*db));
  // A writer looks at every page before it writes anything (docs/history-db.md: a corrupt
  // database is left as it is), for at most kWriterCheckBudget; a check cut short is said, never
  // hidden. A reader does not: a report costs what its window costs, and a corrupt page it does
  // read is SQLite's error, said as such (SqliteDb::Error).
  bool checked = false;
  int lock_fd = -1;
  if (mode == Mode::kWrite) {
    CGOV_ASSIGN_OR_RETURN(checked, QuickCheck(*db, kWriterCheckBudget));
    CGOV_ASSIGN_OR_RETURN(lock_fd, TakeWriterLock(path, *db));
  }
  std::unique_ptr<HistoryStore> store(new HistoryStore(std::move(db), path, lock_fd));
  store->fully_checked_ = checked;
  if (mode == Mode::kWrite) {
    CGOV_RETURN_IF_ERROR(store->PrepareWriter());
  } else {
    // An older cgov's database reads as it is: version 1 lacks gpu_event, 1 and 2 the MIG columns.
    CGOV_ASSIGN_OR_RETURN(store->schema_version_, store->db_->QueryInt("PRAGMA user_version"));
    if (store->schema_version_ < 1) {
      return InvalidArgument(fmt::format(
          "{}: schema version {} needs migrating: open it once with a writer (cgov daemon) first",
          path, store->schema_version_));
    }
  }
  CGOV_RETURN_IF_ERROR(store->LoadCaches());
  return store;
}

HistoryStore::~HistoryStore() {
  insert_tick_ = {};
  put_rollup_ = {};
  put_identity_rollup_ = {};
  put_session_ = {};
  set_meta_ = {};
  db_.reset();
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status HistoryStore::PrepareWriter() {
  // WAL: readers never block the writer. NORMAL: a commit is durable once the WAL is
  // checkpointed; a power loss can lose the last commits, a process crash loses nothing.
  CGOV_RETURN_IF_ERROR(db_->Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"));
  CGOV_RETURN_IF_ERROR(Migrate(*db_));
  CGOV_ASSIGN_OR_RETURN(
      insert_tick_, db_->Prepare("INSERT OR IGNORE INTO tick (ts_ms, run, data) VALUES (?,?,?)"));
  CGOV_ASSIGN_OR_RETURN(
      put_rollup_,
      db_->Prepare("INSERT OR REPLACE INTO gpu_hour (hour, gpu, data) VALUES (?,?,?)"));
  CGOV_ASSIGN_OR_RETURN(
      put_identity_rollup_,
      db_->Prepare(
          "INSERT OR REPLACE INTO identity_hour (hour, identity, gpu, data) VALUES (?,?,?,?)"));
  CGOV_ASSIGN_OR_RETURN(
      put_session_, db_->Prepare("INSERT OR REPLACE INTO session (start_ms, gpu, pid, end_ms, "
                                 "identity, command, held_ms, idle_held_ms, mem_max_mib, "
                                 "idle_streak_ms, idle_streak_max_ms, idle_streak_max_start_ms, "
                                 "open, idle_held_share_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  CGOV_ASSIGN_OR_RETURN(set_meta_,
                        db_->Prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?,?)"));
  return SetMeta("writer_pid", std::to_string(::getpid()));
}

Status HistoryStore::LoadCaches() {
  CGOV_ASSIGN_OR_RETURN(std::vector<GpuRecord> gpus, Gpus());
  for (GpuRecord& g : gpus) gpus_[g.uuid] = g;
  CGOV_ASSIGN_OR_RETURN(auto identities, Identities());
  for (const auto& [id, record] : identities) identities_[record.Key()] = id;
  CGOV_ASSIGN_OR_RETURN(auto commands, Commands());
  for (const auto& [id, name] : commands) commands_[name] = id;
  CGOV_ASSIGN_OR_RETURN(std::string watermark, Meta("rollup_watermark_ms"));
  watermark_ms_ = watermark.empty() ? 0 : std::stoll(watermark);
  return Status::Ok();
}

Status HistoryStore::BeginSnapshot() {
  CGOV_RETURN_IF_ERROR(db_->Exec("BEGIN"));
  Result<std::string> watermark = Meta("rollup_watermark_ms");  // the first read fixes the snapshot
  if (!watermark.ok()) {
    EndSnapshot();
    return watermark.status();
  }
  watermark_ms_ = watermark->empty() ? 0 : std::stoll(*watermark);
  return Status::Ok();
}

void HistoryStore::EndSnapshot() { (void)db_->Exec("COMMIT"); }

Status HistoryStore::Begin() { return db_->Exec("BEGIN IMMEDIATE"); }
Status HistoryStore::Commit() { return db_->Exec("COMMIT"); }
void HistoryStore::Rollback() { (void)db_->Exec("ROLLBACK"); }

std::string GpuRecord::Label() const {
  return index < 0 ? "?" : GpuLabel(static_cast<unsigned>(index), mig);
}

Result<uint32_t> HistoryStore::GpuId(const GpuRecord& gpu) {
  auto it = gpus_.find(gpu.uuid);
  if (it != gpus_.end() && it->second.index == gpu.index && it->second.name == gpu.name &&
      it->second.mem_total_mib == gpu.mem_total_mib && it->second.pci_bus_id == gpu.pci_bus_id &&
      it->second.mig == gpu.mig) {
    return it->second.id;
  }
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          "INSERT INTO gpu (uuid, idx, name, mem_total_mib, pci_bus_id, mig_profile, "
          "gpu_instance_id, compute_instance_id, mig_slices, parent_uuid, parent_name, "
          "price_share) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (uuid) DO UPDATE SET idx = "
          "excluded.idx, name = excluded.name, mem_total_mib = excluded.mem_total_mib, pci_bus_id "
          "= excluded.pci_bus_id, mig_profile = excluded.mig_profile, gpu_instance_id = "
          "excluded.gpu_instance_id, compute_instance_id = excluded.compute_instance_id, "
          "mig_slices = excluded.mig_slices, parent_uuid = excluded.parent_uuid, parent_name = "
          "excluded.parent_name, price_share = excluded.price_share"));
  stmt.Bind(1, gpu.uuid).Bind(2, gpu.index).Bind(3, gpu.name).Bind(5, gpu.pci_bus_id);
  if (gpu.mem_total_mib) stmt.Bind(4, static_cast<int64_t>(*gpu.mem_total_mib));
  if (gpu.mig) {
    stmt.Bind(6, gpu.mig->profile)
        .Bind(7, static_cast<int64_t>(gpu.mig->gpu_instance_id))
        .Bind(8, static_cast<int64_t>(gpu.mig->compute_instance_id))
        .Bind(9, static_cast<int64_t>(gpu.mig->slices))
        .Bind(10, gpu.mig->parent_uuid)
        .Bind(11, gpu.mig->parent_name)
        .BindDouble(12, gpu.mig->price_share);
  }
  CGOV_RETURN_IF_ERROR(stmt.Run());
  // An update leaves the last rowid as it was: the id is read back by the uuid.
  CGOV_ASSIGN_OR_RETURN(SqliteStmt find, db_->Prepare("SELECT id FROM gpu WHERE uuid = ?"));
  find.Bind(1, gpu.uuid);
  CGOV_ASSIGN_OR_RETURN(bool row, find.Step());
  if (!row) return Internal(fmt::format("{}: no id for GPU {}", path_, gpu.uuid));
  GpuRecord stored = gpu;
  stored.id = static_cast<uint32_t>(find.Int(0));
  find.Reset();
  gpus_[gpu.uuid] = stored;
  return stored.id;
}

Result<uint32_t> HistoryStore::IdentityId(const IdentityRecord& identity) {
  auto key = identity.Key();
  if (auto it = identities_.find(key); it != identities_.end()) return it->second;
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          "INSERT INTO identity (user, owner, pod, container, slurm_job, project, team, tags) "
          "VALUES (?,?,?,?,?,?,?,?)"));
  stmt.Bind(1, identity.user)
      .Bind(2, identity.owner)
      .Bind(3, identity.pod)
      .Bind(4, identity.container)
      .Bind(5, identity.slurm_job)
      .Bind(6, identity.project)
      .Bind(7, identity.team)
      .Bind(8, identity.tags);
  CGOV_RETURN_IF_ERROR(stmt.Run());
  const auto id = static_cast<uint32_t>(db_->LastInsertRowid());
  identities_.emplace(std::move(key), id);
  return id;
}

Result<uint32_t> HistoryStore::CommandId(const std::string& name) {
  if (auto it = commands_.find(name); it != commands_.end()) return it->second;
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("INSERT INTO command (name) VALUES (?)"));
  stmt.Bind(1, name);
  CGOV_RETURN_IF_ERROR(stmt.Run());
  const auto id = static_cast<uint32_t>(db_->LastInsertRowid());
  commands_.emplace(name, id);
  return id;
}

Result<RunRecord> HistoryStore::BeginRun(const std::string& source, int64_t started_ms,
                                         int64_t interval_ms, const std::string& hostname) {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("INSERT INTO run (started_ms, interval_ms, source, hostname) VALUES (?,?,?,?)"));
  stmt.Bind(1, started_ms).Bind(2, interval_ms).Bind(3, source).Bind(4, hostname);
  CGOV_RETURN_IF_ERROR(stmt.Run());
  RunRecord run{static_cast<uint32_t>(db_->LastInsertRowid()), started_ms, interval_ms, source,
                hostname};
  return run;
}

Result<bool> HistoryStore::AppendTick(int64_t ts_ms, uint32_t run_id, const StoredTick& tick) {
  thread_local std::string buffer;
  buffer.clear();
  EncodeTick(tick, &buffer);
  return AppendEncodedTick(ts_ms, run_id, buffer);
}

Result<bool> HistoryStore::AppendEncodedTick(int64_t ts_ms, uint32_t run_id,
                                             std::string_view data) {
  insert_tick_.Bind(1, ts_ms).Bind(2, int64_t{run_id}).BindBlob(3, data);
  CGOV_RETURN_IF_ERROR(insert_tick_.Run());
  return db_->Changes() > 0;
}

Status HistoryStore::PutRollup(const RollupRow& row) {
  if (row.identity_id == 0) {
    put_rollup_.Bind(1, row.hour).Bind(2, int64_t{row.gpu_id}).BindBlob(3, row.data);
    return put_rollup_.Run();
  }
  put_identity_rollup_.Bind(1, row.hour)
      .Bind(2, int64_t{row.identity_id})
      .Bind(3, int64_t{row.gpu_id})
      .BindBlob(4, row.data);
  return put_identity_rollup_.Run();
}

Status HistoryStore::PutSession(const SessionRecord& s) {
  put_session_.Bind(1, s.start_ms)
      .Bind(2, int64_t{s.gpu_id})
      .Bind(3, int64_t{s.pid})
      .Bind(4, s.end_ms)
      .Bind(5, int64_t{s.identity_id})
      .Bind(6, int64_t{s.command_id})
      .Bind(7, s.held_ms)
      .Bind(8, s.idle_held_ms)
      .Bind(9, int64_t{s.mem_max_mib})
      .Bind(10, s.idle_streak_ms)
      .Bind(11, s.idle_streak_max_ms)
      .Bind(12, s.idle_streak_max_start_ms)
      .Bind(13, int64_t{s.open ? 1 : 0})
      .Bind(14, s.idle_held_share_ms);
  return put_session_.Run();
}

Status HistoryStore::SetWatermark(int64_t watermark_ms) {
  CGOV_RETURN_IF_ERROR(SetMeta("rollup_watermark_ms", std::to_string(watermark_ms)));
  watermark_ms_ = watermark_ms;
  return Status::Ok();
}

Result<int64_t> HistoryStore::PruneTicks(int64_t before_ms) {
  // Events go with their ticks, except each GPU's latest memory_health: a state, recorded only
  // when it changes, that stays true until the next one.
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt events,
      db_->Prepare("DELETE FROM gpu_event WHERE ts_ms < ?1 AND (kind != 'memory_health' OR ts_ms < "
                   "(SELECT max(f.ts_ms) FROM gpu_event f WHERE f.gpu = gpu_event.gpu AND f.kind = "
                   "'memory_health'))"));
  events.Bind(1, std::min(before_ms, watermark_ms_));
  CGOV_RETURN_IF_ERROR(events.Run());
  const int64_t cut_ms = std::min(before_ms, watermark_ms_);
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("DELETE FROM tick WHERE ts_ms < ?"));
  stmt.Bind(1, cut_ms);
  CGOV_RETURN_IF_ERROR(stmt.Run());
  const int64_t pruned = db_->Changes();
  // What was pruned, for the report's note: a history that merely starts later was not.
  if (pruned > 0) {
    CGOV_ASSIGN_OR_RETURN(std::optional<int64_t> before, RawPrunedBeforeMs());
    if (!before || *before < cut_ms) {
      CGOV_RETURN_IF_ERROR(SetMeta("raw_pruned_before_ms", std::to_string(cut_ms)));
    }
  }
  return pruned;
}

Result<std::optional<int64_t>> HistoryStore::RawPrunedBeforeMs() const {
  CGOV_ASSIGN_OR_RETURN(std::string text, Meta("raw_pruned_before_ms"));
  if (text.empty()) return std::optional<int64_t>();
  int64_t ms = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Internal(fmt::format("{}: table meta, key raw_pruned_before_ms: not a number: {}", path_,
                                SafeText(text)));
  }
  return std::optional<int64_t>(ms);
}

Status HistoryStore::PutEvent(const GpuEventRecord& e) {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("INSERT INTO gpu_event (ts_ms, gpu, kind, code) VALUES (?, ?, ?, ?)"));
  stmt.Bind(1, e.ts_ms).Bind(2, int64_t{e.gpu_id}).Bind(3, e.kind).Bind(4, e.code);
  return stmt.Run();
}

Status HistoryStore::PutPolicyAction(const PolicyActionRecord& a) {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("INSERT INTO policy_action (ts_ms, policy, action, gpu, pid, user, command, "
                   "idle_held_ms, outcome, uids) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  stmt.Bind(1, a.ts_ms)
      .Bind(2, a.policy)
      .Bind(3, a.action)
      .Bind(4, int64_t{a.gpu_id})
      .Bind(5, int64_t{a.pid})
      .Bind(6, a.user)
      .Bind(7, a.command)
      .Bind(8, a.idle_held_ms)
      .Bind(9, a.outcome)
      .Bind(10, a.uids);
  return stmt.Run();
}

Result<std::vector<PolicyActionRecord>> HistoryStore::PolicyActions(int64_t since_ms,
                                                                    int64_t until_ms) const {
  std::vector<PolicyActionRecord> out;
  if (schema_version_ < 7) return out;
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(fmt::format(
          "SELECT ts_ms, policy, action, gpu, pid, user, command, idle_held_ms, outcome, {} FROM "
          "policy_action WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms, rowid",
          schema_version_ >= 8 ? "coalesce(uids, '')" : "''")));
  stmt.Bind(1, since_ms).Bind(2, until_ms);
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    out.push_back({stmt.Int(0), stmt.SafeString(1), stmt.SafeString(2),
                   static_cast<uint32_t>(stmt.Int(3)), static_cast<uint32_t>(stmt.Int(4)),
                   stmt.SafeString(5), stmt.SafeString(6), stmt.Int(7), stmt.SafeString(8),
                   stmt.SafeString(9)});
  }
}

namespace {

void BindPrice(SqliteStmt& stmt, int column, const std::optional<int64_t>& price) {
  if (price) stmt.Bind(column, *price);
}

std::optional<int64_t> PriceColumn(const SqliteStmt& stmt, int column) {
  if (stmt.IsNull(column)) return std::nullopt;
  return stmt.Int(column);
}

}  // namespace

Status HistoryStore::PutPrice(uint32_t gpu_id, int64_t since_ms, const PriceRecord& price) {
  // The price in effect now: unchanged means no new row (a restart with the same flags).
  using Prices = std::map<uint32_t, PriceRecord>;
  CGOV_ASSIGN_OR_RETURN(Prices now, PricesAt(since_ms));
  if (auto it = now.find(gpu_id); it != now.end() && it->second == price) return Status::Ok();
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          "INSERT OR REPLACE INTO gpu_price (gpu, since_ms, micro_usd, on_demand_micro_usd, "
          "spot_micro_usd, is_spot, source) VALUES (?, ?, ?, ?, ?, ?, ?)"));
  stmt.Bind(1, int64_t{gpu_id})
      .Bind(2, since_ms)
      .Bind(6, int64_t{price.is_spot ? 1 : 0})
      .Bind(7, price.source);
  BindPrice(stmt, 3, price.micro_usd);
  BindPrice(stmt, 4, price.on_demand_micro_usd);
  BindPrice(stmt, 5, price.spot_micro_usd);
  return stmt.Run();
}

Result<std::map<uint32_t, PriceRecord>> HistoryStore::PricesAt(int64_t at_ms) const {
  std::map<uint32_t, PriceRecord> out;
  if (schema_version_ < 4) return out;  // written before cgov recorded prices
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("SELECT gpu, micro_usd, on_demand_micro_usd, spot_micro_usd, is_spot, source "
                   "FROM gpu_price WHERE since_ms <= ? ORDER BY gpu, since_ms"));
  stmt.Bind(1, at_ms);
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    PriceRecord& p = out[static_cast<uint32_t>(stmt.Int(0))];  // the latest row wins
    p.micro_usd = PriceColumn(stmt, 1);
    p.on_demand_micro_usd = PriceColumn(stmt, 2);
    p.spot_micro_usd = PriceColumn(stmt, 3);
    p.is_spot = stmt.Int(4) != 0;
    p.source = stmt.SafeString(5);
  }
}

Result<std::vector<GpuEventRecord>> HistoryStore::Events(int64_t since_ms, int64_t until_ms) const {
  if (schema_version_ < 2) return std::vector<GpuEventRecord>{};  // no gpu_event table yet
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("SELECT ts_ms, gpu, kind, code FROM gpu_event WHERE ts_ms >= ? AND ts_ms < ? "
                   "ORDER BY ts_ms, gpu"));
  stmt.Bind(1, since_ms).Bind(2, until_ms);
  std::vector<GpuEventRecord> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    out.push_back(
        {stmt.Int(0), static_cast<uint32_t>(stmt.Int(1)), stmt.SafeString(2), stmt.Int(3)});
  }
}

Result<std::vector<GpuEventRecord>> HistoryStore::LatestEvents(std::string_view kind,
                                                               int64_t until_ms) const {
  if (schema_version_ < 2) return std::vector<GpuEventRecord>{};
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("SELECT e.ts_ms, e.gpu, e.kind, e.code FROM gpu_event e WHERE e.kind = ?1 AND "
                   "e.ts_ms = (SELECT max(f.ts_ms) FROM gpu_event f WHERE f.gpu = e.gpu AND f.kind "
                   "= ?1 AND f.ts_ms < ?2) ORDER BY e.gpu, e.rowid"));
  stmt.Bind(1, kind).Bind(2, until_ms);
  std::vector<GpuEventRecord> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    GpuEventRecord e{stmt.Int(0), static_cast<uint32_t>(stmt.Int(1)), stmt.SafeString(2),
                     stmt.Int(3)};
    if (!out.empty() && out.back().gpu_id == e.gpu_id)
      out.back() = e;  // same ms: the later row
    else
      out.push_back(std::move(e));
  }
}

Result<std::vector<GpuRecord>> HistoryStore::Gpus() const {
  // Before schema 3 there were no MIG columns (and no MIG instances).
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          schema_version_ >= 3
              ? "SELECT id, uuid, idx, name, mem_total_mib, pci_bus_id, mig_profile, "
                "gpu_instance_id, compute_instance_id, mig_slices, parent_uuid, parent_name, "
                "price_share FROM gpu ORDER BY id"
              : "SELECT id, uuid, idx, name, mem_total_mib, pci_bus_id FROM gpu ORDER BY id"));
  std::vector<GpuRecord> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    GpuRecord g{static_cast<uint32_t>(stmt.Int(0)),
                stmt.SafeString(1),
                stmt.Int(2),
                stmt.SafeString(3),
                std::nullopt,
                stmt.SafeString(5),
                "",
                {}};
    if (!stmt.IsNull(4)) g.mem_total_mib = static_cast<uint64_t>(stmt.Int(4));
    if (schema_version_ >= 3 && !stmt.IsNull(7)) {
      MigInstance mig;
      mig.profile = stmt.SafeString(6);
      mig.gpu_instance_id = static_cast<unsigned>(stmt.Int(7));
      mig.compute_instance_id = static_cast<unsigned>(stmt.Int(8));
      mig.slices = static_cast<unsigned>(stmt.Int(9));
      mig.parent_uuid = stmt.SafeString(10);
      mig.parent_name = stmt.SafeString(11);
      mig.price_share = stmt.Double(12);
      g.mig = std::move(mig);
    }
    out.push_back(std::move(g));
  }
}

Result<std::map<uint32_t, IdentityRecord>> HistoryStore::Identities() const {
  // The Kubernetes names beside each identity's pod UID and container id (version 5 on).
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          schema_version_ >= 5
              ? "SELECT i.id, i.user, i.owner, i.pod, i.container, i.slurm_job, i.project, i.team, "
                "i.tags, coalesce(p.namespace, ''), coalesce(p.name, ''), coalesce(c.name, '') "
                "FROM identity i LEFT JOIN kube_pod p ON p.uid = i.pod AND i.pod != '' LEFT JOIN "
                "kube_container c ON c.id = i.container AND i.container != ''"
              : "SELECT id, user, owner, pod, container, slurm_job, project, team, tags, '', '', "
                "'' FROM identity"));
  std::map<uint32_t, IdentityRecord> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    IdentityRecord r;
    r.id = static_cast<uint32_t>(stmt.Int(0));
    std::string* fields[] = {&r.user,
                             &r.owner,
                             &r.pod,
                             &r.container,
                             &r.slurm_job,
                             &r.project,
                             &r.team,
                             &r.tags,
                             &r.kube_namespace,
                             &r.kube_pod_name,
                             &r.kube_container_name};
    for (int i = 0; i < 11; ++i) *fields[i] = stmt.SafeString(i + 1);
    out[r.id] = std::move(r);
  }
}

Status HistoryStore::RecordKubeNames(const IdentityRecord& identity) {
  if (!identity.pod.empty() && !identity.kube_pod_name.empty()) {
    auto names = std::make_pair(identity.kube_namespace, identity.kube_pod_name);
    auto it = kube_pods_.find(identity.pod);
    if (it == kube_pods_.end() || it->second != names) {
      CGOV_ASSIGN_OR_RETURN(
          SqliteStmt stmt,
          db_->Prepare("INSERT OR REPLACE INTO kube_pod (uid, namespace, name) VALUES (?,?,?)"));
      stmt.Bind(1, identity.pod).Bind(2, identity.kube_namespace).Bind(3, identity.kube_pod_name);
      CGOV_RETURN_IF_ERROR(stmt.Run());
      kube_pods_[identity.pod] = std::move(names);
    }
  }
  if (!identity.container.empty() && !identity.kube_container_name.empty()) {
    auto it = kube_containers_.find(identity.container);
    if (it == kube_containers_.end() || it->second != identity.kube_container_name) {
      CGOV_ASSIGN_OR_RETURN(
          SqliteStmt stmt,
          db_->Prepare("INSERT OR REPLACE INTO kube_container (id, pod_uid, name) VALUES (?,?,?)"));
      stmt.Bind(1, identity.container).Bind(2, identity.pod).Bind(3, identity.kube_container_name);
      CGOV_RETURN_IF_ERROR(stmt.Run());
      kube_containers_[identity.container] = identity.kube_container_name;
    }
  }
  return Status::Ok();
}

Result<std::map<uint32_t, std::string>> HistoryStore::Commands() const {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("SELECT id, name FROM command"));
  std::map<uint32_t, std::string> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    out[static_cast<uint32_t>(stmt.Int(0))] = stmt.SafeString(1);
  }
}

Result<std::map<uint32_t, RunRecord>> HistoryStore::Runs() const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("SELECT id, started_ms, interval_ms, source, hostname FROM run"));
  std::map<uint32_t, RunRecord> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    const auto id = static_cast<uint32_t>(stmt.Int(0));
    out[id] = RunRecord{id, stmt.Int(1), stmt.Int(2), stmt.SafeString(3), stmt.SafeString(4)};
  }
}

Result<std::string> HistoryStore::Meta(const std::string& key) const {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("SELECT value FROM meta WHERE key = ?"));
  stmt.Bind(1, key);
  CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::string();
  std::string value(stmt.Text(0));
  stmt.Reset();
  return value;
}

Status HistoryStore::SetMeta(const std::string& key, const std::string& value) {
  set_meta_.Bind(1, key).Bind(2, value);
  return set_meta_.Run();
}

Result<std::optional<std::pair<int64_t, int64_t>>> HistoryStore::TickRange() const {
  // Two queries: SQLite answers min() or max() alone from the key, both together by a scan.
  CGOV_ASSIGN_OR_RETURN(SqliteStmt first, db_->Prepare("SELECT min(ts_ms) FROM tick"));
  CGOV_ASSIGN_OR_RETURN(SqliteStmt last, db_->Prepare("SELECT max(ts_ms) FROM tick"));
  CGOV_ASSIGN_OR_RETURN(bool row, first.Step());
  CGOV_ASSIGN_OR_RETURN(bool row2, last.Step());
  std::optional<std::pair<int64_t, int64_t>> range;
  if (row && row2 && !first.IsNull(0)) range = std::make_pair(first.Int(0), last.Int(0));
  first.Reset();
  last.Reset();
  return range;
}

Result<bool> HistoryStore::HasTick(int64_t ts_ms) const {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("SELECT 1 FROM tick WHERE ts_ms = ?"));
  stmt.Bind(1, ts_ms);
  CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
  stmt.Reset();
  return row;
}

Status HistoryStore::ForEachTick(int64_t from_ms, int64_t to_ms, const TickFn& fn) const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          "SELECT ts_ms, run, data FROM tick WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms"));
  stmt.Bind(1, from_ms).Bind(2, to_ms);
  StoredTick tick;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return Status::Ok();
    const int64_t ts = stmt.Int(0);
    Status decoded = DecodeTick(stmt.Blob(2), fmt::format("{}: tick {}", path_, ts), &tick);
    Status done = decoded.ok() ? fn(ts, static_cast<uint32_t>(stmt.Int(1)), tick) : decoded;
    if (!done.ok()) {
      stmt.Reset();
      return done;
    }
  }
}

Status HistoryStore::ForEachRollup(int64_t from_hour, int64_t to_hour, bool identities,
                                   const std::function<Status(const RollupRow&)>& fn) const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(
          identities
              ? "SELECT hour, identity, gpu, data FROM identity_hour WHERE hour >= ? AND hour < ?"
              : "SELECT hour, 0, gpu, data FROM gpu_hour WHERE hour >= ? AND hour < ?"));
  stmt.Bind(1, from_hour).Bind(2, to_hour);
  RollupRow r;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return Status::Ok();
    r.hour = stmt.Int(0);
    r.identity_id = static_cast<uint32_t>(stmt.Int(1));
    r.gpu_id = static_cast<uint32_t>(stmt.Int(2));
    r.data.assign(stmt.Blob(3));
    Status done = fn(r);
    if (!done.ok()) {
      stmt.Reset();
      return done;
    }
  }
}

namespace {

Result<std::vector<SessionRecord>> ReadSessions(SqliteStmt& stmt) {
  std::vector<SessionRecord> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return out;
    SessionRecord s;
    s.start_ms = stmt.Int(0);
    s.gpu_id = static_cast<uint32_t>(stmt.Int(1));
    s.pid = static_cast<uint32_t>(stmt.Int(2));
    s.end_ms = stmt.Int(3);
    s.identity_id = static_cast<uint32_t>(stmt.Int(4));
    s.command_id = static_cast<uint32_t>(stmt.Int(5));
    s.held_ms = stmt.Int(6);
    s.idle_held_ms = stmt.Int(7);
    s.mem_max_mib = static_cast<uint32_t>(stmt.Int(8));
    s.idle_streak_ms = stmt.Int(9);
    s.idle_streak_max_ms = stmt.Int(10);
    s.idle_streak_max_start_ms = stmt.Int(11);
    s.open = stmt.Int(12) != 0;
    s.idle_held_share_ms = stmt.IsNull(13) ? s.idle_held_ms : stmt.Int(13);
    out.push_back(s);
  }
}

// A database written before version 9 has no idle_held_share_ms (read as NULL).
std::string SessionColumns(int64_t schema_version) {
  return fmt::format(
      "SELECT start_ms, gpu, pid, end_ms, identity, command, held_ms, idle_held_ms, mem_max_mib, "
      "idle_streak_ms, idle_streak_max_ms, idle_streak_max_start_ms, open, {} FROM session ",
      schema_version >= 9 ? "idle_held_share_ms" : "NULL");
}

}  // namespace

Result<std::vector<SessionRecord>> HistoryStore::Sessions(int64_t since_ms,
                                                          int64_t until_ms) const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(SessionColumns(schema_version_) +
                   "WHERE (end_ms > ? AND start_ms < ?) OR open = 1 ORDER BY start_ms, gpu, pid"));
  stmt.Bind(1, since_ms).Bind(2, until_ms);
  return ReadSessions(stmt);
}

Result<std::optional<int64_t>> HistoryStore::FirstSessionStartMs(
    const std::vector<uint32_t>& identities, int64_t ended_since_ms) const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare("SELECT min(start_ms) FROM session WHERE end_ms >= ? AND identity = ?"));
  std::optional<int64_t> first;
  for (uint32_t id : identities) {
    stmt.Reset();
    stmt.Bind(1, ended_since_ms).Bind(2, static_cast<int64_t>(id));
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row && !stmt.IsNull(0)) first = std::min(first.value_or(stmt.Int(0)), stmt.Int(0));
  }
  return first;
}

Result<std::vector<SessionRecord>> HistoryStore::OpenSessions() const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt stmt,
      db_->Prepare(SessionColumns(schema_version_) + "WHERE open = 1 ORDER BY start_ms, gpu, pid"));
  return ReadSessions(stmt);
}

}  // namespace cgov
