// Writes ticks into a history database and keeps its rollups current: ticks are kept in memory
// (encoded) until their batch is due (CommitPolicy: every tick, a count for bulk writers such as
// `cgov demo` and `cgov import`, an age for the daemon), then written with the hours and sessions
// they complete in one transaction; no transaction stays open between appends. Opening
// replays the raw ticks after the rollup watermark, so a writer that was killed loses nothing it
// committed. After an error the writer must be discarded and the database opened again: its
// in-memory rollups may hold ticks the failed transaction took with it. Not thread-safe.
#ifndef CGOV_APP_HISTORY_HISTORY_WRITER_H_
#define CGOV_APP_HISTORY_HISTORY_WRITER_H_

#include <memory>
#include <string>

#include "analysis/history_aggregator.h"
#include "analysis/pricing.h"
#include "store/history_store.h"

namespace cgov {

// A resolved price as the history database keeps it (HistoryStore::PutPrice), and back.
PriceRecord RecordOfPrice(const ResolvedPrice& price);
ResolvedPrice PriceOfRecord(const PriceRecord& record);

class HistoryWriter {
 public:
  // Opens (creating if needed) `path` for writing; errors name the file.
  static Result<std::unique_ptr<HistoryWriter>> Open(const std::string& path);
  ~HistoryWriter();

  HistoryStore& store() { return *store_; }
  // Records a new run (committed at once).
  Result<RunRecord> BeginRun(const std::string& source, int64_t started_ms, int64_t interval_ms,
                             const std::string& hostname);
  // When a batch of appended ticks is committed: after `max_ticks` ticks, or once the next tick
  // (the run's interval after this one) would make the oldest uncommitted tick `max_age_ms` old,
  // whichever comes first (0: no limit of that kind; both 0 is every tick). With an age, the
  // first tick after Open is committed at once (a new writer is visible, and a failing disk
  // is found, on its first tick). A crash loses at most the open batch.
  struct CommitPolicy {
    int64_t max_ticks = 1;
    int64_t max_age_ms = 0;
  };
  void set_commit_policy(CommitPolicy policy) { policy_ = policy; }
  // false when a tick at ts_ms exists already. A tick at or before the last one, or before the
  // rollup watermark, is an error (nothing written). Any other error rolls the open batch back:
  // abandoned_ticks() says how many ticks appended before this one went with it.
  Result<bool> Append(int64_t ts_ms, const RunRecord& run, const StoredTick& tick);
  // Ticks appended earlier in a batch that a failed Append or Commit lost (they were reported as
  // appended then).
  int64_t abandoned_ticks() const { return abandoned_ticks_; }
  // Ticks appended and not yet committed.
  int64_t uncommitted_ticks() const { return in_batch_; }
  // Commits the open batch, if any; on failure the batch is rolled back (abandoned_ticks()).
  Status Commit();
  // Deletes raw ticks older than before_ms that are already rolled up (own transaction).
  Result<int64_t> Prune(int64_t before_ms);
  // Receives the credit of every tick appended from now on (not of the ticks replayed on open).
  void set_credit_sink(std::function<void(const TickCredit&)> sink) {
    aggregator_.set_credit_sink(std::move(sink));
  }
  // Hours rolled up by this writer so far.
  int64_t hours_written() const { return hours_written_; }

 private:
  explicit HistoryWriter(std::unique_ptr<HistoryStore> store) : store_(std::move(store)) {}
  Status Replay();
  Status WriteCompleted();
  bool Pending(int64_t ts_ms) const;
  bool CommitDue(int64_t ts_ms, const RunRecord& run) const;
  Status CommitBatch(int64_t unreported);
  Status WriteBatch();
  void Abandon(int64_t unreported);

  struct PendingTick {
    int64_t ts_ms = 0;
    uint32_t run_id = 0;
    std::string data;  // EncodeTick's bytes
  };

  std::unique_ptr<HistoryStore> store_;
  HistoryAggregator aggregator_;
  CommitPolicy policy_;
  std::vector<PendingTick> pending_;  // the first in_batch_ are the batch; the rest kept for reuse
  int64_t in_batch_ = 0;              // ticks appended and not yet written
  int64_t batch_first_ms_ = 0;        // the oldest of them
  int64_t committed_batches_ = 0;
  int64_t abandoned_ticks_ = 0;
  int64_t last_ts_ms_ = INT64_MIN;
  int64_t hours_written_ = 0;
};

}  // namespace cgov

#endif  // CGOV_APP_HISTORY_HISTORY_WRITER_H_
