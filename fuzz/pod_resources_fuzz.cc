// The kubelet's pod-resources answer (`cgov daemon --pod-resources`): a gRPC response body off a
// unix socket, then a v1.ListPodResourcesResponse protobuf decoded by hand. Properties: the body
// is its 5-byte prefix and the message it declares, or an error; a decoded message gives devices
// whose strings came from its bytes (never longer than the message); a refusal is safe to print;
// and decoding is a function of the bytes (the same message decodes the same twice).
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text.h"
#include "fuzz_check.h"
#include "fuzz_target.h"
#include "identity/pod_resources.h"

using namespace cgov;

CGOV_FUZZ_TARGET(pod_resources_fuzz) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The same bytes as a whole gRPC body, and as a bare message (what the body holds).
  Result<std::string_view> message = GrpcUnaryMessage(bytes);
  if (message.ok()) {
    FUZZ_CHECK(message->size() + 5 == bytes.size());
    FUZZ_CHECK(message->data() == bytes.data() + 5);
  } else {
    FUZZ_CHECK(SafeText(message.status().message()) == message.status().message());
  }
  Result<std::vector<PodDevice>> devices = DecodeListPodResourcesResponse(bytes);
  if (!devices.ok()) {
    FUZZ_CHECK(SafeText(devices.status().message()) == devices.status().message());
    return 0;
  }
  size_t total = 0;
  for (const PodDevice& d : *devices) {
    total += d.device_id.size();
    FUZZ_CHECK(d.namespace_name.size() <= size && d.pod.size() <= size &&
               d.container.size() <= size && d.resource_name.size() <= size &&
               d.device_id.size() <= size);
  }
  FUZZ_CHECK(devices->empty() || total <= size * devices->size());
  Result<std::vector<PodDevice>> again = DecodeListPodResourcesResponse(bytes);
  FUZZ_CHECK(again.ok() && *again == *devices);
  return 0;
}
