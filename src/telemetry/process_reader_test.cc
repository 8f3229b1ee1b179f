#include "telemetry/process_reader.h"

#include <gtest/gtest.h>

#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"

namespace cgov {
namespace {

class ProcessReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(files_.LoadTree(testing::FixturePath(testing::kVm), "").ok());
  }
  FakeFileReader files_;
};

TEST_F(ProcessReaderTest, ReadsIdentityOfARealCapture) {
  ProcessReader reader(&files_);
  auto id = reader.Read(3048);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(id->stat.comm, "a) (b");
  EXPECT_EQ(id->uid, 0u);
  EXPECT_FALSE(id->loginuid.has_value()) << "4294967295 means unset";
  EXPECT_EQ(id->user, "root");
}

TEST_F(ProcessReaderTest, VanishedPidIsNotFound) {
  ProcessReader reader(&files_);
  auto id = reader.Read(999999);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.status().code(), StatusCode::kNotFound);
  EXPECT_NE(id.status().message().find("/proc/999999/stat"), std::string::npos);
}

TEST_F(ProcessReaderTest, HiddenStatusLeavesOwnerUnknownNotRoot) {
  files_.SetError("/proc/3048/status", PermissionDenied("cannot open /proc/3048/status"));
  files_.SetError("/proc/3048/loginuid", PermissionDenied("cannot open /proc/3048/loginuid"));
  ProcessReader reader(&files_);
  auto id = reader.Read(3048);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_FALSE(id->uid.has_value());
  EXPECT_EQ(id->user, "");
}

TEST_F(ProcessReaderTest, LoginUidWinsOverOwnerAndUnknownUidsShowAsNumbers) {
  files_.Set("/proc/3048/loginuid", "4321");
  ProcessReader reader(&files_);
  auto id = reader.Read(3048);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->user, "4321") << "no passwd entry: the number, not a guess";
  EXPECT_EQ(reader.UserName(65534), "nobody");
}

TEST_F(ProcessReaderTest, ScanAllSkipsNonPidsAndVanishedOnes) {
  files_.Set("/proc/4444/status", "Uid:\t0\t0\t0\t0\n");  // a pid whose stat is gone
  ProcessReader reader(&files_);
  std::vector<PidStat> table = reader.ScanAll();
  std::vector<int> pids;
  for (const PidStat& p : table) pids.push_back(p.pid);
  std::sort(pids.begin(), pids.end());
  EXPECT_EQ(pids, (std::vector<int>{1, 2, 3048}));
}

}  // namespace
}  // namespace cgov
