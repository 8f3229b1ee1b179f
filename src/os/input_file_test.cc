#include "os/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace cgov {
namespace {

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov-input-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const char* name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(InputFileTest, ReadsARegularFileWhole) {
  std::ofstream(Path("f")) << "user:pass\n";
  auto text = ReadInputFile(Path("f"), 100, "--basic-auth-file");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text, "user:pass\n");
  EXPECT_EQ(ReadInputFile(Path("missing"), 100, "--x").status().code(), StatusCode::kNotFound);
}

// Issue 21 items 5, 6: a directory aborted cgov; /dev/zero grew it to gigabytes; a FIFO hung.
TEST_F(InputFileTest, DirectoriesFifosDevicesAndHugeFilesAreRefusedAtOnce) {
  auto dir = ReadInputFile(dir_.string(), 100, "--tls-cert");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("--tls-cert " + dir_.string() + ": a directory"),
            std::string::npos)
      << dir.status().message();
  ASSERT_EQ(mkfifo(Path("fifo").c_str(), 0600), 0);
  auto fifo = ReadInputFile(Path("fifo"), 100, "--price-catalog");
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("a FIFO"), std::string::npos);
  auto zero = ReadInputFile("/dev/zero", 100, "--basic-auth-file");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("a device"), std::string::npos);
  std::ofstream(Path("big")) << std::string(101, 'x');
  auto big = ReadInputFile(Path("big"), 100, "--price-catalog");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("101 bytes, more than the 100"), std::string::npos);
  std::ofstream(Path("f")) << "x";
  EXPECT_TRUE(CheckRegularOrAbsent(Path("f"), "--db").ok());
  EXPECT_TRUE(CheckRegularOrAbsent(Path("absent"), "--db").ok());
  EXPECT_FALSE(CheckRegularOrAbsent(Path("fifo"), "--db").ok());
  EXPECT_FALSE(CheckRegularOrAbsent("/dev/null", "--db").ok());
}

// Issue 46, item 5: every read allocated its limit first (1 GiB for a 100-byte bill, a bad_alloc
// under `ulimit -v`). Now memory follows the file: a tiny file under a limit no machine could
// allocate reads, and a /proc file (its size reads 0) and one over its limit still behave.
TEST_F(InputFileTest, MemoryFollowsTheFileNotTheLimit) {
  std::ofstream(Path("bill.csv")) << "a,b\n1,2\n";
  const size_t no_machine_has_this = size_t{1} << 46;  // 64 TiB
  auto small = ReadInputFile(Path("bill.csv"), no_machine_has_this, "--billing");
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(*small, "a,b\n1,2\n");
  auto status = ReadInputFile("/proc/self/status", no_machine_has_this, "--x");
  ASSERT_TRUE(status.ok()) << status.status().message();
  EXPECT_NE(status->find("\nPid:\t" + std::to_string(getpid()) + "\n"), std::string::npos)
      << "read past its zero st_size: " << status->size() << " bytes";
  auto capped = ReadInputFile("/proc/self/status", 10, "--x");
  ASSERT_FALSE(capped.ok()) << "a file that is larger than its stat said is still refused";
  EXPECT_NE(capped.status().message().find("more than the 10 bytes"), std::string::npos)
      << capped.status().message();
}

}  // namespace
}  // namespace cgov
