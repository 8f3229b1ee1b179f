// Test-only: the three clouds' instance metadata services as their documentation describes
// them, for FakeHttpServer (identity/cloud_instance.h is the client):
//   "aws"     IMDSv2 required: PUT /latest/api/token gives a token; GETs under /latest/meta-data
//             without it answer 401.
//   "aws-v1"  the token PUT refused (405), GETs answered without a token.
//   "gcp"     GETs under /computeMetadata/v1/instance need Metadata-Flavor: Google (else 403).
//   "azure"   GETs under /metadata/instance/compute need Metadata: true and an api-version
//             (else 400).
// Anything else answers 404 (a PUT to GCP or Azure: 405).
#ifndef CGOV_TESTS_FAKES_FAKE_CLOUD_METADATA_H_
#define CGOV_TESTS_FAKES_FAKE_CLOUD_METADATA_H_

#include <string>
#include <utility>

#include "fakes/fake_http_server.h"

namespace cgov {

inline constexpr char kFakeAwsToken[] = "AQAEAFakeTokenFromTheTest==";

inline FakeHttpServer::Handler FakeCloudMetadata(const std::string& cloud) {
  return [cloud](const std::string& head) -> std::pair<int, std::string> {
    const std::string line = head.substr(0, head.find("\r\n"));
    auto has = [&](const std::string& header) {
      return head.find("\r\n" + header + "\r\n") != std::string::npos;
    };
    const bool put = line.starts_with("PUT ");
    auto path_is = [&](const std::string& path) {
      return line.find(" " + path + " ") != std::string::npos ||
             line.find(" " + path + "?") != std::string::npos;
    };
    if (cloud == "aws" || cloud == "aws-v1") {
      if (put && path_is("/latest/api/token")) {
        if (cloud == "aws-v1") return {405, ""};
        return has("X-aws-ec2-metadata-token-ttl-seconds: 60") ? std::pair(200, kFakeAwsToken)
                                                               : std::pair(400, "");
      }
      const bool token = has(std::string("X-aws-ec2-metadata-token: ") + kFakeAwsToken);
      if (cloud == "aws" && !token && line.find("/latest/meta-data/") != std::string::npos) {
        return {401, ""};
      }
      if (path_is("/latest/meta-data/instance-type")) return {200, "p5.48xlarge"};
      if (path_is("/latest/meta-data/instance-id")) return {200, "i-0123456789abcdef0"};
      return {404, "Not Found"};
    }
    if (put) return {405, ""};
    if (cloud == "gcp" && line.find("/computeMetadata/v1/instance/") != std::string::npos) {
      if (!has("Metadata-Flavor: Google")) return {403, "Missing Metadata-Flavor:Google header."};
      if (path_is("/computeMetadata/v1/instance/machine-type")) {
        return {200, "projects/123456789/machineTypes/a3-highgpu-1g"};
      }
      if (path_is("/computeMetadata/v1/instance/id")) return {200, "4520031799277581759"};
    }
    if (cloud == "azure" && line.find("/metadata/instance/compute/") != std::string::npos) {
      if (!has("Metadata: true") || line.find("api-version=") == std::string::npos) {
        return {400, "{\"error\": \"Bad request\"}"};
      }
      if (path_is("/metadata/instance/compute/vmSize")) return {200, "Standard_ND96isr_H100_v5"};
      if (path_is("/metadata/instance/compute/resourceId")) {
        return {200,
                "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/gpu/"
                "providers/Microsoft.Compute/virtualMachines/gpu-1"};
      }
    }
    return {404, "Not Found"};
  };
}

}  // namespace cgov

#endif  // CGOV_TESTS_FAKES_FAKE_CLOUD_METADATA_H_
