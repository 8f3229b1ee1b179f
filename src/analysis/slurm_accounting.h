// Slurm jobs' owners for `cgov report --slurm-accounting FILE`: a GPU process whose cgroup names a
// Slurm job (job_<id>) gets the job's user, account (its project when it has none) and partition.
// FILE is the output of `sacct --parsable2 --format=JobID,User,Account,Partition` (any column
// order; the header line names them) or of `scontrol show job` (Key=Value records). Pure.
#ifndef CGOV_ANALYSIS_SLURM_ACCOUNTING_H_
#define CGOV_ANALYSIS_SLURM_ACCOUNTING_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "store/records.h"

namespace cgov {

struct SlurmJob {
  std::string id;  // "4242117", an array task "4242117_3"
  std::string user;
  std::string account;
  std::string partition;
};
using SlurmJobs = std::map<std::string, SlurmJob>;  // by id

// `name` names the input in errors ("sacct.txt:3: ..."). Job steps (4242117.batch, 4242117.0)
// are skipped: they belong to their job. A record that cannot be a job (a JobID that is not
// digits, a row of the wrong width) is skipped and said in *skipped ("file:line: why"), never an
// error: users write job names and comments. Only input that is not Slurm's at all (no sacct
// header, no JobId= record) is an error. Of `scontrol show job`, fields are read only where
// Slurm writes them (the .cc says how): a job's name or comment cannot set its account.
Result<SlurmJobs> ParseSlurmAccounting(std::string_view text, const std::string& name,
                                       std::vector<std::string>* skipped = nullptr);

// Fills slurm_account and slurm_partition of every identity whose slurm_job is known, its user
// when the process did not say, and its project (the account) when the process named none.
// An identity whose user is known and is not the job's user is left alone (a process may name
// any job in its SLURM_JOB_ID). Returns how many identities matched.
size_t ApplySlurmJobs(const SlurmJobs& jobs, std::map<uint32_t, IdentityRecord>* identities);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_SLURM_ACCOUNTING_H_
