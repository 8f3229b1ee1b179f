// bench/nvml_calls.cc (cgov_nvml_calls) against the fake driver: every call cgov makes gets a
// timed row, and a driver that does not open or a GPU that is not there is exit 1. Its figures
// mean something only on a real driver (docs/validation.md); this keeps the tool working.
#include <unistd.h>

#include <gtest/gtest.h>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string NvmlCalls() { return BuildDir() + "/cgov_nvml_calls"; }

TEST(NvmlCallsE2E, TimesEveryCallCgovMakes) {
  if (access(NvmlCalls().c_str(), X_OK) != 0) GTEST_SKIP() << "built without benchmarks";
  RunResult r = RunProgram(
      {NvmlCalls(), "--reps", "3"},
      {{"CGOV_NVML_LIB", FakeNvml("full")}, {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GPU 0 of 8 (NVIDIA H100 80GB HBM3); 3 calls each"), std::string::npos)
      << r.out;
  for (const char* row :
       {"| nvmlDeviceGetUtilizationRates | ok |", "| nvmlDeviceGetMemoryInfo_v2 | ok |",
        "| nvmlDeviceGetTotalEnergyConsumption | ok |", "| nvmlDeviceGetPcieThroughput (TX) | ok |",
        "| nvmlDevice*RunningProcesses (compute processes) | ok |",
        "| nvmlDeviceGetProcessUtilization | ok |", "| nvmlGpmSampleGet | ok |",
        "| nvmlGpmMetricsGet (all 9, as ReadGpm asks; the same two samples each time) | ok |",
        "| NvmlSource::ReadFast (every GPU) | ok |", "| NvmlSource::ReadSlow (every GPU) | ok |",
        "| ~NvmlSource (nvmlShutdown"}) {
    EXPECT_NE(r.out.find(row), std::string::npos) << row << "\n" << r.out;
  }
}

// Paced rounds: every call once a round, as a daemon tick makes it, with its last result.
TEST(NvmlCallsE2E, PacedRoundsTimeEachCallOnceARound) {
  if (access(NvmlCalls().c_str(), X_OK) != 0) GTEST_SKIP() << "built without benchmarks";
  RunResult r = RunProgram(
      {NvmlCalls(), "--reps", "1", "--paced", "20:4"},
      {{"CGOV_NVML_LIB", FakeNvml("full")}, {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t paced = r.out.find("4 rounds 20 ms apart, each call once a round:");
  ASSERT_NE(paced, std::string::npos) << r.out;
  const std::string table = r.out.substr(paced);
  for (const char* row :
       {"| nvmlDeviceGetUtilizationRates | ok | 4 |", "| nvmlGpmSampleGet | ok | 4 |",
        "| nvmlDevice*RunningProcesses (compute) | ok | 4 |",
        "| nvmlEventSetWait_v2 (timeout 0) | ", "| NvmlSource::ReadSlow (every GPU) | ok | 4 |",
        "| nvmlGpmMetricsGet (all 9, as ReadGpm asks) | ok | 1 |",
        "| nvmlGpmMetricsGet (NVLink TX, RX) | ok | 1 |"}) {
    EXPECT_NE(table.find(row), std::string::npos) << row << "\n" << table;
  }
  for (const char* bad : {"0:4", "20:0", "20", "x:y", "20:4x"}) {
    EXPECT_EQ(RunProgram({NvmlCalls(), "--paced", bad}, {}).exit_code, 2) << bad;
  }
}

TEST(NvmlCallsE2E, NoDriverOrNoSuchGpuIsExit1AndBadUsage2) {
  if (access(NvmlCalls().c_str(), X_OK) != 0) GTEST_SKIP() << "built without benchmarks";
  RunResult none = RunProgram({NvmlCalls(), "--lib", "/nonexistent/libnvidia-ml.so.1"}, {});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << none.err;
  RunResult gpu = RunProgram(
      {NvmlCalls(), "--gpu", "99", "--reps", "1"},
      {{"CGOV_NVML_LIB", FakeNvml("full")}, {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}});
  EXPECT_EQ(gpu.exit_code, 1);
  EXPECT_NE(gpu.err.find("no GPU 99 (this host has 8)"), std::string::npos) << gpu.err;
  EXPECT_EQ(RunProgram({NvmlCalls(), "--bogus"}, {}).exit_code, 2);
}

}  // namespace
}  // namespace cgov::e2e
