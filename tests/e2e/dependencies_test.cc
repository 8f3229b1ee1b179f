// The libraries the cgov binary links are the ones docs/architecture.md lists (issue 17): a new
// dependency shows up here before it shows up on a GPU host. SQLite, zlib, libcurl, libmicrohttpd
// and GnuTLS are loaded at run time by the commands that need each, never linked.
#include <unistd.h>

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "process_runner.h"

namespace cgov::e2e {
namespace {

std::set<std::string> DocumentedLibraries() {
  const std::string doc = ReadFile(std::string(CGOV_DOCS_DIR) + "/architecture.md");
  const size_t begin = doc.find("<!-- ldd:begin");
  const size_t end = doc.find("<!-- ldd:end -->");
  std::set<std::string> names;
  if (begin == std::string::npos || end == std::string::npos) return names;
  const std::string list = doc.substr(begin, end - begin);
  const std::regex soname(R"(`(lib[A-Za-z0-9_+.-]+\.so\.[0-9]+)`)");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), soname);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1]);
  }
  return names;
}

TEST(DependenciesE2E, LddListsExactlyTheDocumentedLibraries) {
  if (!CGOV_STATIC_LIBSTDCXX_BUILD) {
    GTEST_SKIP() << "a build with libstdc++ linked dynamically (the sanitizer tree) is not the "
                    "binary a GPU host runs";
  }
  const std::set<std::string> documented = DocumentedLibraries();
  ASSERT_GE(documented.size(), 2u) << "the list in docs/architecture.md was not found";
  RunResult ldd = RunProgram({"/usr/bin/ldd", CgovBinary()}, {});
  ASSERT_EQ(ldd.exit_code, 0) << ldd.err;
  std::set<std::string> linked;
  std::istringstream lines(ldd.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (name.empty() || name.starts_with("linux-vdso") ||
        name.find("ld-linux") != std::string::npos) {
      continue;
    }
    linked.insert(name);
  }
  EXPECT_EQ(linked, documented) << ldd.out;
  for (const char* loaded :
       {"libsqlite3.so.0", "libz.so.1", "libcurl.so.4", "libmicrohttpd.so.12", "libgnutls.so.30"}) {
    EXPECT_EQ(linked.count(loaded), 0u) << loaded;
  }
}

// A `cgov run` without --db needs no SQLite (nor zlib) at all; with --db, a missing SQLite stops
// it before the job starts (exit 2), naming the package.
TEST(DependenciesE2E, RunNeedsSqliteOnlyForADatabase) {
  TempDir dir;
  const Env no_sqlite = {{"CGOV_LIBSQLITE3", "/nonexistent/libsqlite3.so.0"},
                         {"CGOV_LIBZ", "/nonexistent/libz.so.1"},
                         {"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"},
                         {"LD_DEBUG", "files"}};
  RunResult plain = RunProgram(
      {CgovBinary(), "run", "--quiet", "--out", dir / "plain", "--", "/bin/sh", "-c", "exit 7"},
      no_sqlite);
  EXPECT_EQ(plain.exit_code, 7) << plain.err;
  if (!CGOV_LINK_SQLITE_BUILD) {  // the sanitizer tree links them (CMakeLists.txt says why)
    for (const char* library : {"libsqlite3.so", "libz.so"}) {
      EXPECT_EQ(plain.err.find(library), std::string::npos) << library << " was loaded:\n"
                                                            << plain.err;
    }
  }
  const std::string marker = dir / "ran";
  RunResult db = RunProgram({CgovBinary(), "run", "--db", dir / "h.db", "--out", dir / "db", "--",
                             "/bin/sh", "-c", "touch " + marker},
                            no_sqlite);
  EXPECT_EQ(db.exit_code, 2) << db.err;
  EXPECT_NE(db.err.find("needs SQLite"), std::string::npos) << db.err;
  EXPECT_NE(db.err.find("install the Debian package libsqlite3-0"), std::string::npos) << db.err;
  EXPECT_EQ(access(marker.c_str(), F_OK), -1) << "the job never started";
}

TEST(DependenciesE2E, PrometheusWithoutLibcurlSaysWhichPackage) {
  RunResult r = RunProgram({CgovBinary(), "report", "--prometheus", "http://127.0.0.1:1"},
                           {{"CGOV_LIBCURL", "/nonexistent/libcurl.so.4"}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("needs libcurl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("libcurl4"), std::string::npos) << r.err;
}

TEST(DependenciesE2E, ListenWithoutLibmicrohttpdSaysWhichPackage) {
  TempDir dir;
  RunResult r =
      RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--listen", "127.0.0.1:0"},
                 {{"CGOV_LIBMICROHTTPD", "/nonexistent/libmicrohttpd.so.12"},
                  {"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cgov daemon: error: --listen needs libmicrohttpd"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("install the Debian package libmicrohttpd12"), std::string::npos) << r.err;
}

// --kubernetes and --web-config load their libraries at start: a missing one stops the daemon
// before it records anything, naming the package.
TEST(DependenciesE2E, KubernetesAndWebConfigWithoutTheirLibrariesSayWhichPackage) {
  TempDir dir;
  RunResult r = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--kubernetes",
                            "--kube-api", "http://127.0.0.1:1", "--node-name", "n1"},
                           {{"CGOV_LIBCURL", "/nonexistent/libcurl.so.4"},
                            {"CGOV_NVML_LIB", "/nonexistent/libnvidia-ml.so.1"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("cgov daemon: error: --kubernetes: --prometheus or --kubernetes needs "
                       "libcurl"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("install the Debian package libcurl4"), std::string::npos) << r.err;
  WriteFile(dir / "web.yml",
            "basic_auth_users:\n  u: $2a$06$DCq7YPn5Rq63x1Lad4cll.TV4S6ytwfsfvkgY8"
            "jIucDrjc8deX1s.\n");
  r = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--listen", "127.0.0.1:0",
                  "--web-config", dir / "web.yml"},
                 {{"CGOV_LIBYAML", "/nonexistent/libyaml-0.so.2"}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--web-config needs libyaml"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("install the Debian package libyaml-0-2"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cgov::e2e
