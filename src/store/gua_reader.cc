#include "store/gua_reader.h"

#include <set>

#include <fmt/format.h>

#include "core/text.h"
#include "core/time_format.h"
#include "store/sqlite_db.h"

namespace cgov {
namespace {

Result<std::set<std::string>> Columns(SqliteDb& db, const std::string& table) {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare("SELECT name FROM pragma_table_info(?)"));
  stmt.Bind(1, table);
  std::set<std::string> names;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return names;
    names.emplace(stmt.Text(0));
  }
}

// "col" when the table has it, else "NULL": older schemas lack columns added later.
std::string Col(const std::set<std::string>& have, const std::string& name) {
  return have.count(name) ? name : "NULL";
}

std::optional<int64_t> OptInt(const SqliteStmt& s, int c) {
  if (s.IsNull(c)) return std::nullopt;
  return s.Int(c);
}

Status ReadHeader(SqliteDb& db, GuaSource* source) {
  CGOV_ASSIGN_OR_RETURN(auto tables, Columns(db, "gpu_sample"));
  CGOV_ASSIGN_OR_RETURN(auto procs, Columns(db, "proc_sample"));
  if (tables.empty() || procs.empty() || !tables.count("ts") || !tables.count("util_pct")) {
    return InvalidArgument(fmt::format(
        "{}: not a gpu-usage-audit database (no gpu_sample / proc_sample tables)", db.path()));
  }
  CGOV_ASSIGN_OR_RETURN(auto host, Columns(db, "host"));
  if (host.count("hostname")) {
    CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt, db.Prepare("SELECT hostname FROM host LIMIT 1"));
    CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) source->hostname = SafeText(stmt.Text(0));
    stmt.Reset();
  }
  CGOV_ASSIGN_OR_RETURN(auto runs, Columns(db, "daemon_run"));
  if (runs.count("interval_seconds")) {
    CGOV_ASSIGN_OR_RETURN(SqliteStmt stmt,
                          db.Prepare("SELECT id, started_at, interval_seconds FROM daemon_run"));
    for (;;) {
      CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      Result<int64_t> started = ParseTimestampMs(stmt.Text(1));
      if (!started.ok()) {
        return started.status().WithContext(
            fmt::format("{}: daemon_run id {}: started_at", db.path(), stmt.Int(0)));
      }
      // The interval weights every sample of the run: 0, negative, NaN or absurd values would
      // import as 0.00 GPU-hours (or as years per sample). gpu-usage-audit samples every
      // 1-3600 s.
      const double interval_s = stmt.Double(2);
      if (!(interval_s >= 0.1 && interval_s <= 3600)) {
        return InvalidArgument(fmt::format(
            "{}: daemon_run id {}: interval_seconds {}: must be between 0.1 and 3600; nothing "
            "was imported",
            db.path(), stmt.Int(0), SafeText(stmt.Text(2))));
      }
      source->runs[stmt.Int(0)] = {*started, interval_s};
    }
  }
  CGOV_ASSIGN_OR_RETURN(auto devices, Columns(db, "gpu_device"));
  if (devices.count("gpu_uuid")) {
    CGOV_ASSIGN_OR_RETURN(
        SqliteStmt stmt,
        db.Prepare(fmt::format("SELECT gpu_uuid, {}, {} FROM gpu_device", Col(devices, "name"),
                               Col(devices, "memory_total_mb"))));
    for (;;) {
      CGOV_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      source->devices[SafeText(stmt.Text(0))] = {SafeText(stmt.Text(1)), OptInt(stmt, 2)};
    }
  }
  return Status::Ok();
}

}  // namespace

Status ReadGuaDatabase(const std::string& path, GuaSource* source,
                       const std::function<Status(const GuaTick&)>& fn) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                        SqliteDb::Open(path, SqliteDb::OpenMode::kReadOnly));
  CGOV_RETURN_IF_ERROR(db->Exec("PRAGMA busy_timeout = 5000; BEGIN"));
  CGOV_RETURN_IF_ERROR(ReadHeader(*db, source));
  CGOV_ASSIGN_OR_RETURN(auto g, Columns(*db, "gpu_sample"));
  CGOV_ASSIGN_OR_RETURN(auto p, Columns(*db, "proc_sample"));
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt gpus,
      db->Prepare(fmt::format(
          "SELECT ts, gpu_uuid, {}, util_pct, {}, {}, {}, {} FROM gpu_sample ORDER BY ts, gpu_uuid",
          Col(g, "gpu_index"), Col(g, "memory_used_mb"), Col(g, "temperature_c"), Col(g, "power_w"),
          Col(g, "run_id"))));
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt procs,
      db->Prepare(fmt::format("SELECT ts, gpu_uuid, pid, {}, {}, {}, {}, {} FROM proc_sample ORDER "
                              "BY ts, gpu_uuid, pid",
                              Col(p, "mem_used_mb"), Col(p, "loginuid_user"), Col(p, "owner_user"),
                              Col(p, "process_name"), Col(p, "process_type"))));
  CGOV_ASSIGN_OR_RETURN(bool proc_row, procs.Step());
  CGOV_ASSIGN_OR_RETURN(bool gpu_row, gpus.Step());
  GuaTick tick;
  int64_t last_ms = INT64_MIN;
  while (gpu_row) {
    tick = GuaTick{};
    tick.ts_text = std::string(gpus.Text(0));
    Result<int64_t> ts = ParseTimestampMs(tick.ts_text);
    if (!ts.ok()) return ts.status().WithContext(fmt::format("{}: gpu_sample.ts", path));
    if (*ts <= last_ms) {
      return InvalidArgument(
          fmt::format("{}: gpu_sample.ts {} is not after the previous tick (mixed time zones?)",
                      path, SafeText(tick.ts_text)));
    }
    last_ms = tick.ts_ms = *ts;
    tick.run_id = OptInt(gpus, 7);
    while (gpu_row && gpus.Text(0) == tick.ts_text) {
      tick.gpus.push_back({SafeText(gpus.Text(1)), OptInt(gpus, 2), gpus.Int(3), OptInt(gpus, 4),
                           OptInt(gpus, 5), OptInt(gpus, 6)});
      CGOV_ASSIGN_OR_RETURN(gpu_row, gpus.Step());
    }
    // Process rows of earlier timestamps that match no GPU row are skipped.
    while (proc_row && procs.Text(0) < tick.ts_text) {
      CGOV_ASSIGN_OR_RETURN(proc_row, procs.Step());
    }
    while (proc_row && procs.Text(0) == tick.ts_text) {
      tick.processes.push_back({SafeText(procs.Text(1)), procs.Int(2), OptInt(procs, 3),
                                SafeText(procs.Text(4)), SafeText(procs.Text(5)),
                                SafeText(procs.Text(6)),
                                procs.IsNull(7) ? "compute" : SafeText(procs.Text(7))});
      CGOV_ASSIGN_OR_RETURN(proc_row, procs.Step());
    }
    CGOV_RETURN_IF_ERROR(fn(tick));
  }
  (void)db->Exec("COMMIT");
  return Status::Ok();
}

}  // namespace cgov
