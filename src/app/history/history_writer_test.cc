#include "app/history/history_writer.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "store/sqlite_db.h"

namespace cgov {
namespace {

class HistoryWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov_writer_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "h.db").string();
    auto writer = HistoryWriter::Open(path_);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    writer_ = std::move(writer).value();
    auto run = writer_->BeginRun("daemon", 0, 1000, "box");
    ASSERT_TRUE(run.ok()) << run.status().message();
    run_ = *run;
  }
  void TearDown() override {
    writer_.reset();
    std::filesystem::remove_all(dir_);
  }

  // What a second connection (a report) sees: the committed ticks.
  int64_t Committed() const {
    auto db = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadOnly);
    if (!db.ok()) return -1;
    auto count = (*db)->QueryInt("SELECT count(*) FROM tick");
    return count.ok() ? *count : -1;
  }

  static StoredTick Tick() {
    StoredTick t;
    t.cpu_pct_x10 = 120;
    StoredGpu g;
    g.gpu_id = 1;
    g.processes_known = true;
    g.set(StoredGpuField::kUtilPct, 80);
    t.gpus = {g};
    return t;
  }

  std::filesystem::path dir_;
  std::string path_;
  std::unique_ptr<HistoryWriter> writer_;
  RunRecord run_;
};

// The daemon's policy: the first tick at once, then a batch whenever the next tick would make
// the oldest uncommitted one --commit-every old; a reader never sees more than that lag.
TEST_F(HistoryWriterTest, AnAgeLimitCommitsTheFirstTickAtOnceThenABatchPerPeriod) {
  writer_->set_commit_policy({.max_ticks = 0, .max_age_ms = 10'000});
  // ts (s) of the tick after which a reader sees `committed` ticks.
  const std::vector<std::pair<int64_t, int64_t>> expected = {
      {0, 1}, {1, 1}, {9, 1}, {10, 11}, {11, 11}, {19, 11}, {20, 21}, {25, 21}};
  size_t next = 0;
  for (int64_t s = 0; s <= 25; ++s) {
    Result<bool> appended = writer_->Append(s * 1000, run_, Tick());
    ASSERT_TRUE(appended.ok() && *appended) << "tick " << s << ": " << appended.status().message();
    if (next < expected.size() && expected[next].first == s) {
      EXPECT_EQ(Committed(), expected[next].second) << "after the tick at " << s << " s";
      ++next;
    }
  }
  EXPECT_EQ(writer_->uncommitted_ticks(), 5);
  ASSERT_TRUE(writer_->Commit().ok());
  EXPECT_EQ(Committed(), 26) << "Commit writes what was pending";
  EXPECT_EQ(writer_->abandoned_ticks(), 0);
}

// A run ticking slower than the limit commits every tick: no tick waits for the next one.
TEST_F(HistoryWriterTest, TicksFartherApartThanTheLimitAreCommittedEachAtOnce) {
  writer_->set_commit_policy({.max_ticks = 0, .max_age_ms = 10'000});
  auto slow = writer_->BeginRun("daemon", 0, 30'000, "box");
  ASSERT_TRUE(slow.ok());
  for (int64_t k = 0; k < 4; ++k) {
    ASSERT_TRUE(writer_->Append(k * 30'000, *slow, Tick()).ok());
    EXPECT_EQ(Committed(), k + 1) << "tick " << k;
  }
}

TEST_F(HistoryWriterTest, ACountLimitCommitsEveryNTicksAndTheDestructorTheRest) {
  writer_->set_commit_policy({.max_ticks = 3});
  for (int64_t k = 0; k < 7; ++k) {
    ASSERT_TRUE(writer_->Append(k * 1000, run_, Tick()).ok());
    EXPECT_EQ(Committed(), (k + 1) / 3 * 3) << "tick " << k;
  }
  writer_.reset();
  EXPECT_EQ(Committed(), 7);
}

// A pending tick is a tick already there: importing the same source twice adds nothing, even
// within one batch.
TEST_F(HistoryWriterTest, ATickStillPendingIsNotAppendedTwice) {
  writer_->set_commit_policy({.max_ticks = 100});
  ASSERT_TRUE(*writer_->Append(1000, run_, Tick()));
  ASSERT_TRUE(*writer_->Append(2000, run_, Tick()));
  Result<bool> again = writer_->Append(1000, run_, Tick());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(*again);
  Result<bool> earlier = writer_->Append(500, run_, Tick());
  EXPECT_FALSE(earlier.ok()) << "a new tick before the last one is still an error";
  EXPECT_EQ(writer_->uncommitted_ticks(), 2);
}

// A batch whose write fails is lost whole: the ticks reported as appended before are counted
// as abandoned (the daemon counts them as failed), the failing tick is the caller's to count.
TEST_F(HistoryWriterTest, AFailedBatchCountsTheTicksItTookWithIt) {
  writer_->set_commit_policy({.max_ticks = 3});
  ASSERT_TRUE(writer_->Append(1000, run_, Tick()).ok());
  ASSERT_TRUE(writer_->Append(2000, run_, Tick()).ok());
  {
    auto other = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE((*other)->Exec("DROP TABLE tick").ok());  // the batch's INSERT now fails
  }
  Result<bool> third = writer_->Append(3000, run_, Tick());
  EXPECT_FALSE(third.ok());
  EXPECT_NE(third.status().message().find("tick"), std::string::npos) << third.status().message();
  EXPECT_EQ(writer_->abandoned_ticks(), 2);
  EXPECT_EQ(writer_->uncommitted_ticks(), 0);
}

}  // namespace
}  // namespace cgov
