#include "os/rooted_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "scratch_dir.h"

namespace cgov {
namespace {

namespace fs = std::filesystem;

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string ReadFd(int fd) {
  std::string out(256, '\0');
  const ssize_t n = pread(fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

// A process's root (`root`) beside a file it must never reach (`outside/secret`).
struct Box {
  ScratchDir dir;
  std::string root = dir.path() + "/root";
  std::string secret = dir.path() + "/outside/secret";
  Box() {
    fs::create_directories(root + "/jobs");
    fs::create_directories(dir.path() + "/outside");
    WriteText(secret, "host secret\n");
    WriteText(root + "/jobs/progress.log", "12 samples\n");
  }
};

TEST(OpenInRoot, ReadsAFileInsideTheRoot) {
  Box box;
  Result<OpenedFile> f = OpenInRoot(box.root, "/jobs/progress.log", std::nullopt);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(ReadFd(f->fd()), "12 samples\n");
}

// Issue 58, 1: a symlink inside the container resolved against the daemon's root read the
// host's files; a plain chroot's "/../../.." escaped with no symlink.
TEST(OpenInRoot, ASymlinkOrDotDotNeverLeavesTheRoot) {
  Box box;
  fs::create_symlink("/", box.root + "/x");
  for (const std::string& path : {"/x" + box.secret, "/../../../../../../../../../.." + box.secret,
                                  "/jobs/../../../../../../../../.." + box.secret}) {
    Result<OpenedFile> f = OpenInRoot(box.root, path, std::nullopt);
    EXPECT_FALSE(f.ok()) << path << " read " << (f.ok() ? ReadFd(f->fd()) : "");
    if (!f.ok()) {
      EXPECT_EQ(f.status().code(), StatusCode::kNotFound) << f.status().message();
    }
  }
  // The same link inside the root names the root's own file.
  fs::create_directories(box.root + box.dir.path() + "/outside");
  WriteText(box.root + box.secret, "the container's own\n");
  Result<OpenedFile> f = OpenInRoot(box.root, "/x" + box.secret, std::nullopt);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(ReadFd(f->fd()), "the container's own\n");
}

TEST(OpenInRoot, TheLastComponentIsNeverALinkAndMagicLinksAreRefused) {
  Box box;
  fs::create_symlink("/jobs/progress.log", box.root + "/jobs/link.log");
  Result<OpenedFile> link = OpenInRoot(box.root, "/jobs/link.log", std::nullopt);
  ASSERT_FALSE(link.ok());
  EXPECT_NE(link.status().message().find("a symlink (not followed)"), std::string::npos)
      << link.status().message();
  // /proc/self/root inside a root that is the real / : a magic link, never followed.
  Result<OpenedFile> magic = OpenInRoot("/", "/proc/self/root" + box.secret, std::nullopt);
  EXPECT_FALSE(magic.ok());
  // A directory, a FIFO: not regular files (and a FIFO never blocks the caller).
  EXPECT_FALSE(OpenInRoot(box.root, "/jobs", std::nullopt).ok());
  ASSERT_EQ(mkfifo((box.root + "/jobs/fifo").c_str(), 0644), 0);
  Result<OpenedFile> fifo = OpenInRoot(box.root, "/jobs/fifo", std::nullopt);
  ASSERT_FALSE(fifo.ok());
  EXPECT_NE(fifo.status().message().find("not a regular file"), std::string::npos);
}

TEST(OpenInRoot, ErrorsShowThePathEscapedNeverTheContent) {
  Box box;
  fs::create_symlink(box.secret, box.root + "/jobs/\x1b]0;x\x07.log");
  Result<OpenedFile> f = OpenInRoot(box.root, "/jobs/\x1b]0;x\x07.log", std::nullopt);
  ASSERT_FALSE(f.ok());
  const std::string message(f.status().message());
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_NE(message.find("\\x1b]0;x\\x07.log"), std::string::npos) << message;
  EXPECT_EQ(message.find("host secret"), std::string::npos) << message;
}

// The open runs with the owner's rights: a root daemon reads only what the owner could.
TEST(OpenInRoot, OpensWithTheOwnersRights) {
  if (geteuid() != 0) GTEST_SKIP() << "changing the file-system uid needs root";
  Box box;
  const std::string locked = box.root + "/locked";
  fs::create_directories(locked);
  WriteText(locked + "/progress.log", "7\n");
  ASSERT_EQ(chown((locked + "/progress.log").c_str(), 1001, 1001), 0);
  ASSERT_EQ(chmod(locked.c_str(), 0700), 0);  // root's directory: 1001 cannot enter it
  Result<OpenedFile> as_owner = OpenInRoot(box.root, "/locked/progress.log", FileOwner{1001, 1001});
  ASSERT_FALSE(as_owner.ok());
  EXPECT_NE(as_owner.status().message().find("may not read it"), std::string::npos)
      << as_owner.status().message();
  EXPECT_TRUE(OpenInRoot(box.root, "/locked/progress.log", FileOwner{0, 0}).ok());
  // And the thread has its own rights back afterwards (open(2) checks the fsuid; access(2)
  // would check the real uid).
  const int fd = ::open((locked + "/progress.log").c_str(), O_RDONLY);
  EXPECT_GE(fd, 0) << "this thread kept the owner's rights";
  if (fd >= 0) ::close(fd);
}

}  // namespace
}  // namespace cgov
