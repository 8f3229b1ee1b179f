#include "telemetry/nvml_loader.h"

#include <gtest/gtest.h>

#include "fakes/nvml_testing.h"

namespace cgov {
namespace {

using testing::FakeNvml;

constexpr const char* kOneGpu = R"({"gpus": [{"memory_total_mib": 1024}]})";

std::string Resolved(const NvmlLibrary& lib, const std::string& role) {
  for (const SymbolResolution& s : lib.symbols()) {
    if (s.role == role) return s.resolved;
  }
  return "(role not listed)";
}

TEST(NvmlStructVersion, IsSizeOrVersionShiftedNotABareNumber) {
  EXPECT_EQ(nvml::NvmlStructVersion(40, 2), 0x02000028u);
  EXPECT_EQ(nvml::nvmlMemory_v2, (2u << 24) | sizeof(nvml::nvmlMemory_v2_t));
  EXPECT_NE(nvml::nvmlMemory_v2, 2u);
  EXPECT_STREQ(nvml::ReturnName(nvml::NVML_ERROR_GPU_IS_LOST), "NVML_ERROR_GPU_IS_LOST");
  EXPECT_STREQ(nvml::ReturnName(12345), "NVML_ERROR_(unrecognised)");
}

TEST(NvmlLibrary, CurrentDriverResolvesNewestVersionsFirst) {
  FakeNvml fake("full", kOneGpu);
  ASSERT_TRUE(fake.loaded());
  auto lib = NvmlLibrary::Load(fake.path());
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  const NvmlLibrary& l = **lib;
  EXPECT_EQ(Resolved(l, "init"), "nvmlInit_v2");
  EXPECT_EQ(Resolved(l, "device count"), "nvmlDeviceGetCount_v2");
  EXPECT_EQ(Resolved(l, "device handle"), "nvmlDeviceGetHandleByIndex_v2");
  EXPECT_EQ(Resolved(l, "memory"), "nvmlDeviceGetMemoryInfo_v2");
  EXPECT_EQ(Resolved(l, "compute processes"), "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(Resolved(l, "graphics processes"), "nvmlDeviceGetGraphicsRunningProcesses_v3");
  EXPECT_EQ(Resolved(l, "clock reasons"), "nvmlDeviceGetCurrentClocksEventReasons");
  EXPECT_EQ(Resolved(l, "pci info"), "nvmlDeviceGetPciInfo_v3");
  EXPECT_EQ(Resolved(l, "memory (v1)"), "nvmlDeviceGetMemoryInfo") << "kept for when _v2 errs";
  EXPECT_EQ(Resolved(l, "mps processes"), "nvmlDeviceGetMPSComputeRunningProcesses_v3");
  EXPECT_EQ(Resolved(l, "mps processes (v1)"), "(role not listed)") << "no fallback when v3 exists";
  EXPECT_NE(l.fn().compute_procs, nullptr);
  EXPECT_EQ(l.fn().compute_procs_v1, nullptr) << "only one of a versioned pair is set";
  EXPECT_TRUE(l.MissingOptional().empty());
  EXPECT_NE(l.path().find("full/libnvidia-ml.so.1"), std::string::npos) << l.path();
}

TEST(NvmlLibrary, OldDriverFallsBackToV1Symbols) {
  FakeNvml fake("legacy", kOneGpu);
  auto lib = NvmlLibrary::Load(fake.path());
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  const NvmlLibrary& l = **lib;
  EXPECT_EQ(Resolved(l, "init"), "nvmlInit");
  EXPECT_EQ(Resolved(l, "device count"), "nvmlDeviceGetCount");
  EXPECT_EQ(Resolved(l, "device handle"), "nvmlDeviceGetHandleByIndex");
  EXPECT_EQ(Resolved(l, "memory"), "");
  EXPECT_EQ(Resolved(l, "memory (v1)"), "nvmlDeviceGetMemoryInfo");
  EXPECT_EQ(Resolved(l, "compute processes"), "");
  EXPECT_EQ(Resolved(l, "compute processes (v1)"), "nvmlDeviceGetComputeRunningProcesses");
  EXPECT_EQ(Resolved(l, "clock reasons"), "nvmlDeviceGetCurrentClocksThrottleReasons");
  EXPECT_EQ(l.fn().memory_v2, nullptr);
  EXPECT_NE(l.fn().memory_v1, nullptr);
  EXPECT_TRUE(l.MissingOptional().empty()) << "v1 fallbacks cover every role";
}

TEST(NvmlLibrary, MissingOptionalSymbolsAreListedNotFatal) {
  FakeNvml fake("no_optional", kOneGpu);
  auto lib = NvmlLibrary::Load(fake.path());
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  std::vector<std::string> missing = (*lib)->MissingOptional();
  for (const char* symbol :
       {"nvmlDeviceGetPowerUsage", "nvmlDeviceGetTemperature", "nvmlDeviceGetProcessUtilization",
        "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlErrorString"}) {
    EXPECT_NE(std::find(missing.begin(), missing.end(), symbol), missing.end()) << symbol;
  }
  EXPECT_EQ(std::find(missing.begin(), missing.end(), "nvmlDeviceGetUtilizationRates"),
            missing.end());
  EXPECT_EQ((*lib)->Describe(nvml::NVML_ERROR_NOT_SUPPORTED), "NVML_ERROR_NOT_SUPPORTED")
      << "without nvmlErrorString, the name alone";
}

TEST(NvmlLibrary, MissingRequiredSymbolMakesTheLibraryUnusable) {
  FakeNvml fake("no_required", kOneGpu);
  auto lib = NvmlLibrary::Load(fake.path());
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(
      lib.status().message().find("nvmlDeviceGetHandleByIndex_v2 / nvmlDeviceGetHandleByIndex"),
      std::string::npos)
      << lib.status().message();
}

TEST(NvmlLibrary, AbsentLibraryNamesThePathAndTheFix) {
  auto lib = NvmlLibrary::Load("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(lib.status().message().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  EXPECT_NE(lib.status().message().find("--nvml-lib"), std::string::npos);
}

TEST(NvmlLibrary, DefaultSearchOrder) {
  EXPECT_EQ(DefaultNvmlLibraryNames(),
            (std::vector<std::string>{"libnvidia-ml.so.1", "libnvidia-ml.so"}));
}

}  // namespace
}  // namespace cgov
