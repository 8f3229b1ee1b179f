// cgov run's sampling loop on a FakeEnv (tests/fakes/fake_env.h): the host's files are a captured
// /proc, and the Env's clock moves a second at every read, so ticks a second apart follow one
// another with no real second between them. What is asserted comes from the fixture and the fake
// driver, never from the machine the test runs on.
#include "app/run/run_recorder.h"

#include <unistd.h>

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/fake_env.h"
#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"
#include "fakes/nvml_testing.h"

namespace cgov {
namespace {

constexpr char kScenario[] = R"({"driver_version": "550.54.15", "gpus": [{
  "name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
  "timeline": [{"t": 0, "util_gpu": 40, "util_mem": 10, "power_w": 200}],
  "processes": [{"pid": 41000, "type": "compute", "used_mib": 8000}]}]})";

// A monotonic clock that has moved a second each time it is read.
class LeapingClock : public FakeClock {
 public:
  int64_t MonotonicNs() override { return mono_ns_.fetch_add(1'000'000'000) + 1'000'000'000; }

 private:
  std::atomic<int64_t> mono_ns_{5'000'000'000};
};

// The fixture's files, counting the ticks that read them (each reads /proc/stat once).
class TickCountingReader : public ForwardingFileReader {
 public:
  using ForwardingFileReader::ForwardingFileReader;
  Status ReadHot(std::string_view path, std::string* out) override {
    if (path == "/proc/stat") ticks.fetch_add(1);
    return ForwardingFileReader::ReadHot(path, out);
  }
  std::atomic<int> ticks{0};
};

TEST(RunRecorder, TheLoopSamplesTheEnvsFilesByTheEnvsClock) {
  testing::FakeNvml nvml("full", kScenario);
  ASSERT_TRUE(nvml.loaded());
  FakeFileReader files;
  ASSERT_TRUE(files.LoadTree(testing::FixturePath("proc/shared-box"), "").ok());
  TickCountingReader counting(&files);
  LeapingClock clock;
  FakeEnv env;
  env.set_clock(&clock);
  env.set_files(&counting);

  RecorderOptions o;
  o.nvml_lib = nvml.path();
  o.host_root = "/";
  o.interval = std::chrono::milliseconds(1000);
  o.start_mono_ns = clock.MonotonicNs();
  o.root_pid = 1;  // the job: the fixture's four processes, each a child of pid 1
  o.env = &env;
  SamplesHeader header;
  RunRecorder recorder(o, header, nullptr);
  recorder.Start();
  // Ticks a second apart by the Env's clock: the loop never waits for a real second. Stopped
  // after the eleventh; a loop that waited for the machine's clock would take ten seconds.
  const auto started = std::chrono::steady_clock::now();
  while (counting.ticks.load() < 11 &&
         std::chrono::steady_clock::now() - started < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  recorder.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5))
      << "eleven ticks took real seconds: the loop waited for the machine's clock";
  RunSummary summary;
  recorder.Finish(clock.MonotonicNs(), &summary);

  EXPECT_GE(summary.samples, 11u);
  ASSERT_EQ(summary.gpus.size(), 1u);
  EXPECT_EQ(summary.driver_version, "550.54.15");
  // The job's memory is the fixture's: four processes of 396 resident pages each (the 24th
  // field of each stat), whatever this machine's processes hold.
  ASSERT_TRUE(summary.job_rss_max_bytes.has_value());
  EXPECT_EQ(*summary.job_rss_max_bytes, 4 * 396u * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_TRUE(summary.gpu_unavailable_reason.empty()) << summary.gpu_unavailable_reason;
}

}  // namespace
}  // namespace cgov
