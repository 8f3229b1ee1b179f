#include "identity/cloud_instance.h"

#include <gtest/gtest.h>

#include <chrono>

#include "fakes/fake_cloud_metadata.h"
#include "fakes/fake_http_server.h"

namespace cgov {
namespace {

using std::chrono::milliseconds;

std::string Base(const FakeHttpServer& server) { return server.url(""); }

TEST(CloudInstance, AwsAsksForAnImdsV2TokenFirstAndSendsItWithEachQuestion) {
  FakeHttpServer aws(FakeCloudMetadata("aws"));
  Result<CloudInstance> found =
      DetectCloudInstance(CloudProvider::kAws, Base(aws), milliseconds(2000));
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->provider, CloudProvider::kAws);
  EXPECT_EQ(found->instance_type, "p5.48xlarge");
  EXPECT_EQ(found->instance_id, "i-0123456789abcdef0");
  const std::vector<std::string> asked = aws.requests();
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_TRUE(asked[0].starts_with("PUT /latest/api/token HTTP/1.0\r\n")) << asked[0];
  EXPECT_NE(asked[0].find("Content-Length: 0\r\n"), std::string::npos);
  EXPECT_TRUE(asked[1].starts_with("GET /latest/meta-data/instance-type ")) << asked[1];
  EXPECT_NE(asked[1].find(std::string("X-aws-ec2-metadata-token: ") + kFakeAwsToken),
            std::string::npos);
}

TEST(CloudInstance, AnAwsHostThatRefusesTheTokenIsAskedWithout) {
  FakeHttpServer aws(FakeCloudMetadata("aws-v1"));
  Result<CloudInstance> found =
      DetectCloudInstance(CloudProvider::kAws, Base(aws), milliseconds(2000));
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->instance_type, "p5.48xlarge");
  EXPECT_EQ(aws.requests()[1].find("X-aws-ec2-metadata-token:"), std::string::npos);
}

TEST(CloudInstance, GcpAndAzureAnswerWithTheirHeaders) {
  FakeHttpServer gcp(FakeCloudMetadata("gcp"));
  Result<CloudInstance> g = DetectCloudInstance(CloudProvider::kGcp, Base(gcp), milliseconds(2000));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->instance_type, "a3-highgpu-1g");  // the last segment of projects/.../machineTypes/
  EXPECT_EQ(g->instance_id, "4520031799277581759");
  FakeHttpServer azure(FakeCloudMetadata("azure"));
  Result<CloudInstance> a =
      DetectCloudInstance(CloudProvider::kAzure, Base(azure), milliseconds(2000));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->instance_type, "Standard_ND96isr_H100_v5");
  EXPECT_TRUE(a->instance_id.starts_with("/subscriptions/")) << a->instance_id;
  EXPECT_NE(azure.requests()[0].find("?api-version=2021-02-01&format=text"), std::string::npos);
}

TEST(CloudInstance, AutoFindsEachCloudInTurn) {
  for (const char* cloud : {"aws", "gcp", "azure"}) {
    FakeHttpServer server(FakeCloudMetadata(cloud));
    Result<CloudInstance> found =
        DetectCloudInstance(CloudProvider::kAuto, Base(server), milliseconds(3000));
    ASSERT_TRUE(found.ok()) << cloud << ": " << found.status().message();
    EXPECT_EQ(CloudProviderName(found->provider), std::string(cloud));
  }
}

TEST(CloudInstance, WrongProviderOrNothingThereIsAnErrorThatSaysWhatAnswered) {
  FakeHttpServer gcp(FakeCloudMetadata("gcp"));
  Result<CloudInstance> as_aws =
      DetectCloudInstance(CloudProvider::kAws, Base(gcp), milliseconds(2000));
  ASSERT_FALSE(as_aws.ok());
  EXPECT_NE(as_aws.status().message().find("AWS: instance-type: HTTP 404"), std::string::npos)
      << as_aws.status().message();
  // Nothing listening: one refused connection, and auto does not go on asking the others.
  int port = 0;
  {
    FakeHttpServer gone(200, "");
    port = gone.port();
  }
  Result<CloudInstance> none = DetectCloudInstance(
      CloudProvider::kAuto, "http://127.0.0.1:" + std::to_string(port), milliseconds(2000));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(none.status().message().find("GCP"), std::string::npos) << none.status().message();
}

TEST(CloudInstance, AHangingServiceIsGivenUpWithinTheBudget) {
  FakeHttpServer hanging(200, "p5.48xlarge", /*delay_ms=*/3000);
  const auto start = std::chrono::steady_clock::now();
  Result<CloudInstance> found =
      DetectCloudInstance(CloudProvider::kAuto, Base(hanging), milliseconds(300));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(found.ok());
  EXPECT_LT(took, std::chrono::milliseconds(1500));  // the budget, and no next provider
}

TEST(InstanceTypeFromMetadata, AwsAndGcpAnswers) {
  EXPECT_EQ(InstanceTypeFromMetadata("p5.48xlarge"), "p5.48xlarge");
  EXPECT_EQ(InstanceTypeFromMetadata("projects/123/machineTypes/a2-highgpu-1g\n"), "a2-highgpu-1g");
  EXPECT_EQ(InstanceTypeFromMetadata("<html>error</html>"), "");
  EXPECT_EQ(InstanceTypeFromMetadata(""), "");
}

TEST(CloudInstance, ProvidersParseAndNameWhatTheyAccept) {
  EXPECT_EQ(*ParseCloudProvider(""), CloudProvider::kAuto);
  EXPECT_EQ(*ParseCloudProvider("azure"), CloudProvider::kAzure);
  EXPECT_EQ(ParseCloudProvider("oracle").status().message(),
            "--detect-instance oracle: expected auto, aws, gcp or azure");
}

}  // namespace
}  // namespace cgov
