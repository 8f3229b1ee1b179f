#include "telemetry/pid_namespace.h"

#include <gtest/gtest.h>

#include "fakes/fixture_testing.h"
#include "os/file_reader.h"

namespace cgov {
namespace {

TEST(ParseNsPids, ReadsEveryNamespaceOutermostFirst) {
  struct Case {
    const char* status;
    std::vector<int> want;
  };
  const Case cases[] = {
      {"Name:\tpython\nNSpid:\t44001\t17\nVmRSS:\t1 kB\n", {44001, 17}},
      {"NSpid:\t1\n", {1}},
      {"NSpid:\t900\t40\t7\n", {900, 40, 7}},
      {"Name:\told kernel\nPid:\t12\n", {}},
      {"NSpid:\t12\tx\n", {}},
      {"NSpid:\t-3\n", {}},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseNsPids(c.status), c.want) << c.status;
}

TEST(ParsePidNamespaceLink, TakesTheInodeOfTheLinkTarget) {
  EXPECT_EQ(ParsePidNamespaceLink("pid:[4026531836]"), kInitialPidNamespaceInode);
  EXPECT_EQ(ParsePidNamespaceLink("pid:[4026532210]"), 4026532210u);
  EXPECT_EQ(ParsePidNamespaceLink("net:[4026531836]"), std::nullopt);
  EXPECT_EQ(ParsePidNamespaceLink("pid:[]"), std::nullopt);
  EXPECT_EQ(ParsePidNamespaceLink("pid:[12x]"), std::nullopt);
}

TEST(OwnPidNamespaceInode, IsReadableHere) {
  // Whatever namespace the tests run in, the link exists on Linux >= 3.8.
  EXPECT_TRUE(OwnPidNamespaceInode().has_value());
}

// tests/fixtures/proc/mps-container: alice's containerised process is 17 inside its container
// and 44001 on the host; carol's is 23 and 44002; the MPS server lives on the host only.
TEST(FindOuterPid, MapsAContainersPidToTheHostsByNsPidAndStartTime) {
  RootedFileReader host(testing::FixturePath("proc/mps-container"));
  EXPECT_EQ(FindOuterPid(host, 17, 52000), 44001);
  EXPECT_EQ(FindOuterPid(host, 23, 53000), 44002);
  EXPECT_EQ(FindOuterPid(host, 17, 99999), std::nullopt) << "same number, another process";
  EXPECT_EQ(FindOuterPid(host, 44000, 51000), std::nullopt) << "not in a nested namespace";
}

}  // namespace
}  // namespace cgov
