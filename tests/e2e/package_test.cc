// `make deb` (scripts/make-deb) end to end (issue 17): the package builds from this tree, its
// Depends are the libraries the binary links (dpkg-shlibdeps) and real packages here, it installs
// with dpkg into a temporary root, and the installed cgov runs doctor and the demo; the man page
// renders without a warning and both shells' completions load and complete.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string Root() { return std::string(CGOV_SCRIPTS_DIR) + "/.."; }
RunResult Shell(const std::string& script, const Env& env = {}, double timeout_s = 60) {
  return RunProgram({"/bin/bash", "-c", script}, env, timeout_s);
}

TEST(PackageE2E, DebInstallsIntoAFreshRootAndRuns) {
  if (access("/usr/bin/dpkg-shlibdeps", X_OK) != 0) GTEST_SKIP() << "no dpkg-dev here";
  TempDir dir;
  RunResult built = RunProgram({Root() + "/scripts/make-deb", BuildDir(), dir / "out"}, {}, 120);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const std::string deb = built.out.substr(0, built.out.find('\n'));
  ASSERT_TRUE(deb.starts_with(dir / "out/cgov_0.1.0_") && deb.ends_with(".deb")) << built.out;

  // Depends: what the binary links, and SQLite and zlib (loaded at run time, but the daemon's
  // core), each a package installed on this machine; libcurl and libmicrohttpd only recommended
  // (report --prometheus and daemon --listen load them).
  RunResult depends = RunProgram({"/usr/bin/dpkg-deb", "-f", deb, "Depends"}, {});
  ASSERT_EQ(depends.exit_code, 0) << depends.err;
  for (const char* p : {"libc6", "libsqlite3-0", "zlib1g"}) {
    EXPECT_NE(depends.out.find(p), std::string::npos) << p << " in " << depends.out;
  }
  for (const char* p : {"curl", "microhttpd", "gnutls", "yaml"}) {
    EXPECT_EQ(depends.out.find(p), std::string::npos) << p << " in " << depends.out;
  }
  RunResult recommends = RunProgram({"/usr/bin/dpkg-deb", "-f", deb, "Recommends"}, {});
  EXPECT_EQ(recommends.out, "libcurl4, libmicrohttpd12, libyaml-0-2\n") << recommends.err;
  std::istringstream names(depends.out);
  std::string entry;
  while (std::getline(names, entry, ',')) {
    std::istringstream words(entry);
    std::string name;
    words >> name;
    RunResult status = RunProgram({"/usr/bin/dpkg-query", "-W", "-f=${Status}", name}, {});
    EXPECT_EQ(status.out, "install ok installed") << name;
  }

  // Installed with dpkg into an empty root (its Depends are this machine's, not that root's).
  const std::string root = dir / "root";
  std::filesystem::create_directories(root + "/var/lib/dpkg/info");
  std::filesystem::create_directories(root + "/var/lib/dpkg/updates");
  WriteFile(root + "/var/lib/dpkg/status", "");
  RunResult installed = RunProgram({"/usr/bin/dpkg", "--root=" + root, "--force-depends",
                                    "--force-not-root", "--log=/dev/null", "-i", deb}, {}, 60);
  ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
  const std::string cgov = root + "/usr/bin/cgov";
  for (const char* file : {"/usr/share/man/man1/cgov.1.gz", "/usr/share/bash-completion/completions/cgov",
                           "/usr/share/zsh/vendor-completions/_cgov", "/usr/share/doc/cgov/LICENSE",
                           "/usr/share/doc/cgov/docs/metrics.md",
                           "/usr/share/cgov/deploy/prometheus/cgov-rules.yml"}) {
    EXPECT_TRUE(std::filesystem::exists(root + file)) << file;
  }
  EXPECT_NE(ReadFile(root + "/usr/lib/systemd/system/cgov.service")
                .find("ExecStart=/usr/bin/cgov daemon"), std::string::npos);
  // Stripped: no symbol table, no debug information (the size depends on the build: an ASan
  // build is ~68 MB stripped, the default RelWithDebInfo one 5.0 MB).
  RunResult sections = RunProgram({"/usr/bin/readelf", "-S", "-W", cgov}, {});
  ASSERT_EQ(sections.exit_code, 0) << sections.err;
  EXPECT_EQ(sections.out.find(".symtab"), std::string::npos) << "stripped";
  EXPECT_EQ(sections.out.find(".debug_info"), std::string::npos) << "stripped";
  EXPECT_LT(std::filesystem::file_size(cgov), std::filesystem::file_size(CgovBinary()));
  // The installed binary links what the built one does (dependencies_test.cc holds that to the
  // list in docs/architecture.md).
  auto libraries = [](const std::string& binary) {
    RunResult ldd = RunProgram({"/usr/bin/ldd", binary}, {});
    std::set<std::string> found;
    std::istringstream lines(ldd.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string name;
      words >> name;
      if (!name.empty() && !name.starts_with("linux-vdso")) found.insert(name);
    }
    return found;
  };
  EXPECT_EQ(libraries(cgov), libraries(CgovBinary()));
  EXPECT_GE(libraries(cgov).size(), 3u);  // libc, libm and the loader

  // The installed binary runs: doctor on the fake driver, the demo and its report.
  const Env fake = {{"CGOV_NVML_LIB", FakeNvml("full")},
                    {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")}};
  RunResult doctor = RunProgram({cgov, "doctor"}, fake);
  EXPECT_EQ(doctor.exit_code, 0) << doctor.err;
  EXPECT_NE(doctor.out.find("GPUs:     8"), std::string::npos) << doctor.out;
  RunResult demo = RunProgram({cgov, "demo", "--duration", "2h", "--interval", "10s", "--db",
                               dir / "demo.db"}, {}, 60);
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  RunResult report = RunProgram({cgov, "report", "--db", dir / "demo.db", "--since", "2h"}, {});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("Where the GPU-time went"), std::string::npos) << report.out;

  // The man page renders without a warning; the completions load and complete.
  RunResult man = Shell("zcat '" + root + "/usr/share/man/man1/cgov.1.gz' | groff -man -ww -z 2>&1");
  EXPECT_EQ(man.exit_code, 0);
  EXPECT_EQ(man.out, "") << "groff warnings";
  RunResult bash = Shell("source '" + root + "/usr/share/bash-completion/completions/cgov'; "
                         "COMP_WORDS=(cgov run --f); COMP_CWORD=2; _cgov; echo \"${COMPREPLY[*]}\"; "
                         "COMP_WORDS=(cgov rep); COMP_CWORD=1; _cgov; echo \"${COMPREPLY[*]}\"");
  EXPECT_EQ(bash.out, "--fail-on --fail-on-regression --force\nreport\n") << bash.err;
  if (access("/usr/bin/zsh", X_OK) == 0) {
    RunResult zsh = RunProgram({"/usr/bin/zsh", "-n", root + "/usr/share/zsh/vendor-completions/_cgov"}, {});
    EXPECT_EQ(zsh.exit_code, 0) << zsh.err;
  }
}

}  // namespace
}  // namespace cgov::e2e
