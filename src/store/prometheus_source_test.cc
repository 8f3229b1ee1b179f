#include "store/prometheus_source.h"

#include <gtest/gtest.h>

#include "core/text.h"
#include "fakes/fake_http_server.h"

namespace cgov {
namespace {

// Issue 58, 5: a password in a --prometheus URL was printed in every error and in the
// honor-labels note (both name the server by PrometheusSource::url()).
TEST(PrometheusSource, ShowsItsUrlRedactedInEveryError) {
  Result<PrometheusSource> bad =
      PrometheusSource::Open("ftp://alice:s3cret@host:1", std::chrono::seconds(1));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("s3cret"), std::string::npos) << bad.status().message();
  Result<PrometheusSource> prom =
      PrometheusSource::Open("http://alice:s3cret@127.0.0.1:1", std::chrono::seconds(1));
  if (!prom.ok()) GTEST_SKIP() << "no libcurl: " << prom.status().message();
  EXPECT_EQ(prom->url(), "http://***@127.0.0.1:1");
  Result<std::vector<PromSeries>> answer = prom->Query("up", 0);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().message().find("s3cret"), std::string::npos)
      << answer.status().message();
  EXPECT_NE(answer.status().message().find("***@127.0.0.1:1"), std::string::npos)
      << answer.status().message();
}

// Issue 58, 4: OSC/CSI sequences in Prometheus label values (host, user) reached text, Markdown,
// CSV and stderr raw. A label value enters display-safe and bounded, whatever the server sends.
TEST(PrometheusSource, LabelValuesEnterDisplaySafeAndBounded) {
  const std::string hostile = "alice\\u001b]0;pwned\\u0007\\u001b[2J\\r\\u009b31m";
  const std::string answer =
      R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"user":")" +
      hostile + R"(","Hostname":")" + std::string(5000, 'h') + R"("},"value":[1795000000,"1"]}]}})";
  FakeHttpServer server([&](const std::string&) { return std::make_pair(200, answer); });
  Result<PrometheusSource> prom = PrometheusSource::Open(server.url(""), std::chrono::seconds(5));
  if (!prom.ok()) GTEST_SKIP() << "no libcurl: " << prom.status().message();
  Result<std::vector<PromSeries>> series = prom->Query("up", 1795000000);
  ASSERT_TRUE(series.ok()) << series.status().message();
  ASSERT_EQ(series->size(), 1u);
  const std::string user = (*series)[0].Label("user");
  EXPECT_TRUE(IsSafeText(user)) << user;
  EXPECT_TRUE(user.starts_with("alice\\x1b]0;pwned\\x07\\x1b[2J")) << user;
  EXPECT_EQ(user.find("\xc2\x9b"), std::string::npos) << user;
  EXPECT_EQ((*series)[0].Label("Hostname").size(), 1024u);
}

// Issue 57, 11: a NaN or 1e308 price or phase counter in an answer crashed `report --prometheus`
// and `top --prometheus` (llround of NaN). Such a point is no measurement: it never gets in.
TEST(PrometheusSource, APointThatIsNotAFiniteBoundedNumberNeverGetsIn) {
  const std::string answer =
      R"({"status":"success","data":{"resultType":"matrix","result":[)"
      R"({"metric":{"g":"nan"},"values":[[1795000000,"NaN"],[1795000001,"2.5"]]},)"
      R"({"metric":{"g":"inf"},"values":[[1795000000,"+Inf"],[1795000001,"-Inf"]]},)"
      R"({"metric":{"g":"huge"},"values":[[1795000000,"1e308"],[1795000001,"-1e16"]]},)"
      R"({"metric":{"g":"bound"},"values":[[1795000000,"1e15"]]}]}})";
  FakeHttpServer server([&](const std::string&) { return std::make_pair(200, answer); });
  Result<PrometheusSource> prom = PrometheusSource::Open(server.url(""), std::chrono::seconds(5));
  if (!prom.ok()) GTEST_SKIP() << "no libcurl: " << prom.status().message();
  Result<std::vector<PromSeries>> series = prom->QueryRange("x", 1795000000, 1795000001, 1);
  ASSERT_TRUE(series.ok()) << series.status().message();
  ASSERT_EQ(series->size(), 2u) << "the series with no finite, bounded point are left out";
  EXPECT_EQ((*series)[0].Label("g"), "nan");
  ASSERT_EQ((*series)[0].points.size(), 1u);
  EXPECT_EQ((*series)[0].points[0].second, 2.5);
  EXPECT_EQ((*series)[1].Label("g"), "bound");
  EXPECT_EQ((*series)[1].points[0].second, 1e15);
}

}  // namespace
}  // namespace cgov
