// `make deb` (scripts/make-deb) end to end (issue 17): the package builds from this tree, its
// Depends are the libraries the binary links (dpkg-shlibdeps) and real packages here, it installs
// with dpkg into a temporary root, and the installed cgov runs doctor and the demo; the man page
// renders without a warning and both shells' completions load and complete. Issue 48: lintian
// finds nothing at error and warning level, hardening-check passes, and the unit, its
// /etc/default/cgov and the state directory are wired as systemd would run them (systemd-analyze
// verify and security on the installed root).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::string Root() { return std::string(CGOV_SCRIPTS_DIR) + "/.."; }
RunResult Shell(const std::string& script, const Env& env = {}, double timeout_s = 60) {
  return RunProgram({"/bin/bash", "-c", script}, env, timeout_s);
}

// The newest modification time of a file under `dir`: what the package is made of besides the
// binary (the scripts, deploy/, docs/), so that an edit there makes the package again.
int64_t NewestUnder(const std::string& dir) {
  int64_t newest = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st {};
    if (::stat(it->path().c_str(), &st) == 0) {
      newest = std::max<int64_t>(newest, st.st_mtim.tv_sec * 1'000'000'000 + st.st_mtim.tv_nsec);
    }
  }
  return newest;
}

// The package made once for every test process here (make-deb of a sanitizer build takes
// minutes), and installed with dpkg into an empty root of each process's own (its Depends are
// this machine's, not that root's).
struct Package {
  TempDir dir;
  std::string deb, root, error;
};

const Package& Built() {
  static const std::unique_ptr<Package> package = [] {
    auto p = std::make_unique<Package>();
    std::string key = "deb";
    for (const char* d : {"/scripts", "/deploy", "/docs"}) {
      key += "|" + std::to_string(NewestUnder(Root() + d));
    }
    const std::string out = CachedOutput("deb-", key, "", [&](const std::string& part) {
      RunResult built = RunProgram({Root() + "/scripts/make-deb", BuildDir(), part}, {}, 240);
      if (built.exit_code != 0) p->error = "make-deb: " + built.err;
      return built.exit_code == 0;
    });
    if (out.empty()) {
      if (p->error.empty()) p->error = "make-deb: no package";
      return p;
    }
    for (const auto& e : std::filesystem::directory_iterator(out)) {
      if (e.path().extension() == ".deb") p->deb = e.path().string();
    }
    p->root = p->dir / "root";
    std::filesystem::create_directories(p->root + "/var/lib/dpkg/info");
    std::filesystem::create_directories(p->root + "/var/lib/dpkg/updates");
    WriteFile(p->root + "/var/lib/dpkg/status", "");
    // (The maintainer scripts run chrootless, DPKG_ROOT set: the empty root has no shell.)
    RunResult installed =
        RunProgram({"/usr/bin/dpkg", "--root=" + p->root, "--force-depends", "--force-not-root",
                    "--force-script-chrootless", "--log=/dev/null", "-i", p->deb},
                   {}, 60);
    if (installed.exit_code != 0) p->error = "dpkg -i: " + installed.out + installed.err;
    return p;
  }();
  return *package;
}

bool OptimizedBuild() {
  return ReadFile(BuildDir() + "/CMakeCache.txt").find("CMAKE_BUILD_TYPE:STRING=Debug") ==
         std::string::npos;
}

// The package users install is the optimized tree's, and `make test` packages and runs it
// there. In the sanitizer tree, make-deb of a 160 MB binary held a test slot for a minute or
// more while the others waited on it, for no check the optimized tree does not make.
constexpr char kPackagedInTheOptimizedTree[] =
    "a Debug (sanitizer) tree: the package is made, installed and run in the optimized one";

TEST(PackageE2E, DebInstallsIntoAFreshRootAndRuns) {
  if (!OptimizedBuild()) GTEST_SKIP() << kPackagedInTheOptimizedTree;
  if (access("/usr/bin/dpkg-shlibdeps", X_OK) != 0) GTEST_SKIP() << "no dpkg-dev here";
  const Package& package = Built();
  ASSERT_EQ(package.error, "");
  const std::string& deb = package.deb;
  const std::string deb_name = std::filesystem::path(deb).filename().string();
  ASSERT_TRUE(deb_name.starts_with("cgov_0.1.0_") && deb_name.ends_with(".deb")) << deb;

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

  const std::string& root = package.root;
  const std::string cgov = root + "/usr/bin/cgov";
  for (const char* file :
       {"/usr/share/man/man1/cgov.1.gz", "/usr/share/bash-completion/completions/cgov",
        "/usr/share/zsh/vendor-completions/_cgov", "/usr/share/doc/cgov/copyright",
        "/usr/share/doc/cgov/changelog.gz", "/usr/share/doc/cgov/docs/metrics.md",
        "/usr/share/cgov/deploy/prometheus/cgov-rules.yml"}) {
    EXPECT_TRUE(std::filesystem::exists(root + file)) << file;
  }
  // The unit in one place only, naming where the package put cgov.
  EXPECT_FALSE(std::filesystem::exists(root + "/usr/share/cgov/deploy/systemd"));
  TempDir dir;
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
  RunResult demo = RunProgram(
      {cgov, "demo", "--duration", "2h", "--interval", "10s", "--db", dir / "demo.db"}, {}, 60);
  ASSERT_EQ(demo.exit_code, 0) << demo.err;
  RunResult report = RunProgram({cgov, "report", "--db", dir / "demo.db", "--since", "2h"}, {});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("Where the GPU-time went"), std::string::npos) << report.out;

  // The man page renders without a warning; the completions load and complete.
  RunResult man =
      Shell("zcat '" + root + "/usr/share/man/man1/cgov.1.gz' | groff -man -ww -z 2>&1");
  EXPECT_EQ(man.exit_code, 0);
  EXPECT_EQ(man.out, "") << "groff warnings";
  RunResult bash = Shell("source '" + root +
                         "/usr/share/bash-completion/completions/cgov'; COMP_WORDS=(cgov run --f); "
                         "COMP_CWORD=2; _cgov; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(cgov rep); "
                         "COMP_CWORD=1; _cgov; echo \"${COMPREPLY[*]}\"");
  EXPECT_EQ(bash.out, "--fail-on --fail-on-regression --force\nreport\n") << bash.err;
  // An option's few values, and the exporters' dotted names.
  RunResult values =
      Shell("source '" + root +
            "/usr/share/bash-completion/completions/cgov'; COMP_WORDS=(cgov report --format j); "
            "COMP_CWORD=3; _cgov; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(cgov daemon --log.level "
            "w); COMP_CWORD=3; _cgov; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(cgov daemon --web.l); "
            "COMP_CWORD=2; _cgov; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(cgov report --by sl); "
            "COMP_CWORD=3; _cgov; echo \"${COMPREPLY[*]}\"");
  EXPECT_EQ(values.out, "json\nwarn\n--web.listen-address\nslurm_job\n") << values.err;
  if (access("/usr/bin/zsh", X_OK) == 0) {
    RunResult zsh =
        RunProgram({"/usr/bin/zsh", "-n", root + "/usr/share/zsh/vendor-completions/_cgov"}, {});
    EXPECT_EQ(zsh.exit_code, 0) << zsh.err;
  }
}

// A command's answer without its trailing newline.
std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Issue 60, item 4: the package lives as Debian's daemons do, in a `dpkg --root` of its own (the
// maintainer scripts run chrootless with DPKG_ROOT, touching only that tree, starting nothing):
// install enables the unit; an upgrade keeps the admin's /etc/default/cgov and the history;
// remove keeps both (config-files); purge deletes the history, says so, and leaves nothing.
TEST(PackageE2E, InstallUpgradeRemovePurgeKeepAndDeleteWhatTheyShould) {
  if (!OptimizedBuild()) GTEST_SKIP() << kPackagedInTheOptimizedTree;
  if (access("/usr/bin/dpkg-shlibdeps", X_OK) != 0) GTEST_SKIP() << "no dpkg-dev here";
  const Package& package = Built();
  ASSERT_EQ(package.error, "");
  TempDir dir;
  // The upgrade: the same binary one version up.
  RunResult built = RunProgram({Root() + "/scripts/make-deb", BuildDir(), dir / "up"},
                               {{"CGOV_DEB_VERSION", "0.1.0+up1"}}, 240);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const std::string upgrade = Trimmed(built.out);
  const std::string root = dir / "root";
  for (const char* d : {"/var/lib/dpkg/info", "/var/lib/dpkg/updates"}) {
    std::filesystem::create_directories(root + d);
  }
  WriteFile(root + "/var/lib/dpkg/status", "");
  auto dpkg = [&](const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/usr/bin/dpkg",    "--root=" + root,  "--force-script-chrootless",
        "--force-not-root", "--force-depends", "--log=/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProgram(argv, {}, 120);
  };
  auto status = [&] {
    return Trimmed(RunProgram({"/usr/bin/dpkg-query", "--admindir=" + root + "/var/lib/dpkg", "-W",
                               "-f=${Status} ${Version}", "cgov"},
                              {})
                       .out);
  };
  const std::string wants = root + "/etc/systemd/system/multi-user.target.wants/cgov.service";
  const std::string defaults = root + "/etc/default/cgov";
  const std::string history = root + "/var/lib/cgov/history.db";

  RunResult r = dpkg({"-i", package.deb});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(status(), "install ok installed 0.1.0");
  EXPECT_TRUE(std::filesystem::is_symlink(wants)) << "enabled on install, as Debian's daemons";
  // The admin's settings and the daemon's history.
  WriteFile(defaults, ReadFile(defaults) + "CGOV_LISTEN=127.0.0.1:9474\n");
  std::filesystem::create_directories(root + "/var/lib/cgov");
  WriteFile(history, "the history");

  r = dpkg({"-i", upgrade});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(status(), "install ok installed 0.1.0+up1");
  EXPECT_NE(ReadFile(defaults).find("CGOV_LISTEN=127.0.0.1:9474"), std::string::npos)
      << "the admin's /etc/default/cgov is kept";
  EXPECT_EQ(ReadFile(history), "the history");
  EXPECT_TRUE(std::filesystem::is_symlink(wants)) << "still enabled";

  r = dpkg({"-r", "cgov"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(status(), "deinstall ok config-files 0.1.0+up1");
  EXPECT_FALSE(std::filesystem::exists(root + "/usr/bin/cgov"));
  EXPECT_TRUE(std::filesystem::exists(defaults)) << "remove keeps the configuration";
  EXPECT_EQ(ReadFile(history), "the history") << "remove keeps the history";
  EXPECT_EQ(r.out.find("purging"), std::string::npos) << r.out;

  r = dpkg({"-P", "cgov"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("cgov: purging " + root + "/var/lib/cgov (the GPU history"),
            std::string::npos)
      << r.out << r.err;
  EXPECT_FALSE(std::filesystem::exists(root + "/var/lib/cgov")) << "purge deletes the history";
  EXPECT_FALSE(std::filesystem::exists(defaults));
  EXPECT_FALSE(std::filesystem::is_symlink(wants));
  EXPECT_FALSE(std::filesystem::is_symlink(root + "/etc/systemd/system/cgov.service"))
      << "not left masked";
  EXPECT_EQ(status(), "") << "dpkg knows no cgov";
}

// lintian, as Debian's archive runs it: no error, no warning (the pedantic and informational
// findings it still has are argued in docs/daemon.md, "The Debian package").
TEST(PackageE2E, LintianFindsNoErrorAndNoWarning) {
  if (access("/usr/bin/lintian", X_OK) != 0) GTEST_SKIP() << "no lintian here";
  // The package users install is the optimized build's; lintian on the sanitizer tree's 68 MB
  // binary takes two minutes and checks nothing the optimized package does not.
  if (!OptimizedBuild()) GTEST_SKIP() << "a Debug (sanitizer) tree: checked in the optimized one";
  if (access("/usr/bin/dpkg-shlibdeps", X_OK) != 0) GTEST_SKIP() << "no dpkg-dev here";
  const Package& package = Built();
  ASSERT_EQ(package.error, "");
  RunResult lintian = RunProgram(
      {"/usr/bin/lintian", "--allow-root", "--fail-on", "error,warning", package.deb}, {}, 300);
  EXPECT_EQ(lintian.exit_code, 0) << lintian.out << lintian.err;
  EXPECT_EQ(lintian.out, "") << "lintian findings";
}

// The binary carries what dpkg-buildflags' hardening=+all gives (CMakeLists.txt, CGOV_HARDENING).
// hardening-check's control-flow check looks for the IBT/SHSTK property on the linked binary,
// which Debian 12's own crt1.o, crti.o and libc_nonshared.a do not carry, so no binary linked
// on bookworm has it (/usr/bin/ls neither); cgov's own objects are checked for it instead.
TEST(PackageE2E, HardeningCheckPasses) {
  if (access("/usr/bin/hardening-check", X_OK) != 0) GTEST_SKIP() << "no devscripts here";
  if (!OptimizedBuild()) GTEST_SKIP() << "a Debug tree: _FORTIFY_SOURCE needs optimization";
  const Package& package = Built();
  ASSERT_EQ(package.error, "");
  RunResult check = RunProgram(
      {"/usr/bin/hardening-check", "--nocfprotection", package.root + "/usr/bin/cgov"}, {});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  for (const char* line : {"Position Independent Executable: yes", "Stack protected: yes",
                           "Fortify Source functions: yes", "Read-only relocations: yes",
                           "Immediate binding: yes", "Stack clash protection: yes"}) {
    EXPECT_NE(check.out.find(line), std::string::npos) << line << " in " << check.out;
  }
#if defined(__x86_64__)
  RunResult members = RunProgram({"/usr/bin/ar", "t", BuildDir() + "/libcgov_core.a"}, {});
  RunResult notes = RunProgram({"/usr/bin/readelf", "-n", BuildDir() + "/libcgov_core.a"}, {});
  size_t objects = 0, marked = 0;
  for (size_t at = 0; (at = members.out.find(".o\n", at)) != std::string::npos; at += 3) ++objects;
  for (size_t at = 0; (at = notes.out.find("x86 feature: IBT, SHSTK", at)) != std::string::npos;
       ++at) {
    ++marked;
  }
  EXPECT_GT(objects, 5u);
  EXPECT_EQ(marked, objects) << "objects compiled with -fcf-protection";
#endif
}

std::string UnitKey(const std::string& unit, const std::string& key) {
  std::smatch m;
  return std::regex_search(unit, m, std::regex("\n" + key + "=([^\n]*)")) ? m[1].str() : "";
}

// The unit as systemd reads it, on the installed root alone (no running systemd): its paths are
// the package's, systemd-analyze verify accepts it and its security exposure is what
// docs/daemon.md records.
TEST(PackageE2E, UnitVerifiesAndNamesThePackagesPaths) {
  if (!OptimizedBuild()) GTEST_SKIP() << kPackagedInTheOptimizedTree;
  if (access("/usr/bin/systemd-analyze", X_OK) != 0) GTEST_SKIP() << "no systemd here";
  const Package& package = Built();
  ASSERT_EQ(package.error, "");
  const std::string& root = package.root;
  const std::string unit = ReadFile(root + "/usr/lib/systemd/system/cgov.service");
  EXPECT_EQ(UnitKey(unit, "ExecStart"), "/usr/bin/cgov daemon $ARGS");
  EXPECT_EQ(UnitKey(unit, "EnvironmentFile"), "-/etc/default/cgov");
  EXPECT_EQ(UnitKey(unit, "StateDirectory"), "cgov");
  EXPECT_EQ(UnitKey(unit, "RestartPreventExitStatus"), "2");
  EXPECT_EQ(UnitKey(unit, "DevicePolicy"), "closed");
  EXPECT_TRUE(std::filesystem::exists(root + "/etc/default/cgov"));
  EXPECT_EQ(RunProgram({"/usr/bin/dpkg-deb", "-I", package.deb, "conffiles"}, {}).out,
            "/etc/default/cgov\n");

  // verify resolves the unit's dependencies and commands under --root: systemd's own units
  // (sysinit.target, ...) and /bin/kill (ExecReload) are this machine's, copied in.
  TempDir dir;
  const std::string sys = dir / "root";
  std::filesystem::create_directories(sys + "/usr/lib/systemd");
  std::filesystem::copy(
      "/usr/lib/systemd/system", sys + "/usr/lib/systemd/system",
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::filesystem::copy_file(root + "/usr/lib/systemd/system/cgov.service",
                             sys + "/usr/lib/systemd/system/cgov.service",
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::create_directories(sys + "/usr/bin");
  std::filesystem::copy_file(root + "/usr/bin/cgov", sys + "/usr/bin/cgov");
  std::filesystem::create_directories(sys + "/bin");
  std::filesystem::copy_file("/bin/kill", sys + "/bin/kill");
  RunResult verify =
      RunProgram({"/usr/bin/systemd-analyze", "verify", "--root=" + sys, "cgov.service"}, {}, 60);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(verify.out + verify.err, "");

  RunResult security = RunProgram({"/usr/bin/systemd-analyze", "security", "--offline=yes",
                                   "--no-pager", "--root=" + sys, "cgov.service"},
                                  {}, 60);
  EXPECT_EQ(security.exit_code, 0) << security.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(security.out, m,
                                std::regex("Overall exposure level for cgov.service: ([0-9.]+)")))
      << security.out;
  const double exposure = std::stod(m[1].str());
  // docs/daemon.md records the score; a change to the unit that raises it must say why there.
  const std::string docs = ReadFile(DocsFile("daemon.md"));
  EXPECT_NE(docs.find("exposure level " + m[1].str()), std::string::npos)
      << "docs/daemon.md should record `systemd-analyze security` exposure level " << m[1].str();
  EXPECT_LE(exposure, 3.0) << security.out;
}

// The daemon as the unit starts it: ARGS from /etc/default/cgov through a shell's word
// splitting (as systemd splits an unquoted $ARGS), the database under $STATE_DIRECTORY, which it
// creates when missing; `cgov report` finds it there without --db; a usage error exits 2 (the
// unit's RestartPreventExitStatus); a missing directory is named, not SQLite's "unable to open".
TEST(PackageE2E, DaemonKeepsItsStateWhereTheUnitSays) {
  if (!OptimizedBuild()) GTEST_SKIP() << kPackagedInTheOptimizedTree;
  if (access("/usr/bin/dpkg-shlibdeps", X_OK) != 0) GTEST_SKIP() << "no dpkg-dev here";
  const Package& package = Built();
  ASSERT_EQ(package.error, "");
  const std::string cgov = package.root + "/usr/bin/cgov";
  TempDir dir;
  const std::string state = dir / "state/cgov";
  std::filesystem::create_directories(dir / "state");
  const Env env = {{"CGOV_NVML_LIB", FakeNvml("full")},
                   {"CGOV_FAKE_NVML_SCENARIO", Scenario("h100x8")},
                   {"STATE_DIRECTORY", state}};
  Started daemon = StartProgram({"/bin/bash", "-c",
                                 "set -a; . '" + package.root + "/etc/default/cgov'; exec '" +
                                     cgov + "' daemon $ARGS --commit-every 0s"},
                                env);
  EXPECT_TRUE(WaitFor(
      [&] {
        return std::filesystem::exists(state + "/history.db") &&
               std::filesystem::file_size(state + "/history.db") > 0;
      },
      20));
  ::usleep(500 * 1000);
  kill(daemon.pid, SIGTERM);
  RunResult stopped = WaitProgram(daemon, 30);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  struct stat st {};
  ASSERT_EQ(stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  RunResult report = RunProgram({cgov, "report", "--since", "1h", "--format", "json"}, env);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("\"gpus\""), std::string::npos) << report.out.substr(0, 400);

  // Flags from the environment: CGOV_ and the flag's name.
  RunResult bad_env =
      RunProgram({cgov, "daemon"}, {{"STATE_DIRECTORY", state}, {"CGOV_INTERVAL", "tenminutes"}});
  EXPECT_EQ(bad_env.exit_code, 2) << bad_env.err;
  EXPECT_NE(bad_env.err.find("--interval"), std::string::npos) << bad_env.err;
  RunResult help = RunProgram({cgov, "daemon", "--help"}, {});
  for (const char* name : {"CGOV_LISTEN", "CGOV_DB", "CGOV_WEB_CONFIG", "CGOV_KUBERNETES",
                           "--web.listen-address", "--web.config.file"}) {
    EXPECT_NE(help.out.find(name), std::string::npos) << name;
  }
  RunResult usage = RunProgram({cgov, "daemon", "--no-such-flag"}, {{"STATE_DIRECTORY", state}});
  EXPECT_EQ(usage.exit_code, 2) << usage.err;

  RunResult no_parent = RunProgram({cgov, "daemon"}, {{"STATE_DIRECTORY", dir / "gone/cgov"}});
  EXPECT_EQ(no_parent.exit_code, 2);
  EXPECT_NE(no_parent.err.find(dir / "gone does not exist"), std::string::npos) << no_parent.err;
  RunResult no_dir = RunProgram({cgov, "daemon", "--db", dir / "nowhere/h.db"}, env);
  EXPECT_EQ(no_dir.exit_code, 1);
  EXPECT_NE(no_dir.err.find("directory " + (dir / "nowhere") + " does not exist"),
            std::string::npos)
      << no_dir.err;
  EXPECT_EQ(no_dir.err.find("unable to open"), std::string::npos) << no_dir.err;
  RunResult no_source = RunProgram({cgov, "report"}, {{"STATE_DIRECTORY", dir / "gone/cgov"}});
  EXPECT_EQ(no_source.exit_code, 2);
  EXPECT_NE(no_source.err.find(dir / "gone/cgov/history.db"), std::string::npos) << no_source.err;
}

}  // namespace
}  // namespace cgov::e2e
