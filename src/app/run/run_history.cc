#include "app/run/run_history.h"

#include <algorithm>

#include "app/history/stored_tick.h"

namespace cgov {

IdentityRecord RunIdentity(const Tags& tags, const std::string& login_user) {
  IdentityRecord r;
  auto tag = [&](const char* key) {
    auto it = tags.find(key);
    return it == tags.end() ? std::string() : it->second;
  };
  r.user = tag("user").empty() ? login_user : tag("user");
  r.owner = login_user;
  r.project = tag("project");
  r.team = tag("team");
  for (const auto& [key, value] : tags) {  // a std::map: sorted by key
    if (!r.tags.empty()) r.tags += ',';
    r.tags += key + "=" + value;
  }
  return r;
}

Result<std::unique_ptr<RunHistory>> RunHistory::Open(const std::string& path, IdentityRecord job) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<HistoryWriter> writer, HistoryWriter::Open(path));
  // What a crash may lose: the last 10 s, as with the daemon's default (docs/history-db.md).
  writer->set_commit_policy({.max_ticks = 0, .max_age_ms = 10'000});
  return std::unique_ptr<RunHistory>(new RunHistory(path, std::move(writer), std::move(job)));
}

Status RunHistory::Begin(const std::vector<GpuInfo>& gpus, const std::string& hostname,
                         int64_t started_ms, int64_t interval_ms, const PriceFn& price,
                         FileReader* files) {
  CGOV_ASSIGN_OR_RETURN(gpu_ids_, RegisterGpus(gpus, &writer_->store()));
  CGOV_ASSIGN_OR_RETURN(run_, writer_->BeginRun("cgov run", started_ms, interval_ms, hostname));
  for (size_t i = 0; i < gpus.size() && i < gpu_ids_.size(); ++i) {
    CGOV_ASSIGN_OR_RETURN(ResolvedPrice p, price(gpus[i]));
    CGOV_RETURN_IF_ERROR(writer_->store().PutPrice(gpu_ids_[i], started_ms, RecordOfPrice(p)));
  }
  attributor_ = std::make_unique<ProcessAttributor>(files, &writer_->store());
  attributor_->SetOverride(
      [this](uint32_t pid) {
        return job_pids_ != nullptr &&
               std::binary_search(job_pids_->begin(), job_pids_->end(), static_cast<int>(pid));
      },
      job_);
  return Status::Ok();
}

Status RunHistory::Record(const TickSample& tick, const std::vector<int>& job_pids) {
  job_pids_ = &job_pids;
  Status built = BuildStoredTick(tick, gpu_ids_, attributor_.get(), &stored_);
  job_pids_ = nullptr;
  CGOV_RETURN_IF_ERROR(built);
  return writer_->Append(tick.wall_ns / 1'000'000, run_, stored_).status();
}

Status RunHistory::Finish() { return writer_->Commit(); }

}  // namespace cgov
