// `cgov run --db PATH`: the run recorded into a history database as it goes, so that
// `cgov report --db` shows runs beside whatever else the database holds. The job's processes are
// one identity named by the run's tags (user, project, team, and every tag); other processes on
// the GPUs are attributed from /proc as the daemon does. Not thread-safe: opened before the job
// starts (a bad path stops the run there), then used by the sampling thread only.
#ifndef CGOV_APP_RUN_RUN_HISTORY_H_
#define CGOV_APP_RUN_RUN_HISTORY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/pricing.h"
#include "app/history/history_writer.h"
#include "core/tags.h"
#include "identity/process_attribution.h"
#include "store/tick_record.h"
#include "telemetry/sampler.h"

namespace cgov {

// The identity the job's processes are recorded under: user from the `user` tag or the login
// user, project and team from their tags, and all tags as "k=v,k=v".
IdentityRecord RunIdentity(const Tags& tags, const std::string& login_user);

class RunHistory {
 public:
  using PriceFn = std::function<Result<ResolvedPrice>(const GpuInfo&)>;

  // Opens (creating if needed) the database; errors name the file.
  static Result<std::unique_ptr<RunHistory>> Open(const std::string& path, IdentityRecord job);

  // Starts the run's record: its GPUs, their prices, a run row (source "cgov run").
  Status Begin(const std::vector<GpuInfo>& gpus, const std::string& hostname, int64_t started_ms,
               int64_t interval_ms, const PriceFn& price, FileReader* files);
  // One tick; `job_pids` sorted (JobTreeSample::pids).
  Status Record(const TickSample& tick, const std::vector<int>& job_pids);
  // Commits what is left.
  Status Finish();
  const std::string& path() const { return path_; }

 private:
  RunHistory(std::string path, std::unique_ptr<HistoryWriter> writer, IdentityRecord job)
      : path_(std::move(path)), writer_(std::move(writer)), job_(std::move(job)) {}

  std::string path_;
  std::unique_ptr<HistoryWriter> writer_;
  IdentityRecord job_;
  std::unique_ptr<ProcessAttributor> attributor_;
  std::vector<uint32_t> gpu_ids_;
  RunRecord run_;
  const std::vector<int>* job_pids_ = nullptr;  // this tick's, for the attributor's override
  StoredTick stored_;
};

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_HISTORY_H_
