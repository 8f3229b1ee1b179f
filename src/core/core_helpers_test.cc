#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/base64.h"
#include "core/duration.h"
#include "core/money.h"
#include "core/sha256.h"
#include "core/tags.h"
#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

TEST(TimeFormat, Rfc3339AndCompact) {
  const int64_t ns = 1'795'000'767'123'456'789;  // 2026-11-18T11:19:27.123Z
  EXPECT_EQ(FormatRfc3339Utc(ns), "2026-11-18T11:19:27.123Z");
  EXPECT_EQ(FormatCompactUtc(ns), "20261118T111927Z");
  EXPECT_EQ(FormatRfc3339Utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(FormatRfc3339Utc(-1), "1969-12-31T23:59:59.999Z");
  EXPECT_EQ(FormatCompactUtc(951'782'400'000'000'000), "20000229T000000Z");  // a leap day
}

// The calendar is computed, not asked of gmtime_r: the two agree from 1900 to 2200 (leap
// days, 1900 and 2100 that are not leap years, 2000 that is, times before 1970), a week and an hour
// apart, at both ends of each day.
TEST(TimeFormat, TheComputedCalendarAgreesWithGmtime) {
  for (int64_t s = -2'208'988'800; s < 7'258'118'400; s += 86'400 * 7 + 3'607) {
    for (int64_t seconds : {s, s + 86'399}) {
      const time_t t = static_cast<time_t>(seconds);
      tm parts{};
      ASSERT_NE(gmtime_r(&t, &parts), nullptr);
      char want[32];
      std::strftime(want, sizeof(want), "%Y%m%dT%H%M%SZ", &parts);
      ASSERT_EQ(FormatCompactUtc(seconds * 1'000'000'000 + 999'999'999), want) << seconds;
    }
  }
}

// Issue 21 item 15: --since 9999-12-31 erred naming 1816; --until 2300-01-01 reported a 1715
// window. Every time input is within 1970-01-01 .. 2199-12-31.
TEST(TimeFormat, TimestampsOutsideTheSupportedRangeAreRefused) {
  EXPECT_EQ(*ParseTimestampMs("1970-01-01"), 0);
  EXPECT_EQ(*ParseTimestampMs("2199-12-31T23:59:59.999Z"), kEndTimestampMs - 1);
  for (const char* text : {"2200-01-01", "9999-12-31T23:59Z", "1969-12-31T23:59Z", "0001-01-01",
                           "1970-01-01T00:30+01:00"}) {
    auto ts = ParseTimestampMs(text);
    ASSERT_FALSE(ts.ok()) << text;
    EXPECT_NE(ts.status().message().find("1970-01-01 to 2199-12-31"), std::string::npos)
        << ts.status().message();
  }
}

// Issue 17: impossible days are refused (2026-02-30 became 2026-03-02), and RFC 3339's
// lower-case separators are accepted.
TEST(TimeFormat, ImpossibleDatesAreRefusedAndLowerCaseSeparatorsRead) {
  for (const char* text : {"2026-02-30", "2026-02-29", "2026-04-31T10:00Z", "2100-02-29"}) {
    auto ts = ParseTimestampMs(text);
    ASSERT_FALSE(ts.ok()) << text;
    EXPECT_NE(ts.status().message().find("is not a date"), std::string::npos)
        << ts.status().message();
  }
  EXPECT_TRUE(ParseTimestampMs("2028-02-29").ok()) << "a leap day";
  EXPECT_TRUE(ParseTimestampMs("2000-02-29").ok()) << "400-year leap day";
  EXPECT_EQ(*ParseTimestampMs("2026-11-20t10:00z"), *ParseTimestampMs("2026-11-20T10:00Z"));
}

// Found by fuzz/import_fuzz: a gpu-usage-audit row's ts is any bytes, and the errors of the
// time, duration and price parsers quoted what they refused raw (an escape sequence reached the
// terminal). They quote it escaped.
TEST(TimeFormat, ErrorsQuoteWhatTheyRefuseEscaped) {
  const std::string hostile = "\x1b]0;pwned\x07\xff";
  for (const Status& status : {ParseTimestampMs(hostile).status(), ParseDuration(hostile).status(),
                               ParseUsd(hostile).status()}) {
    ASSERT_FALSE(status.ok());
    EXPECT_TRUE(IsSafeText(status.message())) << status.message();
    EXPECT_NE(status.message().find("\\x1b]0;pwned\\x07\\xff"), std::string::npos)
        << status.message();
  }
}

TEST(Tags, EnvThenFlagsWhichWin) {
  auto tags = MergeTags("project=vision,team=ml,,", {"team=research", "user=alice"});
  ASSERT_TRUE(tags.ok()) << tags.status().message();
  EXPECT_EQ(*tags, (Tags{{"project", "vision"}, {"team", "research"}, {"user", "alice"}}));
  auto none = MergeTags("", {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(Tags, BadTagsNameTheSourceAndTheProblem) {
  struct Case {
    std::string env;
    std::vector<std::string> flags;
    std::string message;
  } cases[] = {
      {"", {"project"}, "--tag: bad tag 'project': write KEY=VALUE, e.g. project=vision"},
      {"",
       {"=x"},
       "--tag: bad tag key '': 1-64 characters of a-z 0-9 _ . -, starting with a letter"},
      {"",
       {"Project=x"},
       "--tag: bad tag key 'Project': 1-64 characters of a-z 0-9 _ . -, starting with a letter"},
      {"",
       {"9lives=x"},
       "--tag: bad tag key '9lives': 1-64 characters of a-z 0-9 _ . -, starting with a letter"},
      {"", {"team="}, "--tag: bad value for tag 'team': 1-256 printable characters, no comma"},
      {"team=a\tb",
       {},
       "CGOV_TAGS: bad value for tag 'team': 1-256 printable characters, no comma"},
      {"project", {}, "CGOV_TAGS: bad tag 'project': write KEY=VALUE, e.g. project=vision"},
  };
  for (const Case& c : cases) {
    auto tags = MergeTags(c.env, c.flags);
    ASSERT_FALSE(tags.ok()) << c.message;
    EXPECT_EQ(tags.status().message(), c.message);
  }
  EXPECT_FALSE(MergeTags("", {"k=" + std::string(257, 'v')}).ok());
  EXPECT_TRUE(MergeTags("", {"k=" + std::string(256, 'v')}).ok());
}

class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cgov_atomic_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(AtomicFileTest, ReplacesContentAndLeavesNoTemporaryFile) {
  const std::string path = dir_ + "/summary.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "new content").ok());
  EXPECT_EQ(Read(path), "new content");
  size_t files = 0;
  for (auto& entry : std::filesystem::directory_iterator(dir_)) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_F(AtomicFileTest, FailureLeavesTheOldFileAndNamesThePath) {
  Status missing_dir = WriteFileAtomically(dir_ + "/no/such/dir/x.json", "x");
  EXPECT_EQ(missing_dir.code(), StatusCode::kIoError);
  EXPECT_NE(missing_dir.message().find("/no/such/dir/x.json"), std::string::npos);
  // A full disk: /dev/full cannot take the temporary file's content only if it is the target's
  // directory, which it cannot be; simulate with a read-only directory instead (skipped as root).
  if (geteuid() == 0) return;
  const std::string path = dir_ + "/summary.json";
  ASSERT_TRUE(WriteFileAtomically(path, "old").ok());
  chmod(dir_.c_str(), 0555);
  EXPECT_FALSE(WriteFileAtomically(path, "new").ok());
  chmod(dir_.c_str(), 0755);
  EXPECT_EQ(Read(path), "old");
}

// Several files into one directory, which the caller syncs once after the last (cgov run).
TEST_F(AtomicFileTest, TheCallerMaySyncTheDirectoryOnceForSeveralFiles) {
  for (const char* name : {"/a.json", "/b.html"}) {
    ASSERT_TRUE(WriteFileAtomically(dir_ + name, name, /*sync_directory=*/false).ok()) << name;
    EXPECT_EQ(Read(dir_ + name), name);
  }
  EXPECT_TRUE(SyncDirectory(dir_).ok());
  Status missing = SyncDirectory(dir_ + "/no/such/dir");
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find("cannot sync directory " + dir_ + "/no/such/dir"),
            std::string::npos)
      << missing.message();
}

// Issue 21 item 10: files were forced to 0644 whatever the umask.
TEST_F(AtomicFileTest, ANewFileFollowsTheUmaskAndAReplacedOneKeepsItsMode) {
  const mode_t old_mask = umask(027);
  const std::string path = dir_ + "/report.md";
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  umask(old_mask);
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "two").ok());
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(Read(path), "two");
}

// Issue 21 item 9: `--out /dev/stdout` replaced the /dev/stdout symlink with a file, and a device
// node was replaced by one. Only regular files are replaced; the rest is written through.
TEST_F(AtomicFileTest, OnlyRegularFilesAreReplacedTheRestIsWrittenThrough) {
  const std::string target = dir_ + "/target.md";
  ASSERT_TRUE(WriteFileAtomically(target, "a long old content").ok());
  const std::string link = dir_ + "/link.md";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "new").ok());
  struct stat st {};
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link stays a link";
  EXPECT_EQ(Read(target), "new") << "written through and truncated";
  ASSERT_TRUE(WriteFileAtomically("/dev/null", "into the void").ok());
  ASSERT_EQ(stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is still the device";
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  Status no_reader = WriteFileAtomically(fifo, "x");
  EXPECT_FALSE(no_reader.ok()) << "a FIFO without a reader is an error, not a hang";
  EXPECT_NE(no_reader.message().find("no reader"), std::string::npos) << no_reader.message();
  Status dir = WriteFileAtomically(dir_, "x");
  EXPECT_FALSE(dir.ok());
  EXPECT_NE(dir.message().find("Is a directory"), std::string::npos) << dir.message();
}

// RFC 4648 section 10's vectors, both ways; decoding is strict.
TEST(Base64, RfcVectorsAndStrictDecoding) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    EXPECT_EQ(Base64Decode(encoded), std::optional<std::string>(plain));
  }
  EXPECT_EQ(Base64Encode(std::string("\0\xff", 2)), "AP8=");
  for (const char* bad : {"Zg", "Zg=", "Z===", "Zm9v\n", "Zm 9", "Zg==Zg==", "Zm9*"}) {
    EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
  }
}

// FIPS 180-4's examples (one block, two blocks) and a message of many blocks, checked against
// coreutils' sha256sum and Python's hashlib.
TEST(Sha256, KnownDigests) {
  auto hex = [](const std::array<uint8_t, 32>& d) {
    std::string out;
    for (uint8_t b : d) out += fmt::format("{:02x}", b);
    return out;
  };
  EXPECT_EQ(hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex(Sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Base64("abc"), "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
  EXPECT_EQ(Sha256Base64(std::string(1000, 'a')), "Qe3s5C1j6Nm/UVqbppMuHCDLyfWl0TRkWttdsblzfqM=");
  for (size_t n : {55, 56, 63, 64, 119, 120}) {  // the padding's edges
    EXPECT_EQ(Sha256(std::string(n, 'x')).size(), 32u);
  }
}

}  // namespace
}  // namespace cgov
