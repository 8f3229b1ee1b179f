#include "telemetry/environ_access.h"

#include <gtest/gtest.h>

namespace cgov {
namespace {

// /proc/self/status as Linux 6.1 writes it (the lines that matter), for three credentials.
std::string StatusFile(const char* uids, const char* cap_eff) {
  return std::string("Name:\tcgov\nUmask:\t0022\nState:\tS (sleeping)\nUid:\t") + uids +
         "\nGid:\t0\t0\t0\t0\nCapInh:\t0000000000000000\nCapPrm:\t" + cap_eff + "\nCapEff:\t" +
         cap_eff + "\nCapBnd:\t000001ffffffffff\n";
}

// Regression (issue 43, 12): a daemon run as a non-root user (the shipped unit's DynamicUser)
// lost every other user's project and team without a word.
TEST(EnvironAccess, OnlyRootOrCapSysPtraceReadsOtherUsersEnvironments) {
  const EnvironAccess root = EnvironAccessOf(StatusFile("0\t0\t0\t0", "000001ffffffffff"));
  EXPECT_TRUE(root.others_readable);
  EXPECT_TRUE(root.warning.empty());
  const EnvironAccess plain =
      EnvironAccessOf(StatusFile("61234\t61234\t61234\t61234", "0000000000000000"));
  EXPECT_FALSE(plain.others_readable);
  EXPECT_EQ(plain.fs_uid, 61234u);
  EXPECT_NE(plain.warning.find("running as uid 61234 without CAP_SYS_PTRACE: other users' "
                               "/proc/PID/environ cannot be read"),
            std::string::npos)
      << plain.warning;
  EXPECT_NE(plain.warning.find("AmbientCapabilities=CAP_SYS_PTRACE"), std::string::npos);
  // The unit's ambient CAP_SYS_PTRACE: bit 19.
  EXPECT_TRUE(EnvironAccessOf(StatusFile("61234\t61234\t61234\t61234", "0000000000080000"))
                  .others_readable);
  // The filesystem uid decides (a setfsuid(0) process reads as root).
  EXPECT_TRUE(
      EnvironAccessOf(StatusFile("61234\t61234\t61234\t0", "0000000000000000")).others_readable);
  // Unknown is not a warning: no Uid line, or capabilities that are not hex.
  EXPECT_TRUE(EnvironAccessOf("Name:\tcgov\n").others_readable);
  EXPECT_TRUE(EnvironAccessOf(StatusFile("5\t5\t5\t5", "zz")).others_readable);
}

}  // namespace
}  // namespace cgov
