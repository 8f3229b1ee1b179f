#include "cli/history_writer.h"

#include <fmt/format.h>

#include "core/time_format.h"

namespace cgov::cli {

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

HistoryWriter::~HistoryWriter() {
  if (in_transaction_) (void)Commit();
}

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
    CGOV_ASSIGN_OR_RETURN(bool exists, store_->HasTick(ts_ms));
    if (exists) return false;  // written before: importing twice adds nothing
  }
  if (ts_ms <= last_ts_ms_) {
    return InvalidArgument(fmt::format("{}: tick at {} is not after the last one ({}); the wall "
                                       "clock went back?", store_->path(),
                                       FormatRfc3339Utc(ts_ms * 1'000'000),
                                       FormatRfc3339Utc(last_ts_ms_ * 1'000'000)));
  }
  if (ts_ms < store_->watermark_ms()) {
    return InvalidArgument(fmt::format(
        "{}: tick at {} is older than the history already rolled up (through {}); write older "
        "data into a new database", store_->path(), FormatRfc3339Utc(ts_ms * 1'000'000),
        FormatRfc3339Utc(store_->watermark_ms() * 1'000'000)));
  }
  if (!in_transaction_) {
    CGOV_RETURN_IF_ERROR(store_->Begin());
    in_transaction_ = true;
  }
  Result<bool> inserted = store_->AppendTick(ts_ms, run.id, tick);
  if (!inserted.ok()) return inserted;
  if (*inserted) {
    aggregator_.Add(ts_ms, run, tick);
    last_ts_ms_ = ts_ms;
    CGOV_RETURN_IF_ERROR(WriteCompleted());
  }
  if (++in_batch_ >= batch_) CGOV_RETURN_IF_ERROR(Commit());
  return *inserted;
}

Status HistoryWriter::Commit() {
  if (!in_transaction_) return Status::Ok();
  in_transaction_ = false;
  in_batch_ = 0;
  Status committed = store_->Commit();
  if (!committed.ok()) store_->Rollback();
  return committed;
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

}  // namespace cgov::cli
