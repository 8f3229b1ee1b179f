// What the Kubernetes API server sends `cgov daemon --kubernetes`: the bytes as a page of a pod
// list, then each line as a watch event, into one KubePodDirectory. Properties: no crash or
// leak; every refusal is safe to print; the directory never holds more pods than its bound; a
// pod found by its UID carries that UID and names that are safe to print; a BOOKMARK or an
// event moves the resource version to what the server said or leaves it.
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"
#include "identity/kube_pods.h"

using namespace cgov;

CGOV_FUZZ_TARGET(kube_pods_fuzz) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr size_t kMaxPods = 16;
  KubePodDirectory pods(DefaultKubeLabelMap(), kMaxPods, 1000);
  Result<std::string> next = pods.ApplyListPage(bytes, /*first_page=*/true, 1000);
  if (!next.ok()) {
    FUZZ_CHECK(SafeText(next.status().message()) == next.status().message());
  }
  int64_t now_ms = 2000;
  for (size_t at = 0; at < bytes.size();) {
    const size_t eol = std::min(bytes.find('\n', at), bytes.size());
    Status s = pods.ApplyEvent(bytes.substr(at, eol - at), now_ms += 100);
    if (!s.ok()) FUZZ_CHECK(SafeText(s.message()) == s.message());
    at = eol + 1;
  }
  FUZZ_CHECK(pods.size() <= kMaxPods);
  // Any UID the bytes might name: look up each quoted string.
  for (size_t at = bytes.find('"'); at != std::string_view::npos;) {
    const size_t end = bytes.find('"', at + 1);
    if (end == std::string_view::npos) break;
    const std::string_view uid = bytes.substr(at + 1, end - at - 1);
    if (std::optional<KubePod> pod = pods.Find(uid)) {
      FUZZ_CHECK(pod->uid == uid);
      FUZZ_CHECK(IsSafeText(pod->name) && IsSafeText(pod->namespace_name));
      FUZZ_CHECK(IsSafeText(pod->project) && IsSafeText(pod->team) && IsSafeText(pod->user));
    }
    at = bytes.find('"', end + 1);
  }
  pods.Expire(now_ms + 10'000);
  FUZZ_CHECK(pods.size() <= kMaxPods);
  return 0;
}
