#include "os/process_exit_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace cgov {
namespace {

// The real pidfd watch on a real child: alive is not exited; killed (and reaped, so its pid may
// be reused) it is, once.
TEST(PidfdExitWatch, TellsAWatchedChildsExitOnce) {
  auto watch = NewPidfdExitWatch();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  if (!watch->Watch(static_cast<uint32_t>(child))) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    GTEST_SKIP() << "no pidfd_open here (Linux < 5.3, or a sandbox refuses it)";
  }
  EXPECT_TRUE(watch->TakeExited().empty()) << "alive";
  kill(child, SIGKILL);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  EXPECT_EQ(watch->TakeExited(), std::vector<uint32_t>{static_cast<uint32_t>(child)});
  EXPECT_TRUE(watch->TakeExited().empty()) << "told once";
  EXPECT_FALSE(watch->Watch(static_cast<uint32_t>(child))) << "gone: cannot be watched";
  // Forgotten: never told.
  const pid_t other = fork();
  ASSERT_GE(other, 0);
  if (other == 0) _exit(0);
  const bool watched = watch->Watch(static_cast<uint32_t>(other));
  watch->Forget(static_cast<uint32_t>(other));
  waitpid(other, nullptr, 0);
  if (watched) {
    EXPECT_TRUE(watch->TakeExited().empty());
  }
}

}  // namespace
}  // namespace cgov
