// The cloud instance a host is, from its cloud's metadata service: opt-in (cgov run and cgov
// daemon --detect-instance), one bounded exchange at start, never DNS, only the address given
// (default 169.254.169.254; tests point it at a fake on loopback). Each provider as it documents
// its service:
//   AWS   IMDSv2: PUT /latest/api/token (X-aws-ec2-metadata-token-ttl-seconds) for a session
//         token, then GET /latest/meta-data/instance-type and .../instance-id with it
//         (X-aws-ec2-metadata-token); a host that refuses the PUT is asked once more without a
//         token (IMDSv1).
//   GCP   GET /computeMetadata/v1/instance/machine-type and .../instance/id, with
//         Metadata-Flavor: Google.
//   Azure GET /metadata/instance/compute/vmSize and .../resourceId, ?api-version=2021-02-01
//         &format=text, with Metadata: true.
// The instance type is then priced through the catalog (data/prices.json names each provider's
// types as it does: p5.48xlarge, a3-highgpu-1g, Standard_ND96isr_H100_v5).
#ifndef CGOV_IDENTITY_CLOUD_INSTANCE_H_
#define CGOV_IDENTITY_CLOUD_INSTANCE_H_

#include <chrono>
#include <string>
#include <string_view>

#include "core/status.h"
#include "os/env.h"

namespace cgov {

enum class CloudProvider { kAuto, kAws, kGcp, kAzure };

inline constexpr char kDefaultMetadataEndpoint[] = "http://169.254.169.254";

// The instance type in a metadata answer: AWS answers "p5.48xlarge", GCP
// "projects/123/machineTypes/a2-highgpu-1g" (the last path segment), Azure
// "Standard_ND96isr_H100_v5". Empty when it is not one (letters, digits, . - _, at most 64).
std::string InstanceTypeFromMetadata(std::string_view body);

// "auto", "aws", "gcp", "azure"; the error names them.
Result<CloudProvider> ParseCloudProvider(std::string_view text);
std::string_view CloudProviderName(CloudProvider provider);

struct CloudInstance {
  CloudProvider provider = CloudProvider::kAuto;
  std::string instance_type;  // "p5.48xlarge", "a3-highgpu-8g", "Standard_ND96isr_H100_v5"
  std::string instance_id;    // what the bill names the host by: i-0abc..., a GCP id, a resource id
};

// Asks `endpoint` (scheme, numeric host and port: "http://169.254.169.254") as `provider` says;
// kAuto tries AWS, then GCP, then Azure, and takes the first that answers as its provider does.
// Everything within `budget`. The error says what each provider answered. `env`: the plain HTTP
// client that asks and the clock the budget is kept by.
Result<CloudInstance> DetectCloudInstance(CloudProvider provider, const std::string& endpoint,
                                          std::chrono::milliseconds budget,
                                          Env* env = Env::Default());

}  // namespace cgov

#endif  // CGOV_IDENTITY_CLOUD_INSTANCE_H_
