// Writes ticks into a history database and keeps its rollups current: every tick goes in with the
// hours and sessions it completes, in one transaction (or one per batch of ticks for bulk writers
// such as `cgov demo` and `cgov import`). Opening replays the raw ticks after the rollup watermark,
// so a writer that was killed loses nothing it committed. Not thread-safe.
#ifndef CGOV_CLI_HISTORY_WRITER_H_
#define CGOV_CLI_HISTORY_WRITER_H_

#include <memory>
#include <string>

#include "analysis/history_aggregator.h"
#include "analysis/pricing.h"
#include "store/history_store.h"

namespace cgov::cli {

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
  // Commits after every `ticks` ticks (1: every tick, the daemon's durability).
  void set_batch(int ticks) { batch_ = ticks < 1 ? 1 : ticks; }
  // false when a tick at ts_ms exists already. A tick at or before the last one, or before the
  // rollup watermark, is an error (nothing written).
  Result<bool> Append(int64_t ts_ms, const RunRecord& run, const StoredTick& tick);
  // Commits the open batch, if any.
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

  std::unique_ptr<HistoryStore> store_;
  HistoryAggregator aggregator_;
  int batch_ = 1;
  int in_batch_ = 0;
  bool in_transaction_ = false;
  int64_t last_ts_ms_ = INT64_MIN;
  int64_t hours_written_ = 0;
};

}  // namespace cgov::cli

#endif  // CGOV_CLI_HISTORY_WRITER_H_
