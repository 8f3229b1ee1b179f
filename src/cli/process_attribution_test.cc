#include "cli/process_attribution.h"

#include <gtest/gtest.h>

namespace cgov::cli {
namespace {

// The job's environment is its user's to write: CGOV_PROJECT and CGOV_TEAM come out valid UTF-8
// without control characters (they reach /metrics labels and terminals; issue 21, item 8).
TEST(IdentityOf, HostileEnvironmentValuesAreEscaped) {
  ProcessIdentity process;
  process.user = "alice";
  const std::string environ = std::string("CGOV_PROJECT=\xff\x1b]0;pwned\x07") + '\0' +
                              "CGOV_TEAM=ok" + '\0' + "CGOV_TAGS=a=b" + '\0';
  IdentityRecord r = IdentityOf(process, "alice", environ);
  EXPECT_EQ(r.project, "\\xff\\x1b]0;pwned\\x07");
  EXPECT_EQ(r.team, "ok");
  EXPECT_EQ(r.tags, "a=b");
}

}  // namespace
}  // namespace cgov::cli
