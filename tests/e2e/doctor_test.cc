// `cgov doctor` end to end: the real binary, the real dlopen, the fake driver's variants.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

RunResult Doctor(const std::string& variant, const std::string& scenario,
                 std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {CgovBinary(), "doctor", "--nvml-lib", FakeNvml(variant)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunProgram(argv, {{"CGOV_FAKE_NVML_SCENARIO", Scenario(scenario)}, {"CGOV_NVML_LIB", ""}});
}

TEST(DoctorE2E, EightGpusWithTheirFields) {
  RunResult r = Doctor("full", "h100x8");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "GPUs:     8\n")) << r.out;
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(Contains(r.out, "GPU " + std::to_string(i) + "  NVIDIA H100 80GB HBM3  GPU-"))
        << "GPU " << i << "\n"
        << r.out;
  }
  EXPECT_TRUE(Contains(r.out, "driver:   550.54.15   NVML 12.550.54.15   CUDA 12.4")) << r.out;
  EXPECT_FALSE(Contains(r.out, "unsupported:")) << r.out;
  EXPECT_TRUE(Contains(r.out, "library:  /")) << "an absolute path: " << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(DoctorE2E, JsonListsEveryGpuAndField) {
  RunResult r = Doctor("full", "h100x8", {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(SchemaErrors("doctor.schema.json", doc), "");
  EXPECT_EQ(doc["schema_version"], 1);
  EXPECT_EQ(doc["nvml"]["ok"], true);
  EXPECT_EQ(doc["nvml"]["symbols"]["init"]["resolved"], "nvmlInit_v2");
  ASSERT_EQ(doc["gpus"].size(), 8u);
  for (const auto& gpu : doc["gpus"]) {
    EXPECT_EQ(gpu["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu["memory_total_bytes"], 81559ull * 1048576);
    EXPECT_EQ(gpu["fields"].size(), 20u);
    for (const auto& [name, field] : gpu["fields"].items()) {
      EXPECT_EQ(field["supported"], true) << name;
    }
  }
  EXPECT_EQ(doc["gpus"][7]["pci_bus_id"], "00000000:1F:00.0");
}

TEST(DoctorE2E, LostGpuAndUnsupportedFieldsAreNamedNotFatal) {
  RunResult r = Doctor("full", "faults");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "GPUs:     2 (1 lost)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "GPU 1  LOST: nvmlDeviceGetHandleByIndex: NVML_ERROR_GPU_IS_LOST"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "dmesg")) << "the fix is named";
  EXPECT_TRUE(Contains(r.out, "unsupported: power (NVML_ERROR_NOT_SUPPORTED (Not Supported))"))
      << r.out;
  // Issue 17: a field this user may not read is a problem with a fix, not "unsupported", and
  // it counts.
  EXPECT_TRUE(Contains(r.out, "no permission: compute_processes (NVML_ERROR_NO_PERMISSION"))
      << r.out;
  EXPECT_FALSE(Contains(r.out, "unsupported: compute_processes")) << r.out;
  EXPECT_TRUE(Contains(r.out, "fix: run cgov as root")) << r.out;
  EXPECT_TRUE(Contains(r.out, "GPU 0  NVIDIA A100-SXM4-40GB")) << "GPU 0 still listed";
  EXPECT_TRUE(Contains(r.out, "\n2 item(s) above need attention"))
      << "the lost GPU and the denied field: " << r.out;
  RunResult j = Doctor("full", "faults", {"--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(SchemaErrors("doctor.schema.json", doc), "");
  EXPECT_TRUE(doc["gpus"][1]["name"].is_null())
      << "unknown is null, as docs/doctor.md says: " << doc["gpus"][1].dump();
  EXPECT_TRUE(doc["gpus"][1]["uuid"].is_null());
}

TEST(DoctorE2E, MissingOptionalSymbolsAreListed) {
  RunResult r = Doctor("no_optional", "h100x8");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "missing optional symbols (their fields are unknown): ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "nvmlDeviceGetPowerUsage")) << r.out;
  EXPECT_TRUE(Contains(r.out, "unsupported: power (symbol nvmlDeviceGetPowerUsage missing"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "GPUs:     8")) << r.out;
}

TEST(DoctorE2E, OldDriverShowsTheOlderApiInUse) {
  RunResult r = Doctor("legacy", "h100x8");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "nvmlInit (no nvmlInit_v2)")) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "nvmlDeviceGetComputeRunningProcesses (no "
                       "nvmlDeviceGetComputeRunningProcesses_v3)"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "GPUs:     8")) << r.out;
}

TEST(DoctorE2E, MissingRequiredSymbolIsAClearFailure) {
  RunResult r = Doctor("no_required", "h100x8");
  EXPECT_EQ(r.exit_code, 1) << "the user named this library; it cannot work";
  EXPECT_TRUE(Contains(r.out, "no GPU data:")) << r.out;
  EXPECT_TRUE(Contains(r.out, "required symbol(s) missing: nvmlDeviceGetHandleByIndex_v2"))
      << r.out;
}

TEST(DoctorE2E, DriverThatFailsToInitialiseSaysWhy) {
  RunResult r = Doctor("full", "init_fails");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.out, "nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED")) << r.out;
}

TEST(DoctorE2E, NoDriverAtAllIsOneClearLineAndExitZero) {
  RunResult r = RunProgram({CgovBinary(), "doctor"}, {{"CGOV_NVML_LIB", ""}});
  if (Contains(r.out, "library:  ")) GTEST_SKIP() << "this machine has an NVIDIA driver";
  EXPECT_EQ(r.exit_code, 0) << "nothing was asked that cannot work";
  EXPECT_TRUE(Contains(r.out,
                       "no GPU data: no NVML library could be loaded (install the NVIDIA driver, "
                       "or point --nvml-lib / CGOV_NVML_LIB at"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "libnvidia-ml.so.1: ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "/proc/stat")) << "the host section still runs";
}

TEST(DoctorE2E, ExplicitLibraryThatDoesNotExistFails) {
  RunResult r =
      RunProgram({CgovBinary(), "doctor"}, {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.out, "/nonexistent/libnvidia-ml.so.1")) << r.out;
}

TEST(DoctorE2E, BrokenScenarioIsReportedByTheFake) {
  RunResult r = RunProgram({CgovBinary(), "doctor", "--nvml-lib", FakeNvml("full")},
                           {{"CGOV_FAKE_NVML_SCENARIO", Fixture("README.md")}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Contains(r.err, "fake NVML: ")) << r.err;
  EXPECT_TRUE(Contains(r.out, "nvmlInit failed: NVML_ERROR_UNKNOWN")) << r.out;
}

TEST(DoctorE2E, HostRootReadsACapturedTree) {
  RunResult r = Doctor("full", "h100x8", {"--host-root", Fixture("proc/debian12-vm")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(Contains(r.out, "CPU %: 2 cores")) << r.out;
  EXPECT_TRUE(Contains(r.out, "1 whole disk(s): vda")) << r.out;
  EXPECT_TRUE(Contains(r.out, "3 interface(s) besides lo: ifb0, ifb1, eth0")) << r.out;
  EXPECT_TRUE(Contains(r.out, "Host (root ")) << r.out;
}

TEST(DoctorE2E, BadFlagsAreUsageErrors) {
  RunResult unknown = RunProgram({CgovBinary(), "doctor", "--bogus"}, {});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Contains(unknown.err, "--bogus")) << unknown.err;
  RunResult missing_dir =
      RunProgram({CgovBinary(), "doctor", "--host-root", "/nonexistent/dir"}, {});
  EXPECT_EQ(missing_dir.exit_code, 2);
  EXPECT_TRUE(Contains(missing_dir.err, "/nonexistent/dir")) << missing_dir.err;
  EXPECT_TRUE(missing_dir.out.empty()) << "no partial report";
}

TEST(CliE2E, HelpVersionAndDidYouMean) {
  RunResult help = RunProgram({CgovBinary(), "--help"}, {});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Contains(help.out, "doctor")) << help.out;
  RunResult doctor_help = RunProgram({CgovBinary(), "doctor", "--help"}, {});
  EXPECT_EQ(doctor_help.exit_code, 0);
  EXPECT_TRUE(Contains(doctor_help.out, "--nvml-lib")) << doctor_help.out;
  RunResult typo = RunProgram({CgovBinary(), "doctr"}, {});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_TRUE(Contains(typo.err, "unknown command 'doctr'; did you mean 'doctor'?")) << typo.err;
  RunResult nothing = RunProgram({CgovBinary()}, {});
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_TRUE(Contains(nothing.err, "usage: cgov <command>")) << nothing.err;
  for (const char* flag : {"--version", "-V"}) {  // -V as exporters answer it (issue 48)
    RunResult version = RunProgram({CgovBinary(), flag}, {});
    EXPECT_EQ(version.exit_code, 0) << flag;
    EXPECT_TRUE(Contains(version.out, "cgov 0.1.0")) << flag << ": " << version.out;
  }
}

}  // namespace
}  // namespace cgov::e2e
