#include "os/file_reader.h"

#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "fakes/fake_file_reader.h"

namespace cgov {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/cgov_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  void Write(const std::string& rel, const std::string& content) {
    std::filesystem::create_directories(std::filesystem::path(path_ + rel).parent_path());
    std::ofstream(path_ + rel) << content;
  }

 private:
  std::string path_;
};

TEST(RootedFileReader, ReadsUnderItsRoot) {
  TempDir dir;
  dir.Write("/proc/loadavg", "0.37 0.15 0.05 2/81 1909\n");
  RootedFileReader reader(dir.path() + "/");
  std::string text;
  ASSERT_TRUE(reader.Read("/proc/loadavg", &text).ok());
  EXPECT_EQ(text, "0.37 0.15 0.05 2/81 1909\n");
}

TEST(RootedFileReader, MissingFileIsNotFoundAndNamesThePath) {
  TempDir dir;
  RootedFileReader reader(dir.path());
  std::string text = "stale";
  Status status = reader.Read("/proc/4242/stat", &text);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_NE(status.message().find("/proc/4242/stat"), std::string::npos) << status.message();
}

TEST(RootedFileReader, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every file";
  TempDir dir;
  dir.Write("/secret", "x");
  std::filesystem::permissions(dir.path() + "/secret", std::filesystem::perms::none);
  RootedFileReader reader(dir.path());
  std::string text;
  EXPECT_EQ(reader.Read("/secret", &text).code(), StatusCode::kPermissionDenied);
}

TEST(ErrnoStatus, MapsWhatCallersTellApart) {
  EXPECT_EQ(ErrnoStatus(ENOENT, "cannot open", "/p").code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(ESRCH, "cannot read", "/p").code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EACCES, "cannot open", "/p").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(EPERM, "cannot open", "/p").code(), StatusCode::kPermissionDenied);
  Status io = ErrnoStatus(EIO, "cannot read", "/proc/stat");
  EXPECT_EQ(io.code(), StatusCode::kIoError);
  EXPECT_EQ(io.message(), "cannot read /proc/stat: Input/output error");
}

TEST(RootedFileReader, HotFileSeesNewContentOnEveryRead) {
  // Real /proc regenerates on pread at offset 0; a regular file rewritten in place is the same
  // contract as far as the reader is concerned.
  TempDir dir;
  dir.Write("/counter", "first, and longer than the second\n");
  RootedFileReader reader(dir.path());
  std::string text;
  ASSERT_TRUE(reader.ReadHot("/counter", &text).ok());
  EXPECT_EQ(text, "first, and longer than the second\n");
  {
    std::ofstream out(dir.path() + "/counter", std::ios::in | std::ios::out | std::ios::trunc);
    out << "second\n";
  }
  ASSERT_TRUE(reader.ReadHot("/counter", &text).ok());
  EXPECT_EQ(text, "second\n");
}

TEST(RootedFileReader, HotReadOfRealProcStatChangesOverTime) {
  RootedFileReader reader;
  std::string first, second;
  ASSERT_TRUE(reader.ReadHot("/proc/uptime", &first).ok());
  usleep(20'000);
  ASSERT_TRUE(reader.ReadHot("/proc/uptime", &second).ok());
  EXPECT_NE(first, second) << "a kept-open /proc fd must regenerate at offset 0";
}

TEST(RootedFileReader, ReadsFilesLargerThanOneBuffer) {
  TempDir dir;
  std::string big(100'000, 'x');
  dir.Write("/big", big);
  RootedFileReader reader(dir.path());
  std::string text;
  ASSERT_TRUE(reader.Read("/big", &text).ok());
  EXPECT_EQ(text.size(), big.size());
}

TEST(RootedFileReader, HotReadOfAFileLargerThanOneBuffer) {
  TempDir dir;
  std::string big;
  for (int i = 0; big.size() < 70'000; ++i) big += "line " + std::to_string(i) + "\n";
  dir.Write("/big", big);
  RootedFileReader reader(dir.path());
  std::string text;
  ASSERT_TRUE(reader.ReadHot("/big", &text).ok());
  EXPECT_EQ(text, big);
  ASSERT_TRUE(reader.ReadHot("/big", &text).ok());
  EXPECT_EQ(text, big) << "the second read starts at offset 0 again";
}

TEST(RootedFileReader, ListsDirectoryEntries) {
  TempDir dir;
  dir.Write("/proc/1/stat", "");
  dir.Write("/proc/22/stat", "");
  RootedFileReader reader(dir.path());
  std::vector<std::string> names;
  ASSERT_TRUE(reader.ListDir("/proc", &names).ok());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"1", "22"}));
}

TEST(FakeFileReader, RecordsReadsAndInjectsErrors) {
  FakeFileReader fake;
  fake.Set("/proc/stat", "cpu 1 2 3 4\n");
  fake.SetError("/proc/1/environ", PermissionDenied("cannot open /proc/1/environ"));
  std::string text;
  EXPECT_TRUE(fake.ReadHot("/proc/stat", &text).ok());
  EXPECT_EQ(fake.Read("/proc/1/environ", &text).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(fake.Read("/nope", &text).code(), StatusCode::kNotFound);
  EXPECT_EQ(fake.reads(), (std::vector<std::string>{"hot:/proc/stat", "/proc/1/environ", "/nope"}));
}

}  // namespace
}  // namespace cgov
