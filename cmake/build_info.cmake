# Writes OUT, the C++ definitions of cgov's build information (src/core/build_info.h): the
# version, the git revision of SOURCE_DIR ("unknown" outside a git checkout) and the build date,
# which is SOURCE_DATE_EPOCH when set (reproducible builds), else the revision's commit date, so
# that two builds of one commit say the same. Run at every build (CMakeLists.txt: target
# cgov_build_info); OUT is rewritten only when its text changes, so an unchanged revision
# recompiles nothing.
find_package(Git QUIET)
set(revision "unknown")
set(epoch "")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse HEAD
                  OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE head_rc ERROR_QUIET)
  if(head_rc EQUAL 0 AND head MATCHES "^[0-9a-f]+$")
    set(revision "${head}")
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} log -1 --format=%ct
                    OUTPUT_VARIABLE epoch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
endif()
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(epoch "$ENV{SOURCE_DATE_EPOCH}")
endif()
if(epoch MATCHES "^[0-9]+$")
  set(ENV{SOURCE_DATE_EPOCH} "${epoch}")  # string(TIMESTAMP) honours it
  string(TIMESTAMP date "%Y-%m-%dT%H:%M:%SZ" UTC)
else()
  set(date "unknown")
endif()
set(text "// Written by cmake/build_info.cmake at build time.
#include \"core/build_info.h\"
namespace cgov {
const BuildInfo kBuildInfo = {\"${VERSION}\", \"${revision}\", \"${date}\"};
}  // namespace cgov
")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
