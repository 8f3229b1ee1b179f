// The history database of `cgov daemon`, `cgov demo` and `cgov import`: SQLite in WAL mode, one
// row per tick (ticks keyed by their time in ms), dictionaries for GPUs, identities and commands,
// and hourly rollups plus idle-held sessions so that a report's cost follows its window, not the
// database size. Schema, encodings and versioning: docs/history-db.md.
//
// One writer at a time (an flock on the database file, released by the kernel however the writer
// dies); any number of readers alongside it. Not thread-safe: one HistoryStore per thread.
#ifndef CGOV_STORE_HISTORY_STORE_H_
#define CGOV_STORE_HISTORY_STORE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/status.h"
#include "core/time_format.h"
#include "store/records.h"
#include "store/sqlite_db.h"
#include "telemetry/gpu_sample.h"

namespace cgov {

// An error naming the writer (its pid) when a cgov writer holds `path`; Ok when none does or
// there is no such file. For commands that would replace the file (cgov demo --force).
Status CheckNoWriter(const std::string& path);

class HistoryStore {
 public:
  enum class Mode { kRead, kWrite };

  // kWrite creates the database if it does not exist, migrates an older schema forward and takes
  // the writer lock (a second writer gets a clear error). kRead needs an existing database. A file
  // that is not a Cost Governor history, or is corrupt, is an error and is left untouched.
  // Before a writer writes anything, SQLite's quick_check looks at every page for at most
  // kWriterCheckBudget; corruption is an error. A reader reads only the pages its queries need
  // (a report over an hour of a year's history reads an hour's pages): a corrupt one among them
  // is an error that says so (CorruptDatabase), one elsewhere goes unnoticed by it.
  // A writer that creates the file and then fails (a full disk) removes it again: no empty
  // database is left behind.
  static Result<std::unique_ptr<HistoryStore>> Open(const std::string& path, Mode mode);
  static constexpr std::chrono::milliseconds kWriterCheckBudget{10'000};
  // A writer's page cache (SQLite's default is 2,000 KiB).
  static constexpr int kWriterCacheKib = 256;
  ~HistoryStore();

  // A writer's: false when its quick_check on open ran out of time before it reached every page
  // (always false for a reader, which does not check).
  bool fully_checked() const { return fully_checked_; }
  // For a writer: empty while path() still names the file it opened, else what became of it
  // ("was removed", "was replaced by another file"): its writes then reach no one.
  std::string FileChange() const;

  const std::string& path() const { return path_; }

  // Transactions: writers wrap each tick (or a batch of ticks) in one.
  Status Begin();
  Status Commit();
  void Rollback();

  // A consistent snapshot for readers (a writer may commit meanwhile): reads between these see
  // one state of the database. Re-reads the watermark.
  Status BeginSnapshot();
  void EndSnapshot();

  // Dictionaries: the id of a record, inserted when new. Cached in memory.
  Result<uint32_t> GpuId(const GpuRecord& gpu);
  Result<uint32_t> IdentityId(const IdentityRecord& identity);
  // Records the Kubernetes names of the identity's pod and container (when it has them);
  // writes only what changed since this store last recorded it.
  Status RecordKubeNames(const IdentityRecord& identity);
  Result<uint32_t> CommandId(const std::string& name);
  Result<RunRecord> BeginRun(const std::string& source, int64_t started_ms, int64_t interval_ms,
                             const std::string& hostname);

  // false when a tick at ts_ms exists already (nothing written: imports are idempotent).
  Result<bool> AppendTick(int64_t ts_ms, uint32_t run_id, const StoredTick& tick);
  // The same with the tick already encoded (EncodeTick's bytes).
  Result<bool> AppendEncodedTick(int64_t ts_ms, uint32_t run_id, std::string_view data);
  Status PutRollup(const RollupRow& row);
  Status PutSession(const SessionRecord& session);
  Status PutEvent(const GpuEventRecord& event);
  Status PutPolicyAction(const PolicyActionRecord& action);
  // Oldest first; none in a database older than schema version 7.
  Result<std::vector<PolicyActionRecord>> PolicyActions(int64_t since_ms, int64_t until_ms) const;
  // Records the price a writer priced a GPU at from `since_ms` on (no row when it is the one in
  // effect already).
  Status PutPrice(uint32_t gpu_id, int64_t since_ms, const PriceRecord& price);
  // Everything before watermark_ms is in the rollups and sessions; ticks from it on are not.
  Status SetWatermark(int64_t watermark_ms);
  int64_t watermark_ms() const { return watermark_ms_; }
  // Deletes raw ticks before `before_ms` (never past the watermark). Returns rows deleted.
  Result<int64_t> PruneTicks(int64_t before_ms);

  // Readers.
  Result<std::vector<GpuRecord>> Gpus() const;
  Result<std::map<uint32_t, IdentityRecord>> Identities() const;
  Result<std::map<uint32_t, std::string>> Commands() const;
  Result<std::map<uint32_t, RunRecord>> Runs() const;
  Result<std::string> Meta(const std::string& key) const;  // "" when absent
  // Raw ticks before this were deleted by PruneTicks (--retain); none when nothing was pruned.
  Result<std::optional<int64_t>> RawPrunedBeforeMs() const;
  Status SetMeta(const std::string& key, const std::string& value);
  // First and last tick time, nullopt when there are no ticks.
  Result<std::optional<std::pair<int64_t, int64_t>>> TickRange() const;
  Result<bool> HasTick(int64_t ts_ms) const;
  using TickFn = std::function<Status(int64_t ts_ms, uint32_t run_id, const StoredTick& tick)>;
  // Ticks with from_ms <= ts < to_ms, in time order.
  Status ForEachTick(int64_t from_ms, int64_t to_ms, const TickFn& fn) const;
  // Rollup rows with from_hour <= hour < to_hour; identity rows when `identities`.
  Status ForEachRollup(int64_t from_hour, int64_t to_hour, bool identities,
                       const std::function<Status(const RollupRow&)>& fn) const;
  // Sessions overlapping [since_ms, until_ms), and every open one.
  Result<std::vector<SessionRecord>> Sessions(int64_t since_ms, int64_t until_ms) const;
  Result<std::vector<SessionRecord>> OpenSessions() const;
  // When the earliest session of these identities that ended at or after `ended_since_ms`
  // began (a job's start, for its report); nullopt when there is none.
  Result<std::optional<int64_t>> FirstSessionStartMs(const std::vector<uint32_t>& identities,
                                                     int64_t ended_since_ms) const;
  // Events with since_ms <= ts_ms < until_ms, oldest first.
  Result<std::vector<GpuEventRecord>> Events(int64_t since_ms, int64_t until_ms) const;
  // Each GPU's latest event of `kind` before `until_ms` (a state recorded when it changes:
  // "memory_health"), by GPU id.
  Result<std::vector<GpuEventRecord>> LatestEvents(std::string_view kind, int64_t until_ms) const;
  // Each GPU's recorded price in effect at `at_ms` (its latest row from before then), by GPU id;
  // empty for a database from before schema 4.
  Result<std::map<uint32_t, PriceRecord>> PricesAt(int64_t at_ms) const;

 private:
  // Open's work on a file that was there before (`exists_before`) or that Open just created.
  static Result<std::unique_ptr<HistoryStore>> OpenFile(const std::string& path, Mode mode,
                                                        bool exists_before);
  HistoryStore(std::unique_ptr<SqliteDb> db, std::string path, int lock_fd)
      : db_(std::move(db)), path_(std::move(path)), lock_fd_(lock_fd) {}
  Status PrepareWriter();
  Status LoadCaches();

  std::unique_ptr<SqliteDb> db_;
  std::string path_;
  int64_t schema_version_ = kHistorySchemaVersion;  // a reader may open an older one
  int lock_fd_;                                     // -1 for readers
  bool fully_checked_ = true;
  int64_t watermark_ms_ = 0;
  std::map<std::string, GpuRecord> gpus_;                                          // by uuid
  std::map<decltype(std::declval<IdentityRecord>().Key()), uint32_t> identities_;  // by Key()
  std::map<std::string, std::pair<std::string, std::string>> kube_pods_;  // uid -> (ns, name)
  std::map<std::string, std::string> kube_containers_;                    // id -> name
  std::map<std::string, uint32_t, std::less<>> commands_;
  SqliteStmt insert_tick_, put_rollup_, put_identity_rollup_, put_session_, set_meta_;
};

}  // namespace cgov

#endif  // CGOV_STORE_HISTORY_STORE_H_
