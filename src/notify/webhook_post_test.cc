// One webhook POST on the Env's HttpClient (tests/fakes/fake_env.h, fake_http_client.h): what is
// sent, what is read back, and that the URL (a credential for Slack and Teams) never reaches a
// message.
#include "notify/webhook_post.h"

#include <gtest/gtest.h>

#include "fakes/fake_env.h"
#include "fakes/fake_http_client.h"

namespace cgov {
namespace {

const std::string kUrl = "https://hooks.example/T000/B000/secret";

Result<PostOutcome> Post(const FakeHttpClient& client, const std::string& body,
                         const std::string& key, int64_t timeout_ms) {
  FakeEnv env;
  env.set_http(&client);
  return PostJson(kUrl, body, key, timeout_ms, nullptr, &env);
}

TEST(PostJson, SendsThePostWithItsIdempotencyKeyAndReadsRetryAfter) {
  FakeHttpClient client([](const HttpRequest& r) {
    return FakeHttpClient::Reply(r, 429, {"Retry-After: 7", "X-Other: 1"}, "slow down");
  });
  Result<PostOutcome> out = Post(client, "{\"a\":1}", "n-1", 2000);
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ(out->http_status, 429);
  EXPECT_EQ(out->retry_after_ms, 7000);
  EXPECT_EQ(out->error, "slow down");
  const std::vector<HttpRequest> all = client.sent();
  ASSERT_EQ(all.size(), 1u);
  const HttpRequest& sent = all[0];
  EXPECT_TRUE(sent.post);
  EXPECT_EQ(sent.url, kUrl);
  EXPECT_EQ(sent.post_body, "{\"a\":1}");
  EXPECT_EQ(sent.timeout, std::chrono::milliseconds(2000));
  EXPECT_NE(std::find(sent.headers.begin(), sent.headers.end(), "Idempotency-Key: n-1"),
            sent.headers.end());
  EXPECT_NE(std::find(sent.headers.begin(), sent.headers.end(), "Expect:"), sent.headers.end());
}

TEST(PostJson, AFailedTransferIsSaidWithoutTheUrl) {
  FakeHttpClient client([](const HttpRequest& r) {
    HttpResponse failed;
    failed.end = HttpResponse::End::kFailed;
    failed.error = "Could not resolve host: " + r.url;
    return Result<HttpResponse>(failed);
  });
  Result<PostOutcome> out = Post(client, "{}", "n-2", 1000);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->http_status, 0);
  EXPECT_EQ(out->error.find("secret"), std::string::npos) << out->error;
  EXPECT_NE(out->error.find("(the sink's URL)"), std::string::npos) << out->error;
}

TEST(PostJson, AnHttpDateRetryAfterIsTakenAsAbsent) {
  FakeHttpClient client([](const HttpRequest& r) {
    return FakeHttpClient::Reply(r, 503, {"retry-after: Wed, 21 Oct 2026 07:28:00 GMT"}, "");
  });
  Result<PostOutcome> out = Post(client, "{}", "n-3", 1000);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->retry_after_ms, -1);
}

}  // namespace
}  // namespace cgov
