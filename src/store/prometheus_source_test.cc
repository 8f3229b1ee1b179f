#include "store/prometheus_source.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

// Issue 58, 5: a password in a --prometheus URL was printed in every error and in the
// honor-labels note (both name the server by PrometheusSource::url()).
TEST(PrometheusSource, ShowsItsUrlRedactedInEveryError) {
  Result<PrometheusSource> bad = PrometheusSource::Open("ftp://alice:s3cret@host:1",
                                                        std::chrono::seconds(1));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("s3cret"), std::string::npos) << bad.status().message();
  Result<PrometheusSource> prom = PrometheusSource::Open("http://alice:s3cret@127.0.0.1:1",
                                                         std::chrono::seconds(1));
  if (!prom.ok()) GTEST_SKIP() << "no libcurl: " << prom.status().message();
  EXPECT_EQ(prom->url(), "http://***@127.0.0.1:1");
  Result<std::vector<PromSeries>> answer = prom->Query("up", 0);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().message().find("s3cret"), std::string::npos)
      << answer.status().message();
  EXPECT_NE(answer.status().message().find("***@127.0.0.1:1"), std::string::npos)
      << answer.status().message();
}

}  // namespace
}  // namespace cgov
