#include "notify/notify_state.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "os/input_file.h"

namespace cgov {
namespace {

constexpr char kFormat[] = "cgov-notify-state/1";

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS incidents(rule TEXT NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL,
                                     PRIMARY KEY (rule, key));
CREATE TABLE IF NOT EXISTS outbox(seq INTEGER PRIMARY KEY, sink TEXT NOT NULL,
                                  notice_id TEXT NOT NULL, body TEXT NOT NULL,
                                  created_ms INTEGER NOT NULL, attempts INTEGER NOT NULL,
                                  next_ms INTEGER NOT NULL, last_error TEXT,
                                  given_up INTEGER NOT NULL DEFAULT 0, rcpt TEXT);
CREATE INDEX IF NOT EXISTS outbox_sink ON outbox(sink, given_up, seq);
CREATE TABLE IF NOT EXISTS mail_log(key TEXT PRIMARY KEY, queued_ms INTEGER NOT NULL,
                                    messages INTEGER NOT NULL, person TEXT NOT NULL);
)sql";

nlohmann::json IncidentJson(const Incident& i) {
  return {{"kind", NotifyRuleKindName(i.kind)},
          {"since_ms", i.since_ms},
          {"opened_ms", i.opened_ms},
          {"last_notice_ms", i.last_notice_ms},
          {"reminders", i.reminders},
          {"escalated_ms", i.escalated_ms},
          {"gpu_index", i.gpu.index},
          {"gpu_uuid", i.gpu.uuid},
          {"gpu_name", i.gpu.name},
          {"user", i.user},
          {"pid", i.pid},
          {"command", i.command},
          {"usd_per_hour", i.usd_per_hour},
          {"value_pct", i.value_pct},
          {"budget", i.budget},
          {"budget_usd", i.budget_usd},
          {"spent_usd", i.spent_usd},
          {"threshold_pct", i.threshold_pct}};
}

Result<Incident> IncidentOf(std::string_view rule, std::string_view key, std::string_view data,
                            const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
  Incident i;
  i.rule = rule;
  i.key = key;
  bool known = false;
  for (NotifyRuleKind k :
       {NotifyRuleKind::kIdleHeld, NotifyRuleKind::kTrulyIdle, NotifyRuleKind::kLowUtilization,
        NotifyRuleKind::kMemoryHigh, NotifyRuleKind::kBudget}) {
    if (j.is_object() && j.value("kind", "") == NotifyRuleKindName(k)) {
      i.kind = k;
      known = true;
    }
  }
  if (!known) {
    return IoError(fmt::format("{}: incident {}/{}: not one this cgov wrote", path, rule, key));
  }
  i.since_ms = j.value("since_ms", int64_t{0});
  i.opened_ms = j.value("opened_ms", int64_t{0});
  i.last_notice_ms = j.value("last_notice_ms", int64_t{0});
  i.reminders = j.value("reminders", 0);
  i.escalated_ms = j.value("escalated_ms", int64_t{0});  // absent in files before the ladder
  i.gpu = {j.value("gpu_index", 0u), j.value("gpu_uuid", ""), j.value("gpu_name", "")};
  i.user = j.value("user", "");
  i.pid = j.value("pid", 0u);
  i.command = j.value("command", "");
  i.usd_per_hour = j.value("usd_per_hour", 0.0);
  i.value_pct = j.value("value_pct", 0.0);
  i.budget = j.value("budget", "");
  i.budget_usd = j.value("budget_usd", 0.0);
  i.spent_usd = j.value("spent_usd", 0.0);
  i.threshold_pct = j.value("threshold_pct", 0.0);
  return i;
}

}  // namespace

Result<std::unique_ptr<NotifyState>> NotifyState::Open(const std::string& path) {
  // A FIFO would hang SQLite's open, a device would get a journal beside it.
  CGOV_RETURN_IF_ERROR(CheckRegularOrAbsent(path, "--notify-state"));
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                        SqliteDb::Open(path, SqliteDb::OpenMode::kCreate));
  CGOV_RETURN_IF_ERROR(db->Exec("PRAGMA busy_timeout = 5000"));
  CGOV_ASSIGN_OR_RETURN(int64_t tables,
                        db->QueryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table'"));
  if (tables > 0) {
    CGOV_ASSIGN_OR_RETURN(int64_t ours,
                          db->QueryInt("SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                                       "AND name = 'meta'"));
    int64_t format = 0;
    if (ours > 0) {
      CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db->Prepare("SELECT count(*) FROM meta WHERE key = "
                                                      "'format' AND value = ?"));
      s.Bind(1, kFormat);
      CGOV_ASSIGN_OR_RETURN(bool row, s.Step());
      format = row ? s.Int(0) : 0;
    }
    if (format == 0) {
      return InvalidArgument(
          fmt::format("{}: not a cgov notifications state database (is it the history database?); "
                      "refusing to write to it",
                      path));
    }
  }
  CGOV_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL"));
  CGOV_RETURN_IF_ERROR(db->Exec(kSchema));
  // A state file from before e-mail to each person: its outbox gains the envelope column.
  CGOV_ASSIGN_OR_RETURN(
      int64_t has_rcpt,
      db->QueryInt("SELECT count(*) FROM pragma_table_info('outbox') WHERE name = 'rcpt'"));
  if (has_rcpt == 0) CGOV_RETURN_IF_ERROR(db->Exec("ALTER TABLE outbox ADD COLUMN rcpt TEXT"));
  CGOV_ASSIGN_OR_RETURN(SqliteStmt s,
                        db->Prepare("INSERT OR IGNORE INTO meta VALUES ('format', ?)"));
  CGOV_RETURN_IF_ERROR(s.Bind(1, kFormat).Run());
  return std::unique_ptr<NotifyState>(new NotifyState(std::move(db)));
}

Result<std::vector<Incident>> NotifyState::Incidents() const {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("SELECT rule, key, data FROM incidents ORDER "
                                                   "BY rule, key"));
  std::vector<Incident> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    CGOV_ASSIGN_OR_RETURN(Incident i, IncidentOf(s.Text(0), s.Text(1), s.Text(2), path()));
    out.push_back(std::move(i));
  }
  return out;
}

Status NotifyState::Save(const std::vector<Incident>& incidents, std::vector<Delivery>* queued,
                         int64_t queue_max, int64_t* dropped) {
  *dropped = 0;
  CGOV_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  Status s = [&]() -> Status {
    CGOV_RETURN_IF_ERROR(db_->Exec("DELETE FROM incidents"));
    CGOV_ASSIGN_OR_RETURN(SqliteStmt put, db_->Prepare("INSERT INTO incidents VALUES (?, ?, ?)"));
    for (const Incident& i : incidents) {
      CGOV_RETURN_IF_ERROR(
          put.Bind(1, i.rule)
              .Bind(2, i.key)
              .Bind(3,
                    IncidentJson(i).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
              .Run());
      put.Reset();
    }
    return Enqueue(queued, queue_max, dropped);
    return Status::Ok();
  }();
  if (!s.ok()) {
    (void)db_->Exec("ROLLBACK");
    return s;
  }
  return db_->Exec("COMMIT");
}

Status NotifyState::Enqueue(std::vector<Delivery>* queued, int64_t queue_max, int64_t* dropped) {
  CGOV_ASSIGN_OR_RETURN(int64_t next_seq,
                        db_->QueryInt("SELECT coalesce(max(seq), 0) + 1 FROM outbox"));
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt add,
      db_->Prepare(
          "INSERT INTO outbox(seq, sink, notice_id, body, created_ms, attempts, next_ms, rcpt) "
          "VALUES (?, ?, ?, ?, ?, 0, ?, ?)"));
  for (Delivery& d : *queued) {
    d.seq = next_seq++;
    CGOV_RETURN_IF_ERROR(
        add.Bind(1, d.seq)
            .Bind(2, d.sink)
            .Bind(3, d.notice_id)
            .Bind(4, d.body)
            .Bind(5, d.created_ms)
            .Bind(6, d.next_ms)
            .Bind(7, d.rcpt.empty() ? std::string() : nlohmann::json(d.rcpt).dump())
            .Run());
    add.Reset();
  }
  CGOV_ASSIGN_OR_RETURN(int64_t waiting, Queued());
  if (waiting > queue_max) {
    CGOV_ASSIGN_OR_RETURN(
        SqliteStmt drop,
        db_->Prepare(
            "DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE given_up = 0 ORDER BY "
            "seq LIMIT ?)"));
    CGOV_RETURN_IF_ERROR(drop.Bind(1, waiting - queue_max).Run());
    *dropped = db_->Changes();
  }
  return Status::Ok();
}

Result<bool> NotifyState::QueueMail(const std::string& key, const std::string& person,
                                    int64_t now_ms, std::vector<Delivery>* queued,
                                    int64_t queue_max, int64_t* dropped) {
  *dropped = 0;
  CGOV_RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  bool logged_before = false;
  Status s = [&]() -> Status {
    CGOV_ASSIGN_OR_RETURN(SqliteStmt log,
                          db_->Prepare("INSERT OR IGNORE INTO mail_log(key, queued_ms, messages, "
                                       "person) VALUES (?, ?, ?, ?)"));
    CGOV_RETURN_IF_ERROR(log.Bind(1, key)
                             .Bind(2, now_ms)
                             .Bind(3, static_cast<int64_t>(queued->size()))
                             .Bind(4, person)
                             .Run());
    logged_before = db_->Changes() == 0;
    return logged_before ? Status::Ok() : Enqueue(queued, queue_max, dropped);
  }();
  if (!s.ok() || logged_before) {
    (void)db_->Exec("ROLLBACK");
    if (!s.ok()) return s;
    return false;
  }
  CGOV_RETURN_IF_ERROR(db_->Exec("COMMIT"));
  return true;
}

Result<bool> NotifyState::MailLogged(const std::string& key) const {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("SELECT count(*) FROM mail_log WHERE key = ?"));
  s.Bind(1, key);
  CGOV_ASSIGN_OR_RETURN(bool row, s.Step());
  return row && s.Int(0) > 0;
}

Result<int64_t> NotifyState::MailCount(const std::string& key_prefix, const std::string& person,
                                       int64_t since_ms) const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt s,
      db_->Prepare("SELECT count(*) FROM mail_log WHERE substr(key, 1, ?) = ? AND person = ? AND "
                   "queued_ms >= ?"));
  s.Bind(1, static_cast<int64_t>(key_prefix.size()))
      .Bind(2, key_prefix)
      .Bind(3, person)
      .Bind(4, since_ms);
  CGOV_ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<std::vector<Delivery>> NotifyState::Heads() const {
  CGOV_ASSIGN_OR_RETURN(
      SqliteStmt s,
      db_->Prepare("SELECT seq, sink, notice_id, body, created_ms, attempts, next_ms, "
                   "coalesce(rcpt, '') FROM outbox WHERE seq IN (SELECT min(seq) FROM outbox WHERE "
                   "given_up = 0 GROUP BY sink) ORDER BY seq"));
  std::vector<Delivery> out;
  for (;;) {
    CGOV_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    Delivery d{s.Int(0),
               std::string(s.Text(1)),
               std::string(s.Text(2)),
               std::string(s.Text(3)),
               s.Int(4),
               s.Int(5),
               s.Int(6)};
    if (!s.Text(7).empty()) {
      const nlohmann::json rcpt = nlohmann::json::parse(s.Text(7), nullptr, false);
      if (!rcpt.is_array()) {
        return IoError(
            fmt::format("{}: outbox row {}: recipients not written by cgov", path(), d.seq));
      }
      for (const nlohmann::json& a : rcpt) {
        if (a.is_string()) d.rcpt.push_back(a.get<std::string>());
      }
    }
    out.push_back(std::move(d));
  }
  return out;
}

Status NotifyState::Delivered(int64_t seq) {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("DELETE FROM outbox WHERE seq = ?"));
  return s.Bind(1, seq).Run();
}

Status NotifyState::Retry(int64_t seq, int64_t attempts, int64_t next_ms,
                          const std::string& error) {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("UPDATE outbox SET attempts = ?, next_ms = ?, "
                                                   "last_error = ? WHERE seq = ?"));
  return s.Bind(1, attempts).Bind(2, next_ms).Bind(3, error).Bind(4, seq).Run();
}

Status NotifyState::GiveUp(int64_t seq, const std::string& error) {
  CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("UPDATE outbox SET given_up = 1, last_error = "
                                                   "? WHERE seq = ?"));
  return s.Bind(1, error).Bind(2, seq).Run();
}

Result<int64_t> NotifyState::Queued() const {
  return db_->QueryInt("SELECT count(*) FROM outbox WHERE given_up = 0");
}

}  // namespace cgov
