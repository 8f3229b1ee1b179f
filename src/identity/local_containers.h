// Containers outside Kubernetes: a Docker or Podman container on a GPU box, found by the 64-hex
// id its processes' cgroup path names (docker-<id>.scope, /docker/<id>, libpod-<id>.scope), named
// from its runtime's own state where cgov can read it:
// - Docker: <root>/containers/<id>/config.v2.json ("Name", "Config.Labels"); root
//   /var/lib/docker.
// - Podman (containers/storage): <root>/overlay-containers/containers.json (each container's
//   "id" and "names"); root /var/lib/containers/storage. No labels there.
// Both under the daemon's --host-root. A runtime whose state cannot be read (not installed, or
// the daemon not root) leaves the container known by its id only. Not thread-safe.
#ifndef CGOV_IDENTITY_LOCAL_CONTAINERS_H_
#define CGOV_IDENTITY_LOCAL_CONTAINERS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "identity/kube_pods.h"
#include "os/file_reader.h"

namespace cgov {

struct LocalContainer {
  std::string runtime;  // "docker", "podman"
  std::string name;     // without Docker's leading '/'
  // From the container's labels, through the same label keys as pods' (--kube-labels):
  // empty when none is set.
  std::string project, team, user;
};

// What is kept of a runtime's state, at most: a name or label value's bytes, and labels.
inline constexpr size_t kMaxContainerName = 256;
inline constexpr size_t kMaxContainerLabels = 256;

// Pure: Docker's config.v2.json of one container. Read as a stream keeping only the name and
// labels (each cut to kMaxContainerName): a 16 MiB, deeply nested file costs no more memory than
// its own bytes and one byte a level of nesting.
Result<LocalContainer> ParseDockerConfig(std::string_view json, const KubeLabelMap& labels);
// Pure: containers/storage's containers.json, container id -> its first name (cut likewise).
Result<std::map<std::string, std::string>> ParsePodmanContainers(std::string_view json);

class LocalContainers {
 public:
  explicit LocalContainers(FileReader* files, KubeLabelMap labels = DefaultKubeLabelMap(),
                           std::string docker_root = "/var/lib/docker",
                           std::string podman_root = "/var/lib/containers/storage")
      : files_(files),
        labels_(std::move(labels)),
        docker_root_(std::move(docker_root)),
        podman_root_(std::move(podman_root)) {}

  // The container `id` as its runtime describes it; nullopt when no runtime's state knows it.
  // Remembered, found or not (a container's process runs after its record is written).
  std::optional<LocalContainer> Find(const std::string& id);
  // Forgets what was found: read again at the next Find (SIGHUP).
  void Clear() { found_.clear(); }

 private:
  std::optional<LocalContainer> Read(const std::string& id);

  FileReader* files_;
  KubeLabelMap labels_;
  std::string docker_root_, podman_root_;
  std::map<std::string, std::optional<LocalContainer>> found_;
};

}  // namespace cgov

#endif  // CGOV_IDENTITY_LOCAL_CONTAINERS_H_
