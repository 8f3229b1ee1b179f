#include "os/http_get.h"

#include <gtest/gtest.h>

#include "fakes/fake_http_server.h"

namespace cgov {
namespace {

using std::chrono::milliseconds;

TEST(HttpGet, AnswerAndTheRequestItSent) {
  FakeHttpServer server(200, "p4d.24xlarge");
  auto r = HttpGet(server.url("/latest/meta-data/instance-type"), {"Metadata-Flavor: Google"},
                   milliseconds(2000));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "p4d.24xlarge");
  ASSERT_EQ(server.requests().size(), 1u);
  EXPECT_TRUE(server.requests()[0].starts_with("GET /latest/meta-data/instance-type HTTP/1.0\r\n"));
  EXPECT_NE(server.requests()[0].find("Metadata-Flavor: Google\r\n"), std::string::npos);
}

TEST(HttpGet, StatusIsPassedBack) {
  FakeHttpServer server(401, "");
  auto r = HttpGet(server.url("/x"), {}, milliseconds(2000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 401);
}

TEST(HttpGet, ASilentServerCostsNoMoreThanTheTimeout) {
  FakeHttpServer server(200, "late", /*delay_ms=*/3000);
  auto start = std::chrono::steady_clock::now();
  auto r = HttpGet(server.url("/x"), {}, milliseconds(200));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.status().message().find("within the timeout"), std::string::npos);
  EXPECT_LT(took, milliseconds(1500)) << "bounded by the deadline, not the server";
}

TEST(HttpGet, RefusedAndUnsupportedUrls) {
  int port = 0;
  {
    FakeHttpServer gone(200, "");
    port = gone.port();
  }  // closed again: nothing listens
  auto refused = HttpGet("http://127.0.0.1:" + std::to_string(port) + "/", {}, milliseconds(500));
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  for (const char* url :
       {"https://127.0.0.1/", "http://metadata.google.internal/x", "http:///x", "ftp://1.2.3.4/"}) {
    auto bad = HttpGet(url, {}, milliseconds(100));
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << url;
  }
}

}  // namespace
}  // namespace cgov
