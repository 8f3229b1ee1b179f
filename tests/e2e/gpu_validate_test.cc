// scripts/gpu-validate and cgov-loadgen without a GPU: the script says so and exits 0; with a
// stand-in nvidia-smi and the fake driver it runs the whole pipeline on the "idle" pattern (the
// one pattern that needs no CUDA) and judges it — and fails when nvidia-smi disagrees.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string Script() { return std::string(CGOV_SCRIPTS_DIR) + "/gpu-validate"; }

// A stand-in nvidia-smi: one GPU; its sampling loop prints `util` % and 60 W twice a second for
// at most a minute (the script stops it).
std::string FakeSmi(const TempDir& dir, int util) {
  const std::string path = dir / "nvidia-smi";
  WriteFile(path, "#!/bin/bash\n"
                  "case \"$*\" in\n"
                  "  *-L*) echo 'GPU 0: NVIDIA Fake GPU (UUID: GPU-fa4e0000)';;\n"
                  "  *name,driver_version*) echo 'NVIDIA Fake GPU, 550.54.15';;\n"
                  "  *--query-gpu=timestamp*)\n"
                  "    trap 'exit 0' TERM\n"
                  "    for i in $(seq 1 120); do\n"
                  "      echo \"$(date -u '+%Y/%m/%d %H:%M:%S.%3N'), 0, " + std::to_string(util) +
                  ", 0, 60.00\"\n"
                  "      sleep 0.5\n"
                  "    done;;\n"
                  "  *) echo 'fake nvidia-smi';;\n"
                  "esac\n");
  chmod(path.c_str(), 0755);
  return path;
}

Env IdleGpu(const TempDir& dir, const std::string& smi) {
  WriteFile(dir / "idle.json", R"({"gpus": [{"name": "NVIDIA Fake GPU", "memory_total_mib": 16384,
    "timeline": [{"t": 0, "util_gpu": 0, "power_w": 60}]}]})");
  return {{"NVIDIA_SMI", smi},
          {"CGOV_NVML_LIB", FakeNvml("full")},
          {"CGOV_FAKE_NVML_SCENARIO", dir / "idle.json"},
          {"CGOV_TAGS", ""}};
}

TEST(GpuValidateE2E, WithoutAGpuItSaysSoAndExitsZero) {
  TempDir dir;
  RunResult r = RunProgram({Script(), dir / "out", "--build", BuildDir()},
                           {{"NVIDIA_SMI", "/nonexistent/nvidia-smi"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no NVIDIA GPU here"), std::string::npos) << r.out;
}

TEST(GpuValidateE2E, BadUsageIsExit2) {
  TempDir dir;
  for (std::vector<std::string> args :
       {std::vector<std::string>{}, {dir / "o", "--device", "x"}, {dir / "o", "--bogus"}}) {
    args.insert(args.begin(), Script());
    RunResult r = RunProgram(args, {{"NVIDIA_SMI", FakeSmi(dir, 0)}});
    EXPECT_EQ(r.exit_code, 2) << r.err;
  }
  RunResult r = RunProgram({Script(), dir / "o", "--build", BuildDir(), "--patterns", "busy"},
                           {{"NVIDIA_SMI", FakeSmi(dir, 0)}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown pattern busy"), std::string::npos) << r.err;
}

TEST(GpuValidateE2E, IdlePatternRunsThePipelineAndEveryCheckPasses) {
  TempDir dir;
  RunResult r = RunProgram({Script(), dir / "out", "--build", BuildDir(), "--patterns", "idle",
                            "--duration", "6s"},
                           IdleGpu(dir, FakeSmi(dir, 0)), 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string md = ReadFile(dir / "out/validation.md");
  EXPECT_NE(md.find("| idle | mean utilization | 0 ± 5 % | 0.0 % | 0.0 % | pass |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("| idle | power vs nvidia-smi | within 10 % | 60.0 W | 60.0 W | pass |"),
            std::string::npos) << md;
  EXPECT_NE(md.find("6 of 6 checks passed."), std::string::npos) << md;
  EXPECT_NE(md.find("GPU 0: NVIDIA Fake GPU, 550.54.15"), std::string::npos) << md;
}

TEST(GpuValidateE2E, ADisagreementWithNvidiaSmiFailsTheRun) {
  TempDir dir;
  RunResult r = RunProgram({Script(), dir / "out", "--build", BuildDir(), "--patterns", "idle",
                            "--duration", "6s"},
                           IdleGpu(dir, FakeSmi(dir, 40)), 60);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("| idle | utilization vs nvidia-smi | within 5 points | 0.0 % | 40.0 % | **FAIL** |"),
            std::string::npos) << r.out;
}

TEST(LoadgenE2E, BusyPatternWithoutTheCudaDriverIsAClearError) {
  RunResult r = RunProgram({CGOV_LOADGEN, "play", "held", "--duration", "1s", "--cuda-lib",
                            "/nonexistent/libcuda.so.1"},
                           {});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/libcuda.so.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is the NVIDIA driver installed?"), std::string::npos) << r.err;
  r = RunProgram({CGOV_LOADGEN, "play", "idle", "--duration", "200ms"}, {});
  EXPECT_EQ(r.exit_code, 0) << r.err << "idle needs no CUDA at all";
  r = RunProgram({CGOV_LOADGEN, "play", "duty200"}, {});
  EXPECT_EQ(r.exit_code, 2);
  r = RunProgram({CGOV_LOADGEN, "compare", "--pattern", "idle", "--samples", "/dev/zero", "--smi",
                  "/dev/null"},
                 {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/dev/zero: not a regular file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cgov::e2e
