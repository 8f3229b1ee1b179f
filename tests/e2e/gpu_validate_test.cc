// scripts/gpu-validate and cgov-loadgen without a GPU: the script says so and exits 0; with a
// stand-in nvidia-smi and the fake driver it runs the whole pipeline on the "idle" pattern (the
// one pattern that needs no CUDA) and judges it — and fails when nvidia-smi disagrees.
#include <sys/stat.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string Script() { return std::string(CGOV_SCRIPTS_DIR) + "/gpu-validate"; }

// A stand-in nvidia-smi: one GPU; its sampling loop prints `util` % and 60 W twice a second for
// at most a minute (the script stops it).
std::string FakeSmi(const TempDir& dir, int util) {
  const std::string path = dir / "nvidia-smi";
  WriteFile(path,
            "#!/bin/bash\n"
            "case \"$*\" in\n"
            "  *-L*) echo 'GPU 0: NVIDIA Fake GPU (UUID: GPU-fa4e0000)';;\n"
            "  *name,driver_version*) echo 'NVIDIA Fake GPU, 550.54.15';;\n"
            "  *--query-gpu=timestamp*)\n"
            "    trap 'exit 0' TERM\n"
            "    for i in $(seq 1 120); do\n"
            "      echo \"$(date -u '+%Y/%m/%d %H:%M:%S.%3N'), 0, " +
                std::to_string(util) +
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
  RunResult r = RunProgram(
      {Script(), dir / "out", "--build", BuildDir(), "--patterns", "idle", "--duration", "6s"},
      IdleGpu(dir, FakeSmi(dir, 0)), 60);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string md = ReadFile(dir / "out/validation.md");
  EXPECT_NE(md.find("| idle | mean utilization | 0 ± 5 % | 0.0 % | 0.0 % | pass |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| idle | power vs nvidia-smi | within 10 % | 60.0 W | 60.0 W | pass |"),
            std::string::npos)
      << md;
  // Issue 62: the run's energy against nvidia-smi's power.draw x time over the same seconds.
  EXPECT_NE(md.find("| idle | energy (J) | within 10 % of nvidia-smi's power.draw x time |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("7 of 7 checks passed."), std::string::npos) << md;
  EXPECT_NE(md.find("GPU 0: NVIDIA Fake GPU, 550.54.15"), std::string::npos) << md;
}

TEST(GpuValidateE2E, ADisagreementWithNvidiaSmiFailsTheRun) {
  TempDir dir;
  RunResult r = RunProgram(
      {Script(), dir / "out", "--build", BuildDir(), "--patterns", "idle", "--duration", "6s"},
      IdleGpu(dir, FakeSmi(dir, 40)), 60);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(
      r.out.find(
          "| idle | utilization vs nvidia-smi | within 5 points | 0.0 % | 40.0 % | **FAIL** |"),
      std::string::npos)
      << r.out;
}

// scripts/energy-compare on a real `cgov run` (the fake driver's 610 W GPUs, 500 ms samples)
// against nvidia-smi CSVs written here: the same power passes, half of it fails, and an
// unreadable CSV or one that starts after the run is exit 2, named.
TEST(GpuValidateE2E, EnergyCompareJudgesTheRunsJoulesAgainstNvidiaSmisPower) {
  TempDir dir;
  RunResult run =
      RunProgram({CgovBinary(), "run", "--nvml-lib", FakeNvml("full"), "--out", dir / "run",
                  "--interval", "500ms", "--quiet", "--", "/bin/sleep", "6"},
                 {{"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}, {"CGOV_TAGS", ""}});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Readings every 500 ms from a second before the run to a second after it, in nvidia-smi's
  // timestamp format (UTC), for GPUs 0 and 1.
  auto csv = [&](const std::string& name, double watts, double from_s) {
    RunResult made = RunProgram(
        {"/usr/bin/python3", "-c",
         "import datetime, json, sys\n"
         "s = json.load(open(sys.argv[1]))['run']\n"
         "t = lambda x: datetime.datetime.strptime(x, '%Y-%m-%dT%H:%M:%S.%fZ')\n"
         "a, b = t(s['started_at']), t(s['ended_at'])\n"
         "k = 0\n"
         "d = lambda x: datetime.timedelta(seconds=x)\n"
         "while a + d(float(sys.argv[3]) + k / 2) < b + d(1):\n"
         "  at = a + d(float(sys.argv[3]) + k / 2)\n"
         "  for g in (0, 1):\n"
         "    print(at.strftime('%Y/%m/%d %H:%M:%S.%f')[:-3] + f', {g}, 95, 1000, ' + "
         "sys.argv[2])\n"
         "  k += 1\n",
         dir / "run/summary.json", fmt::format("{:.2f}", watts), fmt::format("{}", from_s)},
        {});
    EXPECT_EQ(made.exit_code, 0) << made.err;
    WriteFile(dir / name, made.out);
    return dir / name;
  };
  const std::string script = std::string(CGOV_SCRIPTS_DIR) + "/energy-compare";
  auto compare = [&](const std::string& smi) {
    return RunProgram({script, "--pattern", "full", "--summary", dir / "run/summary.json", "--smi",
                       smi, "--device", "0"},
                      {});
  };
  RunResult same = compare(csv("same.csv", 610, -1));
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("| full | energy (J) | within 10 % of nvidia-smi's power.draw x time |"),
            std::string::npos)
      << same.out;
  EXPECT_TRUE(same.out.ends_with("| pass |\n")) << same.out;
  RunResult half = compare(csv("half.csv", 305, -1));
  EXPECT_EQ(half.exit_code, 1) << half.out << half.err;
  EXPECT_NE(half.out.find(" % apart) | **FAIL** |"), std::string::npos) << half.out;
  RunResult late = compare(csv("late.csv", 610, 3));
  EXPECT_EQ(late.exit_code, 2) << late.out;
  EXPECT_NE(late.err.find("late.csv: no power.draw readings of GPU 0 from the run's start"),
            std::string::npos)
      << late.err;
  WriteFile(dir / "bad.csv", "2026/11/29 10:00:00.000, 0, 95, 1000, [N/A]\n");
  RunResult bad = compare(dir / "bad.csv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.csv:1: power.draw is not a number"), std::string::npos) << bad.err;
  // Hostile inputs: an endless device, a directory; a JSON that is no summary. Refused, named.
  for (const std::string& odd : {std::string("/dev/zero"), dir.path()}) {
    RunResult r = RunProgram(
        {script, "--pattern", "full", "--summary", odd, "--smi", dir / "same.csv", "--device", "0"},
        {}, 10);
    EXPECT_EQ(r.exit_code, 2) << odd;
    EXPECT_NE(r.err.find(odd + ": not a regular file"), std::string::npos) << r.err;
  }
  WriteFile(dir / "list.json", "[1, 2]");
  RunResult list = RunProgram({script, "--pattern", "full", "--summary", dir / "list.json", "--smi",
                               dir / "same.csv", "--device", "0"},
                              {});
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_NE(list.err.find("not a cgov run summary.json"), std::string::npos) << list.err;
}

TEST(LoadgenE2E, BusyPatternWithoutTheCudaDriverIsAClearError) {
  RunResult r = RunProgram(
      {CGOV_LOADGEN, "play", "held", "--duration", "1s", "--cuda-lib", "/nonexistent/libcuda.so.1"},
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
