#include "cli/process_attribution.h"

#include "core/tags.h"
#include "core/text.h"
#include "telemetry/procfs_pid.h"

namespace cgov::cli {

IdentityRecord IdentityOf(const ProcessIdentity& process, const std::string& owner_name,
                          std::string_view environ) {
  IdentityRecord r;
  r.user = process.user;
  r.owner = owner_name;
  r.pod = process.cgroup.pod_uid;
  r.container = process.cgroup.container_id;
  r.slurm_job = process.cgroup.slurm_job_id;
  if (r.slurm_job.empty()) {
    // Without Slurm's cgroup plugin the job id is only in the environment srun/sbatch set. The
    // job's user wrote that environment: a number, nothing else, and the accounting gives the
    // job's account only to a process of the job's own user (ApplySlurmJobs).
    const std::string job = EnvironValue(environ, "SLURM_JOB_ID").value_or("");
    if (!job.empty() && job.size() <= 20 &&
        job.find_first_not_of("0123456789") == std::string::npos) {
      r.slurm_job = job;
    }
  }
  // The job's own environment: anything its user wrote.
  r.project = SafeText(EnvironValue(environ, "CGOV_PROJECT").value_or(""));
  r.team = SafeText(EnvironValue(environ, "CGOV_TEAM").value_or(""));
  // Malformed CGOV_TAGS are the job's business: they are dropped, not guessed at.
  if (auto tags = MergeTags(EnvironValue(environ, "CGOV_TAGS").value_or(""), {}); tags.ok()) {
    for (const auto& [key, value] : *tags) {
      if (!r.tags.empty()) r.tags += ',';
      r.tags += key + "=" + value;
    }
  }
  return r;
}

Result<ProcessAttributor::Ids> ProcessAttributor::Lookup(uint32_t pid) {
  if (auto it = cache_.find(pid); it != cache_.end()) {
    it->second.seen = generation_;
    return it->second.ids;
  }
  IdentityRecord identity;
  std::string command;
  if (Result<ProcessIdentity> process = reader_.Read(static_cast<int>(pid)); process.ok()) {
    const std::string owner = process->uid ? reader_.UserName(*process->uid) : "";
    buffer_.clear();
    const std::string path = "/proc/" + std::to_string(pid) + "/environ";
    if (!files_->Read(path, &buffer_).ok()) buffer_.clear();  // another user's: unreadable
    identity = IdentityOf(*process, owner, buffer_);
    command = process->stat.comm;
  }
  if (override_applies_ && override_applies_(pid)) identity = override_identity_;
  Ids ids;
  CGOV_ASSIGN_OR_RETURN(ids.identity_id, store_->IdentityId(identity));
  CGOV_ASSIGN_OR_RETURN(ids.command_id, store_->CommandId(command));
  cache_[pid] = {ids, generation_};
  return ids;
}

void ProcessAttributor::ForgetUnseen() {
  for (auto it = cache_.begin(); it != cache_.end();) {
    it = it->second.seen == generation_ ? std::next(it) : cache_.erase(it);
  }
  ++generation_;
}

}  // namespace cgov::cli
