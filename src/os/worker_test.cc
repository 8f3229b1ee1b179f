#include "os/worker.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace cgov {
namespace {

using std::chrono::milliseconds;

// Polls `done` for up to 10 s (a loaded CI machine), so that the tests bound what they wait for
// without timing anything.
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 1000 && !done(); ++i) std::this_thread::sleep_for(milliseconds(10));
  return done();
}

TEST(Worker, AStepAsksForItsNextWaitAndAWakeCallsItAtOnce) {
  std::atomic<int> calls{0};
  Worker w;
  ASSERT_TRUE(w.Start("test-worker", Worker::Wait(0), [&] {
                 ++calls;
                 return Worker::kUntilWoken;
               }).ok());
  ASSERT_TRUE(Eventually([&] { return calls == 1; })) << "called at once";
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(calls, 1) << "then only when woken";
  w.Wake();
  ASSERT_TRUE(Eventually([&] { return calls == 2; }));
  w.Stop();
  w.Wake();
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(calls, 2) << "nothing after Stop";
}

TEST(Worker, APeriodicStepRunsAgainAfterTheWaitItAskedFor) {
  std::atomic<int> calls{0};
  Worker w;
  ASSERT_TRUE(w.Start("test-periodic", milliseconds(1), [&] {
                 ++calls;
                 return milliseconds(1);
               }).ok());
  EXPECT_TRUE(Eventually([&] { return calls >= 5; }));
}

// A wake that comes while the step runs is not lost: the step runs once more after it.
TEST(Worker, AWakeDuringAStepCallsItOnceMore) {
  std::atomic<int> calls{0};
  std::atomic<bool> inside{false}, release{false};
  Worker w;
  ASSERT_TRUE(w.Start("test-wake", Worker::Wait(0), [&] {
                 if (++calls == 1) {
                   inside = true;
                   while (!release) std::this_thread::sleep_for(milliseconds(1));
                 }
                 return Worker::kUntilWoken;
               }).ok());
  ASSERT_TRUE(Eventually([&] { return inside.load(); }));
  w.Wake();
  release = true;
  EXPECT_TRUE(Eventually([&] { return calls == 2; }));
}

// A step sleeping in a long back-off ends as soon as Stop() is asked; RequestStop() returns
// without waiting for it.
TEST(Worker, StopEndsASleepingStepAtOnceAndRequestStopDoesNotWait) {
  std::atomic<bool> sleeping{false}, stopped_sleep{false};
  Worker w;
  ASSERT_TRUE(w.Start("test-sleep", Worker::Wait(0), [&] {
                 sleeping = true;
                 stopped_sleep = w.Sleep(std::chrono::hours(1));
                 return Worker::kUntilWoken;
               }).ok());
  ASSERT_TRUE(Eventually([&] { return sleeping.load(); }));
  w.RequestStop();
  EXPECT_TRUE(w.stopping());
  EXPECT_TRUE(w.stop_flag().load());
  const auto before = std::chrono::steady_clock::now();
  w.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
  EXPECT_TRUE(stopped_sleep) << "Sleep said it was stopping";
  w.Stop();  // idempotent
}

// A recorder whose job ended before its thread began still gets its one step (its summary):
// Stop() right after Start() usually comes before the thread runs, and the step runs once
// whichever came first.
TEST(Worker, AStepDueAtOnceRunsEvenWhenStopCameFirst) {
  for (int i = 0; i < 20; ++i) {
    std::atomic<int> calls{0};
    Worker w;
    ASSERT_TRUE(w.Start("test-first", Worker::Wait(0), [&] {
                   ++calls;
                   return Worker::kUntilWoken;
                 }).ok());
    w.Stop();
    EXPECT_EQ(calls, 1) << "try " << i;
  }
}

}  // namespace
}  // namespace cgov
