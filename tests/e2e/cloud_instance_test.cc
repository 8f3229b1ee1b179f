// `cgov daemon --detect-instance` against a fake GCP metadata server on loopback (issue 48): the
// machine type prices the GPUs through the catalog, the instance id labels cgov_build_info (so
// `cgov report --billing` finds the host's lines), and a service that is not there is a warning,
// not a failure.
#include <signal.h>

#include <gtest/gtest.h>

#include "e2e_helpers.h"
#include "fakes/fake_cloud_metadata.h"
#include "fakes/fake_http_server.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

RunResult Daemon(const std::vector<std::string>& extra, std::string* metrics) {
  TempDir dir;
  const int port = FreePort();
  std::vector<std::string> argv = FakeDaemonArgv(dir, port);
  argv.insert(argv.end(), extra.begin(), extra.end());
  Started daemon = StartProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}});
  EXPECT_TRUE(WaitFor(TicksTaken(port, 2), 20));
  *metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  kill(daemon.pid, SIGTERM);
  return WaitProgram(daemon, 30);
}

TEST(CloudInstanceE2E, TheDaemonPricesAndLabelsWhatGcpsMetadataNames) {
  FakeHttpServer gcp(FakeCloudMetadata("gcp"));
  std::string metrics;
  RunResult r = Daemon({"--detect-instance", "gcp", "--metadata-endpoint", gcp.url("")}, &metrics);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cgov daemon: info: --detect-instance: gcp instance a3-highgpu-1g "
                       "(4520031799277581759)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(metrics.find("instance_id=\"4520031799277581759\""), std::string::npos)
      << metrics.substr(metrics.find("cgov_build_info"), 300);
  // a3-highgpu-1g's catalog price, not the H100's by model.
  const size_t price = metrics.find("\ncgov_gpu_price_usd_per_hour{");
  ASSERT_NE(price, std::string::npos);
  EXPECT_NE(metrics.substr(price, 400).find("a3-highgpu-1g"), std::string::npos)
      << metrics.substr(price, 400);
}

TEST(CloudInstanceE2E, NoMetadataServiceIsAWarningAndTheDaemonRecords) {
  int port = 0;
  {
    FakeHttpServer gone(200, "");
    port = gone.port();
  }
  std::string metrics;
  RunResult r = Daemon(
      {"--detect-instance", "--metadata-endpoint", "http://127.0.0.1:" + std::to_string(port)},
      &metrics);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cgov daemon: warning: --detect-instance: no instance type from"),
            std::string::npos)
      << r.err;
  EXPECT_NE(metrics.find("cgov_ticks_total"), std::string::npos);
}

}  // namespace
}  // namespace cgov::e2e
