// A job's report to its owner when `cgov daemon --notify` sees it end (docs/notifications.md,
// "A job's report to its owner"): a Slurm job or a Kubernetes pod, its GPU-hours, dollars and
// phases, what its idle-held time cost, its owner's costliest habit in its window with the fix,
// and the `cgov report` command that shows the whole window. Every figure is the job's row of
// the window's report by slurm_job or pod (the ledger `cgov report` reads). Pure.
#ifndef CGOV_NOTIFY_JOB_MAIL_H_
#define CGOV_NOTIFY_JOB_MAIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/history_summary.h"
#include "notify/digest.h"
#include "notify/notify_file.h"
#include "notify/recipients.h"

namespace cgov {

struct EndedJob {
  HistoryBy by = HistoryBy::kSlurmJob;  // kSlurmJob or kPod
  std::string key;   // its row's key: the Slurm job id, a pod's "namespace/name" (or its UID)
  std::string user;  // its owner, as the identity says
  int64_t since_ms = 0, until_ms = 0;  // its first session's start, the end of its last tick
};

// One email sink's addresses for a job's report: its own `to`, then the owner's where it says
// "owner" (the recipients file: their row, the domain rule, the fallback); never "lead" (a
// job's report is its owner's).
std::vector<std::string> JobReportAddresses(const NotifySink& sink, const Recipients* people,
                                            const std::string& owner);

// "Slurm job 4242", "pod ml/train-7".
std::string EndedJobName(const EndedJob& job);

// The message (its `to` left to the caller) from the job's `row` of `window` (the report of
// [since_ms, until_ms) by job.by), on `host`.
DigestMail JobMail(const EndedJob& job, const WhoRow& row, const HistorySummary& window,
                   const std::string& host);

}  // namespace cgov

#endif  // CGOV_NOTIFY_JOB_MAIL_H_
