// What this cgov was built from: its version, the git revision and the build date (written at
// build time by cmake/build_info.cmake). `cgov --version` prints them and /metrics serves them
// as cgov_build_info's labels, as Prometheus' own exporters do.
#ifndef CGOV_CORE_BUILD_INFO_H_
#define CGOV_CORE_BUILD_INFO_H_

namespace cgov {

struct BuildInfo {
  const char* version;     // "0.1.0" (CMakeLists.txt's project version)
  const char* revision;    // the full git commit, or "unknown" outside a git checkout
  const char* build_date;  // RFC 3339 UTC: SOURCE_DATE_EPOCH, else the commit's date; or "unknown"
};

extern const BuildInfo kBuildInfo;

}  // namespace cgov

#endif  // CGOV_CORE_BUILD_INFO_H_
