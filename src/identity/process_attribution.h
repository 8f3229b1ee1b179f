// Who a GPU process belongs to, as history dictionary ids: login user and owner, Kubernetes pod,
// container, Slurm job, and CGOV_PROJECT / CGOV_TEAM / CGOV_TAGS from its environment when
// readable. Read from /proc once per process and cached while it stays on a GPU. Not thread-safe.
#ifndef CGOV_IDENTITY_PROCESS_ATTRIBUTION_H_
#define CGOV_IDENTITY_PROCESS_ATTRIBUTION_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "identity/kube_pods.h"
#include "identity/local_containers.h"
#include "os/file_reader.h"
#include "os/process_exit_watch.h"
#include "store/history_store.h"
#include "telemetry/process_reader.h"

namespace cgov {

// Pure: the identity of a process from what /proc said (environ may be empty: unreadable).
IdentityRecord IdentityOf(const ProcessIdentity& process, const std::string& owner_name,
                          std::string_view environ);
// Pure: a process in a pod the API server described gets its namespace, pod and container
// names, and the project and team its pod's labels give (the labels are the policy: not the
// process's CGOV_PROJECT/CGOV_TEAM, so an unlabelled pod shows as such), and the user of its
// user label when there is one (over the uid a container runs as).
void ApplyKubePod(const KubePod& pod, IdentityRecord* identity);
// Pure: a process in a Docker or Podman container gets its name (kept as kube_container_name,
// stored beside the identity as a pod's container's is) and the project, team and user its
// labels give, where they give one (else what the process said stays).
void ApplyLocalContainer(const LocalContainer& container, IdentityRecord* identity);

class ProcessAttributor {
 public:
  ProcessAttributor(FileReader* files, HistoryStore* store)
      : files_(files), reader_(files), store_(store) {}

  struct Ids {
    uint32_t identity_id = 0;
    uint32_t command_id = 0;
  };
  // A process that vanished before it could be read gets an empty identity (unknown user).
  Result<Ids> Lookup(uint32_t pid);
  // Processes for which `applies(pid)` holds get `identity` instead of what /proc says (their
  // command is still read): `cgov run --db` names the job's processes by the run's tags.
  void SetOverride(std::function<bool(uint32_t)> applies, IdentityRecord identity) {
    override_applies_ = std::move(applies);
    override_identity_ = std::move(identity);
  }
  // Kubernetes: processes whose cgroup names a pod get its names and labels from `pods` (kept
  // up to date by a KubePodWatch); a cached process is re-resolved when the directory changed.
  void SetPods(const KubePodDirectory* pods) { pods_ = pods; }
  // Docker and Podman: a process whose cgroup names a container but no pod gets the container's
  // name (and the project, team and user its labels give) from `containers`.
  void SetLocalContainers(LocalContainers* containers) { local_ = containers; }
  // PID reuse: with a watch, a cached process that exited is read again at the next tick's first
  // lookup, so a pid reused within one sample names its new process (not the old one's owner).
  // Without one (another /proc mount, no pidfds), a cached pid is trusted until unseen for a tick.
  void SetExitWatch(std::unique_ptr<ProcessExitWatch> watch) { exits_ = std::move(watch); }
  // The pids whose cached process exited, found at this tick's first lookup (their caches, the
  // policy's included, must read them again).
  const std::vector<uint32_t>& exited() const { return exited_; }
  // The identity of a container the kubelet allocated a device to: its pod found in the
  // directory by namespace and name, with the labels' project, team and user; no user or owner
  // (no process of it may be visible). *pod_uid is set to the pod's UID. nullopt while the
  // directory does not know the pod (or there is no directory). Cached per directory generation.
  Result<std::optional<uint32_t>> ContainerIdentity(const std::string& namespace_name,
                                                    const std::string& pod,
                                                    const std::string& container,
                                                    std::string* pod_uid);
  // The pod UID of a process looked up since the last ForgetUnseen ("" when none or unknown).
  std::string_view PodOf(uint32_t pid) const;
  // The progress file a process looked up since the last ForgetUnseen names in its environment
  // (CGOV_PROGRESS_FILE, which `cgov run` sets: an absolute path, as the process sees it) and
  // its owner (the real uid and gid: whose rights it is opened with); nullopt when it names
  // none or its owner is unknown.
  static constexpr uint32_t kNobodyGid = 65534;  // the gid when status did not say
  struct ProgressFile {
    std::string path;
    uint32_t owner = 0;
    uint32_t group = kNobodyGid;
  };
  std::optional<ProgressFile> ProgressFileOf(uint32_t pid) const;
  // Forgets every pid not looked up since the last call (a pid that comes back later is read
  // again). Called once a tick, after the tick's lookups: no set of live pids is built.
  // Touches nothing when every cached pid was looked up this tick (the usual tick).
  void ForgetUnseen();
  size_t cached() const { return pids_.size(); }

 private:
  // At a tick's first lookup: drops the cached processes that exited since.
  void DropExited();

  FileReader* files_;
  ProcessReader reader_;
  HistoryStore* store_;
  std::unique_ptr<ProcessExitWatch> exits_;
  std::vector<uint32_t> exited_;
  uint64_t exits_checked_ = ~uint64_t{0};  // the generation_ DropExited last ran in
  struct Cached {
    Ids ids;
    uint64_t seen = 0;  // the generation_ it was last looked up in
    // For a process in a pod: what /proc said, and the directory's generation applied to it.
    std::optional<IdentityRecord> base;
    uint64_t pods_generation = 0;
    std::optional<ProgressFile> progress;  // from its environment, read once with it
  };
  Result<uint32_t> Resolve(IdentityRecord identity, Cached* cached);
  // The position of `pid` in pids_ and cache_, or pids_.size().
  size_t Find(uint32_t pid) const;
  void Erase(size_t k);
  // Flat and index-addressed (issue 64): the cached pids, sorted, and their entries at the same
  // positions. A tick's lookups binary-search 4 bytes a process; a process's entry is written
  // only when it appears, changes pod, or leaves.
  std::vector<uint32_t> pids_;
  std::vector<Cached> cache_;
  size_t seen_this_generation_ = 0;  // entries whose `seen` is generation_
  struct ContainerCached {
    std::optional<uint32_t> identity_id;
    std::string pod_uid;
  };
  std::map<std::tuple<std::string, std::string, std::string>, ContainerCached> containers_;
  uint64_t containers_generation_ = 0;
  uint64_t generation_ = 0;
  std::string buffer_;
  const KubePodDirectory* pods_ = nullptr;
  LocalContainers* local_ = nullptr;
  std::function<bool(uint32_t)> override_applies_;
  IdentityRecord override_identity_;
};

}  // namespace cgov

#endif  // CGOV_IDENTITY_PROCESS_ATTRIBUTION_H_
