// The pods of this Kubernetes node as the API server describes them: UID -> namespace, name,
// the container names by container id, and the project/team/user their labels give. Filled from
// a pod list and then from watch events (src/identity/kube_watch.h); read by the daemon's
// process attribution, which knows a process's pod only as the UID and container id in its
// cgroup path. Thread-safe.
//
// Memory is bounded: only the labels the mapping names are kept, at most `max_pods` pods, and a
// deleted pod is kept for `deleted_grace_ms` (its processes may linger) and then forgotten.
#ifndef CGOV_IDENTITY_KUBE_PODS_H_
#define CGOV_IDENTITY_KUBE_PODS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/status.h"

namespace cgov {

// Which pod labels name a pod's project, team and user: the first label present wins.
struct KubeLabelMap {
  std::vector<std::string> project, team, user;
};
// project-id, then app.kubernetes.io/part-of, then app.kubernetes.io/name; team-id; user-id.
KubeLabelMap DefaultKubeLabelMap();
// "project=project-id,app.kubernetes.io/part-of;team=team-id;user=user-id": each of project,
// team and user at most once, each with one or more label keys (Kubernetes' label-key syntax).
Result<KubeLabelMap> ParseKubeLabelMap(std::string_view text);

// What a JSON object of labels says of its owners through `map`: the first key present wins,
// values made safe text; empty when none is set. Pods' labels and Docker containers' alike.
struct LabelOwners {
  std::string project, team, user;
};
LabelOwners OwnersFromLabels(const KubeLabelMap& map, const nlohmann::json& labels);

struct KubePod {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string project, team, user;  // from the labels; empty when none of the keys is set
  std::map<std::string, std::string> containers;  // container id (no runtime prefix) -> name
  int64_t deleted_ms = 0;                         // 0: not deleted
  uint64_t list_epoch = 0;  // the directory's bookkeeping: the last list that had this pod
};

class KubePodDirectory {
 public:
  explicit KubePodDirectory(KubeLabelMap map, size_t max_pods = 20000,
                            int64_t deleted_grace_ms = 600'000);

  // A page of a pod list (GET /api/v1/pods): its pods are added; `first_page` clears the pods
  // the previous list left (a relist). Returns the list's metadata.continue ("" on the last page)
  // and sets resource_version() from its metadata.resourceVersion.
  Result<std::string> ApplyListPage(std::string_view json, bool first_page, int64_t now_ms);
  // One watch event line: ADDED / MODIFIED / DELETED / BOOKMARK move resource_version();
  // ERROR returns its status: kNotFound for 410 Gone (the caller relists), another error
  // otherwise. A line that is not an event is an error naming what is wrong.
  Status ApplyEvent(std::string_view json_line, int64_t now_ms);

  std::optional<KubePod> Find(std::string_view uid) const;
  // By namespace and name (the kubelet's pod-resources API names pods so): a live pod before a
  // deleted one of the same name. A scan of every pod: for callers that cache the answer.
  std::optional<KubePod> FindByName(std::string_view namespace_name, std::string_view name) const;
  // Changes with every pod added, changed or removed (callers re-resolve what they cached).
  uint64_t generation() const;
  std::string resource_version() const;
  size_t size() const;
  // Pods dropped because the directory was full (counted, never silently).
  uint64_t dropped() const;
  // Forgets pods deleted more than the grace period before now_ms.
  void Expire(int64_t now_ms);

 private:
  Status Upsert(const nlohmann::json& pod, int64_t now_ms, bool deleted);

  KubeLabelMap map_;
  size_t max_pods_;
  int64_t deleted_grace_ms_;
  mutable std::mutex mu_;
  std::map<std::string, KubePod, std::less<>> pods_;
  std::string resource_version_;
  uint64_t generation_ = 0;
  uint64_t dropped_ = 0;
  uint64_t list_epoch_ = 0;
};

}  // namespace cgov

#endif  // CGOV_IDENTITY_KUBE_PODS_H_
