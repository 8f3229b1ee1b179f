#include "app/history/history_writer.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/time_format.h"
#include "store/tick_record.h"

namespace cgov {

PriceRecord RecordOfPrice(const ResolvedPrice& price) {
  return {price.per_gpu_hour, price.on_demand, price.spot, price.is_spot, price.Describe()};
}

ResolvedPrice PriceOfRecord(const PriceRecord& record) {
  ResolvedPrice p;
  p.per_gpu_hour = record.micro_usd;
  p.on_demand = record.on_demand_micro_usd;
  p.spot = record.spot_micro_usd;
  p.is_spot = record.is_spot;
  p.source = record.source;
  return p;
}

Result<std::unique_ptr<HistoryWriter>> HistoryWriter::Open(const std::string& path) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<HistoryStore> store,
                        HistoryStore::Open(path, HistoryStore::Mode::kWrite));
  std::unique_ptr<HistoryWriter> writer(new HistoryWriter(std::move(store)));
  CGOV_RETURN_IF_ERROR(writer->Replay());
  return writer;
}

HistoryWriter::~HistoryWriter() { (void)Commit(); }

Status HistoryWriter::Replay() {
  CGOV_ASSIGN_OR_RETURN(std::vector<SessionRecord> open, store_->OpenSessions());
  aggregator_.SeedSessions(open);
  CGOV_ASSIGN_OR_RETURN(auto runs, store_->Runs());
  CGOV_RETURN_IF_ERROR(store_->ForEachTick(
      store_->watermark_ms(), INT64_MAX,
      [&](int64_t ts, uint32_t run_id, const StoredTick& tick) -> Status {
        auto run = runs.find(run_id);
        if (run == runs.end()) {
          return InvalidArgument(fmt::format("{}: tick {} names run {}, which does not exist",
                                             store_->path(), ts, run_id));
        }
        aggregator_.Add(ts, run->second, tick);
        last_ts_ms_ = ts;
        return Status::Ok();
      }));
  CGOV_RETURN_IF_ERROR(store_->Begin());
  Status written = WriteCompleted();
  if (!written.ok()) {
    store_->Rollback();
    return written;
  }
  return store_->Commit();
}

Result<RunRecord> HistoryWriter::BeginRun(const std::string& source, int64_t started_ms,
                                          int64_t interval_ms, const std::string& hostname) {
  CGOV_RETURN_IF_ERROR(Commit());
  CGOV_RETURN_IF_ERROR(store_->SetMeta("hostname", hostname));
  return store_->BeginRun(source, started_ms, interval_ms, hostname);
}

Status HistoryWriter::WriteCompleted() {
  std::vector<HourBucket> hours = aggregator_.TakeCompleteHours();
  if (hours.empty()) return Status::Ok();
  std::string data;
  for (const HourBucket& b : hours) {
    for (const auto& [gpu, g] : b.gpus) {
      data.clear();
      EncodeGpuHour(g, &data);
      CGOV_RETURN_IF_ERROR(store_->PutRollup(RollupRow{b.hour, 0, gpu, data}));
    }
    for (const auto& [key, h] : b.identities) {
      data.clear();
      EncodeIdentityHour(h, &data);
      CGOV_RETURN_IF_ERROR(store_->PutRollup(RollupRow{b.hour, key.first, key.second, data}));
    }
    ++hours_written_;
  }
  for (const SessionRecord& s : aggregator_.TakeChangedSessions()) {
    CGOV_RETURN_IF_ERROR(store_->PutSession(s));
  }
  return store_->SetWatermark(aggregator_.complete_before_ms());
}

Result<bool> HistoryWriter::Append(int64_t ts_ms, const RunRecord& run, const StoredTick& tick) {
  if (ts_ms <= last_ts_ms_ || ts_ms < store_->watermark_ms()) {
    if (Pending(ts_ms)) return false;
    CGOV_ASSIGN_OR_RETURN(bool exists, store_->HasTick(ts_ms));
    if (exists) return false;  // written before: importing twice adds nothing
  }
  if (ts_ms <= last_ts_ms_) {
    return InvalidArgument(fmt::format(
        "{}: tick at {} is not after the last one ({}); the wall clock went back?", store_->path(),
        FormatRfc3339Utc(ts_ms * 1'000'000), FormatRfc3339Utc(last_ts_ms_ * 1'000'000)));
  }
  if (ts_ms < store_->watermark_ms()) {
    return InvalidArgument(fmt::format(
        "{}: tick at {} is older than the history already rolled up (through {}); write older "
        "data into a new database",
        store_->path(), FormatRfc3339Utc(ts_ms * 1'000'000),
        FormatRfc3339Utc(store_->watermark_ms() * 1'000'000)));
  }
  // Only encoded here: the SQL runs once a batch (CommitBatch), with SQLite's code and pages
  // warm, instead of a cold statement and transaction every tick.
  if (in_batch_ == static_cast<int64_t>(pending_.size())) pending_.emplace_back();
  PendingTick& p = pending_[static_cast<size_t>(in_batch_)];
  p.ts_ms = ts_ms;
  p.run_id = run.id;
  p.data.clear();
  EncodeTick(tick, &p.data);
  if (in_batch_++ == 0) batch_first_ms_ = ts_ms;
  aggregator_.Add(ts_ms, run, tick);
  last_ts_ms_ = ts_ms;
  // This tick's failure is the caller's to count, not among the abandoned ones.
  if (CommitDue(ts_ms, run)) CGOV_RETURN_IF_ERROR(CommitBatch(/*unreported=*/1));
  return true;
}

bool HistoryWriter::Pending(int64_t ts_ms) const {
  const auto end = pending_.begin() + in_batch_;
  auto it = std::lower_bound(pending_.begin(), end, ts_ms,
                             [](const PendingTick& p, int64_t ts) { return p.ts_ms < ts; });
  return it != end && it->ts_ms == ts_ms;
}

bool HistoryWriter::CommitDue(int64_t ts_ms, const RunRecord& run) const {
  if (policy_.max_ticks <= 0 && policy_.max_age_ms <= 0) return true;
  if (policy_.max_ticks > 0 && in_batch_ >= policy_.max_ticks) return true;
  if (policy_.max_age_ms <= 0) return false;
  return committed_batches_ == 0 ||
         ts_ms + std::max<int64_t>(run.interval_ms, 0) - batch_first_ms_ >= policy_.max_age_ms;
}

// The batch is gone (never written, or rolled back): its ticks were lost, `unreported` of them
// not yet reported as appended.
void HistoryWriter::Abandon(int64_t unreported) {
  abandoned_ticks_ += in_batch_ - unreported;
  in_batch_ = 0;
}

Status HistoryWriter::Commit() { return CommitBatch(0); }

Status HistoryWriter::CommitBatch(int64_t unreported) {
  if (in_batch_ == 0) return Status::Ok();
  Status written = WriteBatch();
  if (!written.ok()) {
    Abandon(unreported);
    return written;
  }
  in_batch_ = 0;
  ++committed_batches_;
  return Status::Ok();
}

// The batch's ticks with the hours and sessions they complete, in one transaction.
Status HistoryWriter::WriteBatch() {
  CGOV_RETURN_IF_ERROR(store_->Begin());
  Status status;
  for (int64_t i = 0; i < in_batch_ && status.ok(); ++i) {
    const PendingTick& p = pending_[static_cast<size_t>(i)];
    Result<bool> inserted = store_->AppendEncodedTick(p.ts_ms, p.run_id, p.data);
    status = inserted.status();
    if (status.ok() && !*inserted) {  // Append checked it was new: someone else wrote here
      status = Internal(fmt::format("{}: a tick at {} appeared while a batch was being written",
                                    store_->path(), FormatRfc3339Utc(p.ts_ms * 1'000'000)));
    }
  }
  if (status.ok()) status = WriteCompleted();
  if (status.ok()) status = store_->Commit();
  if (!status.ok()) store_->Rollback();
  return status;
}

Result<int64_t> HistoryWriter::Prune(int64_t before_ms) {
  CGOV_RETURN_IF_ERROR(Commit());
  CGOV_RETURN_IF_ERROR(store_->Begin());
  Result<int64_t> pruned = store_->PruneTicks(before_ms);
  if (!pruned.ok()) {
    store_->Rollback();
    return pruned;
  }
  CGOV_RETURN_IF_ERROR(store_->Commit());
  return pruned;
}

}  // namespace cgov
