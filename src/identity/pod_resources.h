// Which devices the kubelet gave each container of this node: the kubelet's pod-resources API
// (gRPC service v1.PodResourcesLister, method List, on the unix socket
// /var/lib/kubelet/pod-resources/kubelet.sock). A GPU allocated to a pod is that pod's whether
// or not cgov sees a process of it on the GPU (docs/kubernetes.md, "GPUs allocated to pods").
//
// One unary call needs no gRPC runtime: it is an HTTP/2 POST with a 5-byte length prefix before
// the message and a grpc-status trailer after it. libcurl (loaded at run time, HTTP/2 through its
// nghttp2) speaks it over the unix socket; the response is decoded here by hand from the
// message shapes of the kubelet's podresources/v1 api.proto (unknown fields skipped, as protobuf
// requires). Tests run it against a real gRPC server (Python grpcio) answering protoc-encoded
// messages: tests/fake_kube/pod_resources_server.py.
#ifndef CGOV_IDENTITY_POD_RESOURCES_H_
#define CGOV_IDENTITY_POD_RESOURCES_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "os/env.h"
#include "os/worker.h"

namespace cgov {

inline constexpr char kPodResourcesSocket[] = "/var/lib/kubelet/pod-resources/kubelet.sock";

// One device the kubelet gave one container.
struct PodDevice {
  std::string namespace_name, pod, container;
  std::string resource_name;  // "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  std::string device_id;      // the device plugin's ID: "GPU-<uuid>", "MIG-<uuid>", "0", ...
  bool operator==(const PodDevice&) const = default;
};

// Decodes a v1.ListPodResourcesResponse message: every device of every container, in the order
// given. Errors name what is malformed and where (byte offset).
Result<std::vector<PodDevice>> DecodeListPodResourcesResponse(std::string_view message);

// The one message of a unary gRPC response body (a 5-byte prefix: compressed flag, big-endian
// length). A compressed message is an error (cgov offers no compression, so none is sent).
Result<std::string_view> GrpcUnaryMessage(std::string_view body);

// Calls List once over `socket_path`, waiting at most `timeout`. Unavailable naming the socket
// and what went wrong (no socket, permission, a gRPC status other than OK with its message).
Result<std::vector<PodDevice>> ListPodResources(const std::string& socket_path,
                                                std::chrono::milliseconds timeout,
                                                Env* env = Env::Default());

struct PodResourcesOptions {
  std::string socket_path = kPodResourcesSocket;
  std::chrono::milliseconds interval{10'000};  // between two List calls
  std::chrono::milliseconds timeout{5'000};    // for one call
  // After failing this long, the last answer is dropped: an allocation no longer known is not
  // charged to anyone (the kubelet restarting takes seconds).
  std::chrono::milliseconds stale_after{60'000};
  Env* env = Env::Default();  // the HTTP client and the clocks
};

// Calls List every interval on its own thread and keeps the last answer.
class PodResourcesPoller {
 public:
  // Starts polling; errors only when libcurl cannot be loaded. The first call is made before
  // Start returns, so the first tick already knows the allocations (or why not: LastError()).
  static Result<std::unique_ptr<PodResourcesPoller>> Start(PodResourcesOptions options);
  ~PodResourcesPoller();  // stops and joins
  PodResourcesPoller(const PodResourcesPoller&) = delete;
  PodResourcesPoller& operator=(const PodResourcesPoller&) = delete;

  struct Snapshot {
    std::vector<PodDevice> devices;
    uint64_t generation = 0;  // changes when the devices do
  };
  std::shared_ptr<const Snapshot> Current() const;
  std::string LastError() const;  // "" while the last call worked
  bool healthy() const { return healthy_.load(); }
  uint64_t calls() const { return calls_.load(); }

 private:
  explicit PodResourcesPoller(PodResourcesOptions options) : o_(std::move(options)) {}
  void PollOnce();

  PodResourcesOptions o_;
  std::atomic<bool> healthy_{false};
  std::atomic<uint64_t> calls_{0};
  mutable std::mutex mu_;
  std::shared_ptr<const Snapshot> current_ = std::make_shared<Snapshot>();
  std::string last_error_;
  std::chrono::steady_clock::time_point last_ok_{};
  Worker worker_;  // last: stopped before the state it reads goes
};

}  // namespace cgov

#endif  // CGOV_IDENTITY_POD_RESOURCES_H_
