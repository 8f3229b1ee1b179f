// What a session takes to a GPU machine (docs/validation.md): scripts/gpu-kit packs binaries that
// find their libraries beside them, and bench/real_driver_overhead.py measures cgov there. No GPU
// here: the kit is checked by what the loader resolves, the script against the fake driver and a
// stand-in nvidia-smi (its figures mean something only on a real driver).
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string NvmlCalls() { return BuildDir() + "/cgov_nvml_calls"; }

// A stand-in nvidia-smi that lists one GPU.
std::string FakeSmi(const TempDir& dir) {
  const std::string path = dir / "nvidia-smi";
  WriteFile(path,
            "#!/bin/sh\n"
            "case \"$*\" in\n"
            "  -L) echo 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-fa4e0000)';;\n"
            "  *query-gpu*) echo 'NVIDIA H100 80GB HBM3, 550.54.15, Enabled';;\n"
            "  *) echo 'fake nvidia-smi';;\n"
            "esac\n");
  chmod(path.c_str(), 0755);
  return path;
}

// The library `name` resolves to in `ldd`'s output for `binary` ("" when not listed).
std::string Resolved(const std::string& binary, const std::string& name) {
  RunResult ldd = RunProgram({"/usr/bin/ldd", binary}, {});
  const size_t at = ldd.out.find(name + " => ");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 4;
  return ldd.out.substr(from, ldd.out.find(' ', from) - from);
}

TEST(GpuKitE2E, BinariesFindTheirLibrariesInTheKitAndRun) {
  if (!CGOV_STATIC_LIBSTDCXX_BUILD) {
    GTEST_SKIP() << "a build with libstdc++ linked dynamically (the sanitizer tree) is not the "
                    "binary a GPU host runs";
  }
  if (access(NvmlCalls().c_str(), X_OK) != 0) GTEST_SKIP() << "built without benchmarks";
  TempDir dir;
  const std::string kit = dir / "kit";
  RunResult packed =
      RunProgram({std::string(CGOV_SCRIPTS_DIR) + "/gpu-kit", BuildDir(), kit}, {}, 120);
  ASSERT_EQ(packed.exit_code, 0) << packed.err;
  const std::string lib = kit + "/build/lib/";
  // dlopen'd through the binary's RUNPATH: SQLite by --db (the kit's copy, not this machine's),
  // libmicrohttpd by --listen; GnuTLS through libmicrohttpd's own RUNPATH.
  RunResult db =
      RunProgram({kit + "/build/cgov", "run", "--quiet", "--db", dir / "h.db", "--out", dir / "run",
                  "--", "true"},
                 {{"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}, {"LD_DEBUG", "files"}});
  EXPECT_EQ(db.exit_code, 0) << db.err;
  EXPECT_NE(db.err.find("calling init: " + lib + "libsqlite3.so.0"), std::string::npos) << db.err;
  EXPECT_EQ(access((lib + "libz.so.1").c_str(), R_OK), 0);
  EXPECT_EQ(access((lib + "libmicrohttpd.so.12").c_str(), R_OK), 0);
  EXPECT_EQ(Resolved(lib + "libmicrohttpd.so.12", "libgnutls.so.30"), lib + "libgnutls.so.30");
  RunResult readelf = RunProgram({"/usr/bin/readelf", "-d", kit + "/build/cgov"}, {});
  EXPECT_NE(readelf.out.find("[$ORIGIN/lib]"), std::string::npos) << readelf.out;
  EXPECT_EQ(readelf.out.find("/build/"), std::string::npos) << "no path of this machine";
  RunResult version = RunProgram({kit + "/build/cgov", "--version"}, {});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  for (const char* file :
       {"/scripts/gpu-validate", "/scripts/energy-compare", "/bench/real_driver_overhead.py",
        "/build/cgov-loadgen", "/build/cgov_nvml_calls"}) {
    EXPECT_EQ(access((kit + file).c_str(), X_OK), 0) << file;
  }
  EXPECT_EQ(access((lib + "libc.so.6").c_str(), F_OK), -1) << "the GPU host's own C library";
  RunResult again =
      RunProgram({std::string(CGOV_SCRIPTS_DIR) + "/gpu-kit", BuildDir(), kit}, {}, 120);
  EXPECT_EQ(again.exit_code, 0) << "an earlier kit is replaced: " << again.err;
}

// It replaces the folder it is given: only one it made itself (or an empty or new one).
TEST(GpuKitE2E, AFolderItDidNotMakeIsLeftAlone) {
  TempDir dir;
  WriteFile(dir / "precious.txt", "keep me");
  RunResult r =
      RunProgram({std::string(CGOV_SCRIPTS_DIR) + "/gpu-kit", BuildDir(), dir.path()}, {}, 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a kit made by gpu-kit"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir / "precious.txt"), "keep me");
  EXPECT_EQ(RunProgram({std::string(CGOV_SCRIPTS_DIR) + "/gpu-kit", BuildDir()}, {}).exit_code, 2);
}

TEST(GpuKitE2E, RealDriverOverheadMeasuresCgovRunAndNeedsAGpu) {
  TempDir dir;
  const std::string script = std::string(CGOV_SOURCE_DIR) + "/bench/real_driver_overhead.py";
  RunResult none = RunProgram({"/usr/bin/python3", script, BuildDir(), dir / "none"},
                              {{"NVIDIA_SMI", "/nonexistent/nvidia-smi"}});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("no NVIDIA GPU here"), std::string::npos) << none.out;

  RunResult r = RunProgram(
      {"/usr/bin/python3", script, BuildDir(), dir / "out", "--parts", "run", "--seconds", "1"},
      {{"NVIDIA_SMI", FakeSmi(dir)},
       {"CGOV_NVML_LIB", FakeNvml("full")},
       {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")},
       {"CGOV_TAGS", ""}},
      120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string md = ReadFile(dir / "out/real-overhead.md");
  EXPECT_NE(md.find("# cgov on a real driver: NVIDIA H100 80GB HBM3, 550.54.15"), std::string::npos)
      << md;
  for (const char* row :
       {"| `cgov run -- true`, with the driver: wall added (median of 15;",
        "| `cgov run -- true`, NVML absent: wall added",
        "| `cgov run -- sleep 0.2`, with the driver: wall added (median of 15;",
        "| `cgov run --interval 1s -- sleep`: CPU per tick in the steady state | ",
        "| the same: VmHWM | "}) {
    EXPECT_NE(md.find(row), std::string::npos) << row << "\n" << md;
  }
  EXPECT_EQ(md.find("nan"), std::string::npos) << md;
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"--parts", "demon"}, {"--seconds", "0"}, {"--runs", "0"}}) {
    bad.insert(bad.begin(), {"/usr/bin/python3", script, BuildDir(), dir / "bad"});
    RunResult usage = RunProgram(bad, {{"NVIDIA_SMI", FakeSmi(dir)}});
    EXPECT_EQ(usage.exit_code, 2) << bad[4] << " " << bad[5] << ": " << usage.err;
  }
}

}  // namespace
}  // namespace cgov::e2e
