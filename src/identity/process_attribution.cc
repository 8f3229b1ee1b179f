#include "identity/process_attribution.h"

#include <algorithm>

#include "core/tags.h"
#include "core/text.h"
#include "telemetry/procfs_pid.h"

namespace cgov {

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
    // CGOV_TAGS="project=nlp,team=lang" names them as CGOV_PROJECT and CGOV_TEAM do (docs/ci.md);
    // the dedicated variables win where both are set.
    if (r.project.empty()) r.project = SafeText(TagOf(r.tags, "project"));
    if (r.team.empty()) r.team = SafeText(TagOf(r.tags, "team"));
  }
  return r;
}

void ApplyKubePod(const KubePod& pod, IdentityRecord* r) {
  r->kube_namespace = pod.namespace_name;
  r->kube_pod_name = pod.name;
  if (auto c = pod.containers.find(r->container); c != pod.containers.end()) {
    r->kube_container_name = c->second;
  }
  // The labels are the platform's tagging policy: a pod without the label is unlabelled even
  // if its process sets CGOV_PROJECT (which anyone in the pod may write).
  r->project = pod.project;
  r->team = pod.team;
  if (!pod.user.empty()) r->user = pod.user;
}

void ApplyLocalContainer(const LocalContainer& container, IdentityRecord* r) {
  r->kube_container_name = container.name;
  if (!container.project.empty()) r->project = container.project;
  if (!container.team.empty()) r->team = container.team;
  if (!container.user.empty()) r->user = container.user;
}

// The identity id of `identity` as the pod directory describes it now (when it has a pod), or
// as its container runtime names it (a container outside Kubernetes).
Result<uint32_t> ProcessAttributor::Resolve(IdentityRecord identity, Cached* cached) {
  if (local_ != nullptr && identity.pod.empty() && !identity.container.empty()) {
    if (std::optional<LocalContainer> c = local_->Find(identity.container)) {
      ApplyLocalContainer(*c, &identity);
      CGOV_RETURN_IF_ERROR(store_->RecordKubeNames(identity));
    }
  }
  if (pods_ != nullptr && !identity.pod.empty()) {
    cached->base = identity;
    cached->pods_generation = pods_->generation();
    if (std::optional<KubePod> pod = pods_->Find(identity.pod)) {
      ApplyKubePod(*pod, &identity);
      CGOV_RETURN_IF_ERROR(store_->RecordKubeNames(identity));
    }
  }
  return store_->IdentityId(identity);
}

size_t ProcessAttributor::Find(uint32_t pid) const {
  auto it = std::lower_bound(pids_.begin(), pids_.end(), pid);
  return it != pids_.end() && *it == pid ? static_cast<size_t>(it - pids_.begin()) : pids_.size();
}

void ProcessAttributor::Erase(size_t k) {
  if (cache_[k].seen == generation_) --seen_this_generation_;
  pids_.erase(pids_.begin() + static_cast<std::ptrdiff_t>(k));
  cache_.erase(cache_.begin() + static_cast<std::ptrdiff_t>(k));
}

void ProcessAttributor::DropExited() {
  exits_checked_ = generation_;
  exited_.clear();
  if (!exits_) return;
  exited_ = exits_->TakeExited();
  for (uint32_t pid : exited_) {
    if (size_t k = Find(pid); k < pids_.size()) Erase(k);
  }
}

Result<ProcessAttributor::Ids> ProcessAttributor::Lookup(uint32_t pid) {
  if (exits_checked_ != generation_) DropExited();
  if (size_t k = Find(pid); k < pids_.size()) {
    Cached& c = cache_[k];
    if (c.seen != generation_) ++seen_this_generation_;
    c.seen = generation_;
    // A pod's names or labels may have arrived or changed since (the watch runs beside).
    if (c.base && pods_ != nullptr && c.pods_generation != pods_->generation()) {
      CGOV_ASSIGN_OR_RETURN(c.ids.identity_id, Resolve(*c.base, &c));
    }
    return c.ids;
  }
  IdentityRecord identity;
  std::string command;
  std::optional<ProgressFile> progress;
  // Watched before it is read: a process that exits in between is read again next tick.
  if (exits_) exits_->Watch(pid);
  if (Result<ProcessIdentity> process = reader_.Read(static_cast<int>(pid)); process.ok()) {
    const std::string owner = process->uid ? reader_.UserName(*process->uid) : "";
    buffer_.clear();
    const std::string path = "/proc/" + std::to_string(pid) + "/environ";
    if (!files_->Read(path, &buffer_).ok()) buffer_.clear();  // another user's: unreadable
    identity = IdentityOf(*process, owner, buffer_);
    command = process->stat.comm;
    const std::string file = EnvironValue(buffer_, "CGOV_PROGRESS_FILE").value_or("");
    if (process->uid && file.starts_with('/') && file.size() <= 4096) {
      progress = ProgressFile{file, *process->uid, process->gid.value_or(kNobodyGid)};
    }
  }
  Cached cached;
  cached.progress = std::move(progress);
  if (override_applies_ && override_applies_(pid)) {
    CGOV_ASSIGN_OR_RETURN(cached.ids.identity_id, store_->IdentityId(override_identity_));
  } else {
    CGOV_ASSIGN_OR_RETURN(cached.ids.identity_id, Resolve(std::move(identity), &cached));
  }
  CGOV_ASSIGN_OR_RETURN(cached.ids.command_id, store_->CommandId(command));
  cached.seen = generation_;
  ++seen_this_generation_;
  const Ids ids = cached.ids;
  const auto at = std::lower_bound(pids_.begin(), pids_.end(), pid) - pids_.begin();
  pids_.insert(pids_.begin() + at, pid);
  cache_.insert(cache_.begin() + at, std::move(cached));
  return ids;
}

Result<std::optional<uint32_t>> ProcessAttributor::ContainerIdentity(
    const std::string& namespace_name, const std::string& pod, const std::string& container,
    std::string* pod_uid) {
  pod_uid->clear();
  if (pods_ == nullptr) return std::optional<uint32_t>();
  if (pods_->generation() != containers_generation_) {
    containers_.clear();  // names or labels may have changed: resolved again
    containers_generation_ = pods_->generation();
  }
  auto key = std::make_tuple(namespace_name, pod, container);
  if (auto it = containers_.find(key); it != containers_.end()) {
    *pod_uid = it->second.pod_uid;
    return it->second.identity_id;
  }
  ContainerCached cached;
  if (std::optional<KubePod> found = pods_->FindByName(namespace_name, pod)) {
    IdentityRecord identity;
    identity.pod = found->uid;
    for (const auto& [id, name] : found->containers) {
      if (name == container) identity.container = id;
    }
    ApplyKubePod(*found, &identity);
    identity.kube_container_name = SafeText(container);
    CGOV_RETURN_IF_ERROR(store_->RecordKubeNames(identity));
    CGOV_ASSIGN_OR_RETURN(uint32_t id, store_->IdentityId(identity));
    cached.identity_id = id;
    cached.pod_uid = found->uid;
  }
  *pod_uid = cached.pod_uid;
  const std::optional<uint32_t> id = cached.identity_id;
  containers_.emplace(std::move(key), std::move(cached));
  return id;
}

std::string_view ProcessAttributor::PodOf(uint32_t pid) const {
  const size_t k = Find(pid);
  if (k == pids_.size() || !cache_[k].base) return {};
  return cache_[k].base->pod;
}

std::optional<ProcessAttributor::ProgressFile> ProcessAttributor::ProgressFileOf(
    uint32_t pid) const {
  const size_t k = Find(pid);
  return k == pids_.size() ? std::nullopt : cache_[k].progress;
}

void ProcessAttributor::ForgetUnseen() {
  if (seen_this_generation_ != pids_.size()) {
    size_t kept = 0;
    for (size_t k = 0; k < pids_.size(); ++k) {
      if (cache_[k].seen != generation_) {
        if (exits_) exits_->Forget(pids_[k]);
        continue;
      }
      if (kept != k) {
        pids_[kept] = pids_[k];
        cache_[kept] = std::move(cache_[k]);
      }
      ++kept;
    }
    pids_.resize(kept);
    cache_.resize(kept);
  }
  seen_this_generation_ = 0;
  ++generation_;
}

}  // namespace cgov
