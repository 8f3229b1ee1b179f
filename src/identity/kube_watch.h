// Keeps a KubePodDirectory up to date with the pods of one node, from the Kubernetes API server:
// a paginated list (GET /api/v1/pods?fieldSelector=spec.nodeName=NODE&limit=500), then a watch
// from the list's resourceVersion (watch=1, allowWatchBookmarks, timeoutSeconds=300). A watch
// that ends or drops is resumed from the last resourceVersion; one the server calls gone (410)
// is replaced by a fresh list. Authenticated by the service account's bearer token (re-read at
// every connection: projected tokens rotate) over TLS checked against its CA. On its own thread;
// libcurl (loaded at run time). Opt-in (`cgov daemon --kubernetes`): nothing is sent otherwise.
#ifndef CGOV_IDENTITY_KUBE_WATCH_H_
#define CGOV_IDENTITY_KUBE_WATCH_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "identity/kube_pods.h"
#include "os/env.h"
#include "os/worker.h"

namespace cgov {

struct KubeApiOptions {
  std::string api_url;     // "https://10.96.0.1:443" (no trailing slash)
  std::string token_file;  // "" = no token (a test server, or kubectl proxy)
  std::string ca_file;     // "" = the system's CAs
  std::string node_name;
  int page_size = 500;
  // A list stops with an error past max_pods_listed / page_size + 1 pages (Kubernetes supports
  // 150,000 pods in a cluster, and a field-selected list may page through all of them), or at a
  // continue token given twice: a server that always answers with one is not paged forever, and
  // the list is tried again after the watch's back-off.
  int max_pods_listed = 150'000;
  int watch_timeout_s = 300;
  std::chrono::milliseconds retry_min{1000};
  std::chrono::milliseconds retry_max{60000};
  Env* env = Env::Default();  // the HTTP client, the clocks, the token file
};

// The in-cluster defaults: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT and the
// service account's token and CA under /var/run/secrets/kubernetes.io/serviceaccount/. api_url
// is empty outside a cluster.
KubeApiOptions InClusterKubeApi();

class KubePodWatch {
 public:
  // Starts listing and watching; errors only when libcurl cannot be loaded.
  static Result<std::unique_ptr<KubePodWatch>> Start(KubeApiOptions options,
                                                     KubePodDirectory* pods);
  ~KubePodWatch();  // stops: aborts the transfer in flight and joins the thread
  KubePodWatch(const KubePodWatch&) = delete;
  KubePodWatch& operator=(const KubePodWatch&) = delete;

  // Waits up to `timeout` for the first complete list, or for the first attempt to fail. False
  // when no list came; LastError() says why (the server unreachable, the token refused, RBAC's
  // 403...), and the watch keeps retrying.
  bool WaitSynced(std::chrono::milliseconds timeout);
  std::string LastError() const;
  // The last list or watch worked (no error since): the daemon's collector health.
  bool healthy() const { return healthy_.load(); }
  uint64_t lists() const { return lists_.load(); }      // complete lists so far
  uint64_t watches() const { return watches_.load(); }  // watch requests made

 private:
  explicit KubePodWatch(KubeApiOptions options, KubePodDirectory* pods)
      : o_(std::move(options)), pods_(pods) {}
  void Loop();
  Status List();
  Status Watch();  // kNotFound: the resourceVersion is gone (relist)
  // One GET; `on_data` gets the body as it arrives and returns false to stop the transfer.
  Status Get(const std::string& url, long timeout_ms,
             const std::function<bool(std::string_view)>& on_data, std::string* error_body,
             long* status);
  void SetError(std::string error);

  KubeApiOptions o_;
  KubePodDirectory* pods_;
  std::atomic<uint64_t> lists_{0}, watches_{0};
  std::atomic<bool> healthy_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string last_error_;
  bool synced_ = false;
  Worker worker_;  // last: stopped before the state it reads goes
};

}  // namespace cgov

#endif  // CGOV_IDENTITY_KUBE_WATCH_H_
