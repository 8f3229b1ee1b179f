#include "telemetry/sampler.h"

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"
#include "fakes/nvml_testing.h"

namespace cgov {
namespace {

using testing::FakeNvml;

constexpr const char* kSlowScenario = R"({
  "delays_ms": {"nvmlDeviceGetComputeRunningProcesses_v3": 300},
  "gpus": [{"memory_total_mib": 1024, "timeline": [{"t": 0, "util_gpu": 40}],
            "processes": [{"pid": 7, "used_mib": 512}]}]})";

class SamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(files_.LoadTree(testing::FixturePath(testing::kVm), "").ok());
  }
  // Waits (bounded) until the poller has published a read.
  static bool WaitForFirstRead(SlowPoller* poller) {
    std::vector<GpuSlowSample> latest;
    for (int i = 0; i < 500; ++i) {
      poller->Latest(&latest);
      if (!latest.empty()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  FakeFileReader files_;
  FakeClock clock_;
};

TEST_F(SamplerTest, TickCombinesFastGpuHostAndLatestSlowRead) {
  FakeNvml fake("full", kSlowScenario, 1);
  auto nvml = NvmlSource::Open(fake.path());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  HostReader host(&files_, &clock_);
  SlowPoller poller(nvml->get());
  Sampler sampler(nvml->get(), &poller, &host, &clock_);
  TickSample tick;
  sampler.Tick(&tick);
  EXPECT_EQ(tick.mono_ns, clock_.MonotonicNs());
  ASSERT_EQ(tick.gpu_fast.size(), 1u);
  EXPECT_EQ(tick.gpu_fast[0].util_gpu_pct, 40u);
  EXPECT_TRUE(tick.gpu_slow.empty()) << "nothing read off-tick yet";
  EXPECT_TRUE(tick.host.mem_total_bytes.has_value());

  poller.Start();
  poller.Kick();
  ASSERT_TRUE(WaitForFirstRead(&poller));
  sampler.Tick(&tick);
  ASSERT_EQ(tick.gpu_slow.size(), 1u);
  ASSERT_EQ(tick.gpu_slow[0].processes.size(), 1u);
  EXPECT_EQ(tick.gpu_slow[0].processes[0].pid, 7u);
  poller.Stop();
}

TEST_F(SamplerTest, SlowProcessListDoesNotStretchTheTick) {
  FakeNvml fake("full", kSlowScenario, 1);
  auto nvml = NvmlSource::Open(fake.path());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  HostReader host(&files_, &clock_);
  SlowPoller poller(nvml->get());
  Sampler sampler(nvml->get(), &poller, &host, &clock_);
  poller.Start();
  poller.Kick();
  ASSERT_TRUE(WaitForFirstRead(&poller));
  TickSample tick;
  double worst_ms = 0;
  for (int i = 0; i < 10; ++i) {
    poller.Kick();  // the poller is inside a 300 ms call during most ticks
    auto start = std::chrono::steady_clock::now();
    sampler.Tick(&tick);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    worst_ms = std::max(worst_ms, ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  poller.Stop();
  // A tick that waited for the driver would take >= 300 ms; generous bound for a loaded machine.
  EXPECT_LT(worst_ms, 150.0);
  EXPECT_EQ(tick.gpu_slow.size(), 1u);
}

TEST_F(SamplerTest, WithoutNvmlGpuVectorsAreEmpty) {
  HostReader host(&files_, &clock_);
  Sampler sampler(nullptr, nullptr, &host, &clock_);
  TickSample tick;
  tick.gpu_fast.resize(3);
  sampler.Tick(&tick);
  EXPECT_TRUE(tick.gpu_fast.empty());
  EXPECT_TRUE(tick.gpu_slow.empty());
  EXPECT_TRUE(tick.host.mem_total_bytes.has_value());
}

TEST_F(SamplerTest, StopReturnsPromptlyBetweenReads) {
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 1024}]})", 1);
  auto nvml = NvmlSource::Open(fake.path());
  ASSERT_TRUE(nvml.ok());
  SlowPoller poller(nvml->get());
  poller.Start();
  poller.Kick();
  ASSERT_TRUE(WaitForFirstRead(&poller));
  auto start = std::chrono::steady_clock::now();
  poller.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5))
      << "Stop must wake the poller, not wait out its interval";
}

TEST_F(SamplerTest, KicksDuringASlowReadAreDroppedNotQueued) {
  FakeNvml fake("full", kSlowScenario, 1);
  auto nvml = NvmlSource::Open(fake.path());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  SlowPoller poller(nvml->get());
  poller.Start();
  for (int i = 0; i < 20; ++i) {
    poller.Kick();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(WaitForFirstRead(&poller));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(poller.reads(), 1u) << "20 kicks within one 300 ms read make one read";
  poller.Stop();
}

// The run loop waits for the slow read it kicks, so the tick and the slow fields describe the
// same interval; a slow driver only delays the tick by the bound, and its read is not repeated.
TEST_F(SamplerTest, KickAndWaitReturnsWithTheReadOrAtTheBound) {
  FakeNvml fast_fake("full", R"({"gpus": [{"memory_total_mib": 1024,
      "processes": [{"pid": 7, "used_mib": 512}]}]})",
                     1);
  auto fast_nvml = NvmlSource::Open(fast_fake.path());
  ASSERT_TRUE(fast_nvml.ok()) << fast_nvml.status().message();
  SlowPoller quick(fast_nvml->get());
  quick.Start();
  EXPECT_TRUE(quick.KickAndWait(std::chrono::seconds(30)));
  EXPECT_EQ(quick.reads(), 1u);
  std::vector<GpuSlowSample> latest;
  quick.Latest(&latest);
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].processes.size(), 1u) << "the read is there when KickAndWait returns";
  quick.Stop();
}

TEST_F(SamplerTest, KickAndWaitGivesUpAtItsBoundAndThenWaitsForTheSameRead) {
  FakeNvml fake("full", kSlowScenario, 1);  // each read takes 300 ms
  auto nvml = NvmlSource::Open(fake.path());
  ASSERT_TRUE(nvml.ok()) << nvml.status().message();
  SlowPoller poller(nvml->get());
  poller.Start();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(poller.KickAndWait(std::chrono::milliseconds(20)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(290))
      << "returned at its bound, not when the 300 ms read ended";
  EXPECT_TRUE(poller.KickAndWait(std::chrono::seconds(30))) << "waits for the read under way";
  EXPECT_EQ(poller.reads(), 1u) << "the second kick came during the read: no second read";
  poller.Stop();
}

}  // namespace
}  // namespace cgov
