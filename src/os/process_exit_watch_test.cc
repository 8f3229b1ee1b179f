#include "os/process_exit_watch.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

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

// Issue 64: one epoll set. Of 100 watched children, the 70 that exit (more than one batch of
// events) are told, each once, and only they; one forgotten after it exited is not told.
TEST(PidfdExitWatch, TellsExactlyTheExitedOnesAmongMany) {
  auto watch = NewPidfdExitWatch();
  std::vector<pid_t> children;
  for (int i = 0; i < 100; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      pause();
      _exit(0);
    }
    children.push_back(child);
    if (!watch->Watch(static_cast<uint32_t>(child))) {
      for (pid_t c : children) kill(c, SIGKILL);
      for (pid_t c : children) waitpid(c, nullptr, 0);
      GTEST_SKIP() << "no pidfd_open here";
    }
  }
  EXPECT_TRUE(watch->Watch(static_cast<uint32_t>(children[0]))) << "already watched";
  std::vector<uint32_t> killed;
  for (size_t i = 0; i < 71; ++i) {
    kill(children[i], SIGKILL);
    waitpid(children[i], nullptr, 0);
    killed.push_back(static_cast<uint32_t>(children[i]));
  }
  watch->Forget(killed.back());  // exited, then forgotten: not told
  killed.pop_back();
  std::vector<uint32_t> told = watch->TakeExited();
  std::sort(told.begin(), told.end());
  std::sort(killed.begin(), killed.end());
  EXPECT_EQ(told, killed);
  EXPECT_TRUE(watch->TakeExited().empty()) << "told once";
  for (size_t i = 71; i < children.size(); ++i) kill(children[i], SIGKILL);
  for (size_t i = 71; i < children.size(); ++i) waitpid(children[i], nullptr, 0);
  EXPECT_EQ(watch->TakeExited().size(), 29u);
}

}  // namespace
}  // namespace cgov
