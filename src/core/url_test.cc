#include "core/url.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

TEST(RedactedUrl, CredentialsNeverShow) {
  EXPECT_EQ(RedactedUrl("http://127.0.0.1:9090"), "http://127.0.0.1:9090");
  EXPECT_EQ(RedactedUrl("https://alice:s3cret@prom.example:9090/prometheus?x=1"),
            "https://***@prom.example:9090/prometheus?x=1");
  EXPECT_EQ(RedactedUrl("http://tok@en:p@ss@host/"), "http://***@host/");
  EXPECT_EQ(RedactedUrl("http://host/path@not-userinfo"), "http://host/path@not-userinfo");
  EXPECT_EQ(RedactedUrl("http://u:p@host\x1b]0;x\x07"), "http://***@host\\x1b]0;x\\x07");
}

}  // namespace
}  // namespace cgov
