// The one libcurl client against a loopback server, and what rides on the seam.
#include "os/http_client.h"

#include <atomic>

#include <gtest/gtest.h>

#include "fakes/fake_http_server.h"

namespace cgov {
namespace {

TEST(UrlEncode, EverythingButTheUnreservedIsPercentEncoded) {
  EXPECT_EQ(UrlEncode("abc-XYZ_0.9~"), "abc-XYZ_0.9~");
  EXPECT_EQ(UrlEncode("sum by (a) (x{b=\"c\"})"), "sum%20by%20%28a%29%20%28x%7Bb%3D%22c%22%7D%29");
  EXPECT_EQ(UrlEncode("a+b/c="), "a%2Bb%2Fc%3D");
  EXPECT_EQ(UrlEncode("\xff"), "%FF");
}

TEST(CurlHttpClient, SendsHeadersAndAPostAndReadsTheStatusHeadersAndBody) {
  Result<const HttpClient*> client = CurlHttpClient();
  if (!client.ok()) GTEST_SKIP() << client.status().message();
  FakeHttpServer server(201, "made");
  HttpRequest r;
  r.url = server.url("/x");
  r.post = true;
  r.post_body = "{}";
  r.headers = {"Content-Type: application/json", "X-Test: 1"};
  std::vector<std::string> lines;
  r.on_header = [&](std::string_view line) { lines.emplace_back(line); };
  Result<HttpResponse> sent = (*client)->Send(r);
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  EXPECT_TRUE(sent->complete()) << sent->error;
  EXPECT_EQ(sent->status, 201);
  EXPECT_EQ(sent->body, "made");
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(lines.front().starts_with("HTTP/1.")) << lines.front();
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(server.requests()[0].starts_with("POST /x ")) << server.requests()[0];
  EXPECT_NE(server.requests()[0].find("X-Test: 1"), std::string::npos);
}

TEST(CurlHttpClient, OnDataRefusingEndsTheTransferAndNothingListeningIsSaid) {
  Result<const HttpClient*> client = CurlHttpClient();
  if (!client.ok()) GTEST_SKIP() << client.status().message();
  FakeHttpServer server(200, std::string(100'000, 'x'));
  HttpRequest r;
  r.url = server.url("/big");
  size_t got = 0;
  r.on_data = [&](std::string_view data) {
    got += data.size();
    return false;
  };
  Result<HttpResponse> sent = (*client)->Send(r);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(sent->end, HttpResponse::End::kRefused);
  EXPECT_GT(got, 0u);
  EXPECT_LT(got, 100'000u);

  HttpRequest nowhere;
  nowhere.url = "http://127.0.0.1:9/";  // discard: nothing listens there
  nowhere.connect_timeout = std::chrono::milliseconds(2000);
  Result<HttpResponse> refused = (*client)->Send(nowhere);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->end, HttpResponse::End::kNoConnection) << refused->error;
  EXPECT_FALSE(refused->error.empty());
}

TEST(CurlHttpClient, AStopFlagEndsASlowAnswer) {
  Result<const HttpClient*> client = CurlHttpClient();
  if (!client.ok()) GTEST_SKIP() << client.status().message();
  FakeHttpServer slow(200, "late", /*delay_ms=*/5000);
  std::atomic<bool> stop{true};  // already set: the progress callback ends it at once
  HttpRequest r;
  r.url = slow.url("/");
  r.stop = &stop;
  Result<HttpResponse> sent = (*client)->Send(r);
  ASSERT_TRUE(sent.ok());
  EXPECT_EQ(sent->end, HttpResponse::End::kStopped);
}

}  // namespace
}  // namespace cgov
