// End-to-end (issue 60, item 1, in part): the release archive `make dist` writes
// (scripts/make-dist): its checksum, its files, and its install.sh, which checks every file and
// the host's glibc before it copies anything, points the systemd unit at its prefix and keeps an
// admin's /etc/default/cgov. The glibc the archive says it needs is the newest symbol version
// the binary carries (objdump), one number in one place.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

bool DistReleaseTree() {
  return ReadFile(BuildDir() + "/CMakeCache.txt").find("CMAKE_BUILD_TYPE:STRING=Debug") ==
         std::string::npos;
}

RunResult DistShell(const std::string& script) {
  return RunProgram({"/bin/bash", "-c", script}, {}, 60);
}

std::string DistLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

TEST(DistE2E, TheArchiveInstallsWhereItIsToldAfterCheckingItsFilesAndTheHostsGlibc) {
  if (!DistReleaseTree())
    GTEST_SKIP() << "a Debug (sanitizer) tree: the archive is the optimized one's";
  TempDir dir;
  RunResult made = RunProgram(
      {std::string(CGOV_SOURCE_DIR) + "/scripts/make-dist", BuildDir(), dir.path()}, {}, 240);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const std::string archive = DistLine(made.out);
  const std::string name = std::filesystem::path(archive).filename().string();
  ASSERT_TRUE(name.starts_with("cgov-0.1.0-linux-") && name.ends_with(".tar.gz")) << archive;
  // Its checksum file says what sha256sum says.
  RunResult sum = DistShell("cd '" + dir.path() + "' && sha256sum -c '" + name + ".sha256'");
  EXPECT_EQ(sum.exit_code, 0) << sum.out << sum.err;

  RunResult extracted = RunProgram({"/usr/bin/tar", "-xzf", archive, "-C", dir.path()}, {});
  ASSERT_EQ(extracted.exit_code, 0) << extracted.err;
  const std::string top = dir / name.substr(0, name.size() - 7);
  for (const char* file :
       {"/bin/cgov", "/install.sh", "/SHA256SUMS", "/etc/default/cgov",
        "/lib/systemd/system/cgov.service", "/share/man/man1/cgov.1.gz",
        "/share/bash-completion/completions/cgov", "/share/zsh/vendor-completions/_cgov",
        "/share/doc/cgov/LICENSE", "/share/cgov/deploy/prometheus/cgov-rules.yml",
        "/share/cgov/deploy/kubernetes/overlays/operator/kustomization.yaml"}) {
    EXPECT_TRUE(std::filesystem::exists(top + file)) << file;
  }
  EXPECT_FALSE(std::filesystem::exists(top + "/share/cgov/deploy/dist")) << "the template only";
  // The glibc install.sh asks for is the binary's newest symbol version.
  RunResult newest =
      DistShell("objdump -T '" + top +
                "/bin/cgov' | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1");
  const std::string glibc = DistLine(newest.out);
  ASSERT_FALSE(glibc.empty());
  EXPECT_NE(ReadFile(top + "/install.sh").find("cgov 0.1.0 needs " + glibc + " or later"),
            std::string::npos)
      << glibc;

  // Installed under a prefix (staged under a destdir, as a packager does): the unit points there.
  const std::string stage = dir / "stage";
  RunResult installed =
      RunProgram({top + "/install.sh", "--prefix", "/opt/cgov", "--destdir", stage}, {});
  ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
  EXPECT_NE(installed.out.find("installed under /opt/cgov"), std::string::npos);
  const std::string unit = ReadFile(stage + "/opt/cgov/lib/systemd/system/cgov.service");
  EXPECT_NE(unit.find("ExecStart=/opt/cgov/bin/cgov daemon $ARGS"), std::string::npos) << unit;
  EXPECT_NE(unit.find("EnvironmentFile=-/opt/cgov/etc/default/cgov"), std::string::npos);
  EXPECT_EQ(unit.find("/usr/local"), std::string::npos);
  RunResult version = RunProgram({stage + "/opt/cgov/bin/cgov", "--version"}, {});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_TRUE(version.out.starts_with("cgov 0.1.0")) << version.out;
  // Again over an admin's edited defaults: kept, the release's beside them.
  WriteFile(stage + "/opt/cgov/etc/default/cgov", "ARGS=--interval 5s\n");
  installed = RunProgram({top + "/install.sh", "--prefix", "/opt/cgov", "--destdir", stage}, {});
  ASSERT_EQ(installed.exit_code, 0) << installed.err;
  EXPECT_EQ(ReadFile(stage + "/opt/cgov/etc/default/cgov"), "ARGS=--interval 5s\n");
  EXPECT_TRUE(std::filesystem::exists(stage + "/opt/cgov/share/cgov/cgov.default"));

  // An older glibc (getconf answering 2.31) or a changed file: refused by name, nothing copied.
  std::filesystem::create_directories(dir / "old");
  WriteFile(dir / "old/getconf", "#!/bin/sh\necho glibc 2.31\n");
  std::filesystem::permissions(dir / "old/getconf", std::filesystem::perms::owner_all);
  RunResult old = RunProgram({top + "/install.sh", "--destdir", dir / "old-stage"},
                             {{"PATH", dir / "old:/usr/bin:/bin"}});
  EXPECT_EQ(old.exit_code, 1);
  EXPECT_NE(old.err.find("this host's glibc is 2.31; cgov 0.1.0 needs " + glibc), std::string::npos)
      << old.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "old-stage"));
  WriteFile(top + "/share/cgov/deploy/budgets/budgets.example.toml", "changed\n");
  RunResult tampered = RunProgram({top + "/install.sh", "--destdir", dir / "bad-stage"}, {});
  EXPECT_EQ(tampered.exit_code, 1);
  EXPECT_NE(tampered.err.find("do not match SHA256SUMS: nothing installed"), std::string::npos)
      << tampered.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "bad-stage"));
  RunResult relative = RunProgram({top + "/install.sh", "--prefix", "opt"}, {});
  EXPECT_EQ(relative.exit_code, 2) << relative.err;
  // A prefix that would change the unit's ExecStart line (a newline, sed's & and #): refused.
  for (const char* hostile : {"/opt/a\nExecStartPre=/bin/sh", "/opt/a&b", "/opt/#x", "/opt/a b"}) {
    RunResult bad = RunProgram(
        {top + "/install.sh", "--prefix", hostile, "--destdir", dir / "hostile-stage"}, {});
    EXPECT_EQ(bad.exit_code, 2) << hostile << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "hostile-stage")) << hostile;
  }
}

}  // namespace
}  // namespace cgov::e2e
