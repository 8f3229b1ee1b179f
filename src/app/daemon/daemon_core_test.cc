// The daemon's core without the binary: a fake clock, the shared box's files in a fake file
// reader, the fake driver (a real dlopen), and modules that record what they were asked. A
// tick, a reload, a failing module, a period.
#include "app/daemon/daemon_core.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/fake_env.h"
#include "fakes/fake_file_reader.h"
#include "fakes/fixture_testing.h"
#include "fakes/nvml_testing.h"
#include "store/history_store.h"
#include "store/sqlite_db.h"

namespace cgov {
namespace {

// bob's notebook (pid 42000 in the shared box) holds 8 GB of an idle A100.
constexpr char kScenario[] = R"({"driver_version": "550.54.15", "gpus": [{
  "name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
  "timeline": [{"t": 0, "util_gpu": 0, "util_mem": 0, "power_w": 60}],
  "processes": [{"pid": 42000, "type": "compute", "used_mib": 8000}]}]})";

// What a module was asked, in order, into a log the test shares between modules.
class RecordingModule : public DaemonModule {
 public:
  RecordingModule(std::string name, std::vector<std::string>* log)
      : name_(std::move(name)), log_(log) {}
  std::string_view name() const override { return name_; }
  Status Open() override { return Note("open", open_error); }
  Status Start() override { return Note("start", start_error); }
  std::chrono::milliseconds period() const override { return period_value; }
  void Periodic(int64_t now_ms) override { periodic_at.push_back(now_ms); }
  Status BeforeWrite(DaemonTick* tick) override {
    before_processes = tick->stored.processes.size();
    Status s = Note("before", before_error);
    before_error = Status::Ok();  // once
    return s;
  }
  Status AfterWrite(DaemonTick* tick) override {
    if (clock != nullptr) clock->AdvanceNs(after_takes_ns);  // as long as the test says
    written.push_back(tick->written);
    if (!tick->stored.gpus.empty()) phase = tick->phases()[0];
    return Note("after", after_error);
  }
  void Reload(std::string* what) override {
    log_->push_back(name_ + ":reload");
    *what += ", " + name_ + " reloaded";
  }
  void Stop() override { log_->push_back(name_ + ":stop"); }
  void OnDaemonSelf(const DaemonSelf& self) override {
    last_self = self;
    ++selves;
  }

  Status open_error, start_error, before_error, after_error;
  FakeClock* clock = nullptr;
  int64_t after_takes_ns = 0;
  std::chrono::milliseconds period_value{0};
  std::vector<int64_t> periodic_at;
  std::vector<bool> written;
  size_t before_processes = 0;
  std::optional<Phase> phase;
  DaemonSelf last_self;
  int selves = 0;

 private:
  Status Note(const char* what, const Status& result) {
    log_->push_back(name_ + ":" + what);
    return result;
  }
  std::string name_;
  std::vector<std::string>* log_;
};

class DaemonCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(nvml_.loaded());
    ASSERT_TRUE(files_.LoadTree(testing::FixturePath("proc/shared-box"), "").ok());
    env_.set_clock(&clock_);
    env_.set_files(&files_);
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov_daemon_core_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  DaemonOptions Options() {
    DaemonOptions o;
    o.db = dir_ + "/h.db";
    o.interval = std::chrono::seconds(1);
    o.commit_every = std::chrono::milliseconds(0);
    o.nvml_lib = nvml_.path();
    o.hostname = "gpu-box";
    return o;
  }
  RecordingModule* Add(DaemonCore& core, const std::string& name) {
    auto module = std::make_unique<RecordingModule>(name, &log_);
    RecordingModule* raw = module.get();
    core.Add(std::move(module));
    return raw;
  }
  // The history file moved away (as a restore or a rotation does), its -wal and -shm removed:
  // the path names nothing until the daemon reopens it.
  void PutTheDatabaseAside() {
    std::filesystem::rename(dir_ + "/h.db", dir_ + "/old.db");
    std::filesystem::remove(dir_ + "/h.db-wal");
    std::filesystem::remove(dir_ + "/h.db-shm");
  }
  int64_t Ticks(const std::string& db) {
    auto opened = SqliteDb::Open(db, SqliteDb::OpenMode::kReadOnly);
    if (!opened.ok()) return -1;
    auto n = (*opened)->QueryInt("SELECT count(*) FROM tick");
    return n.ok() ? *n : -1;
  }

  testing::FakeNvml nvml_{"full", kScenario};
  FakeClock clock_;
  FakeFileReader files_;
  FakeEnv env_;  // the clock and files above
  std::string dir_;
  std::vector<std::string> log_;
};

TEST_F(DaemonCoreTest, ATickIsWrittenThenHandedToEachModuleInTheOrderAdded) {
  DaemonCore core(Options(), &env_);
  RecordingModule* a = Add(core, "a");
  RecordingModule* b = Add(core, "b");
  ASSERT_TRUE(core.Start().ok());
  EXPECT_EQ(core.context().gpu_ids().size(), 1u);
  EXPECT_EQ(core.context().hostname(), "gpu-box");
  core.Tick();
  EXPECT_EQ(log_, (std::vector<std::string>{"a:open", "b:open", "a:start", "b:start", "a:before",
                                            "b:before", "a:after", "b:after"}));
  EXPECT_EQ(a->before_processes, 1u) << "the modules see the stored tick before it is written";
  EXPECT_EQ(b->written, std::vector<bool>{true});
  EXPECT_EQ(b->phase, Phase::kIdleHeld) << "the tick's GPUs classified for the modules";
  EXPECT_EQ(core.ticks_written(), 1);
  ASSERT_TRUE(core.Stop().ok());
  EXPECT_EQ(log_.back(), "b:stop");
  EXPECT_EQ(Ticks(dir_ + "/h.db"), 1);
}

// cgov_collector_duration_seconds: the core's four steps, then each module by name, in the order
// added; every tick writes its own figures over the last tick's.
TEST_F(DaemonCoreTest, EachTickPublishesItsOwnDurationsByCollector) {
  DaemonCore core(Options(), &env_);
  RecordingModule* a = Add(core, "a");
  RecordingModule* b = Add(core, "b");
  b->clock = &clock_;
  ASSERT_TRUE(core.Start().ok());
  const std::vector<std::string> names = {"nvml", "gpu_processes", "procfs", "history_db", "a",
                                          "b"};
  for (const int64_t takes_ns : {250'000'000, 0, 1'500'000'000}) {
    b->after_takes_ns = takes_ns;
    core.Tick();
    clock_.AdvanceNs(1'000'000'000);
    const auto& seconds = a->last_self.collector_seconds;
    std::vector<std::string> seen;
    for (const auto& [name, s] : seconds) seen.push_back(name);
    ASSERT_EQ(seen, names) << "after a tick whose module b took " << takes_ns << " ns";
    EXPECT_DOUBLE_EQ(seconds[5].second, static_cast<double>(takes_ns) / 1e9);
    EXPECT_DOUBLE_EQ(seconds[4].second, 0.0) << "a took no time on the fake clock";
  }
  ASSERT_TRUE(core.Stop().ok());
}

TEST_F(DaemonCoreTest, AFailingModuleIsCountedByNameAndTheOthersGoOn) {
  DaemonCore core(Options(), &env_);
  RecordingModule* a = Add(core, "a");
  RecordingModule* b = Add(core, "b");
  a->after_error = Internal("the history is full");
  env_.capture_log();
  ASSERT_TRUE(core.Start().ok());
  for (int i = 0; i < 3; ++i) {
    core.Tick();
    clock_.AdvanceNs(1'000'000'000);
  }
  EXPECT_EQ(b->written, (std::vector<bool>{true, true, true})) << "b went on";
  EXPECT_EQ(core.module_failures().at("a"), 3);
  EXPECT_EQ(core.module_failures().at("b"), 0);
  EXPECT_EQ(core.ticks_written(), 3) << "a module's failure is not the tick's";
  // The core's own state, handed to every module after Start and each tick (what /metrics
  // serves of the daemon), and its log through the Env: the failure said once, by name, within
  // the minute.
  EXPECT_EQ(b->selves, 4);
  EXPECT_EQ(b->last_self.ticks, 3);
  EXPECT_EQ(b->last_self.failed_ticks, 0);
  EXPECT_EQ(b->last_self.module_failures, (std::map<std::string, int64_t>{{"a", 3}, {"b", 0}}));
  EXPECT_TRUE(b->last_self.history_db_ok);
  int said = 0;
  for (const auto& [level, line] : env_.logged()) {
    if (level == LogLevel::kError && line.find("a: the history is full") != std::string::npos) {
      ++said;
    }
  }
  EXPECT_EQ(said, 1) << "at most once a minute";
  ASSERT_TRUE(core.Stop().ok());
  EXPECT_EQ(Ticks(dir_ + "/h.db"), 3);
}

TEST_F(DaemonCoreTest, ABeforeWriteErrorFailsThatTickOnlyAndTheModulesAreTold) {
  DaemonCore core(Options(), &env_);
  RecordingModule* a = Add(core, "a");
  RecordingModule* b = Add(core, "b");
  a->before_error = Internal("the dictionary is locked");
  ASSERT_TRUE(core.Start().ok());
  core.Tick();
  clock_.AdvanceNs(1'000'000'000);
  core.Tick();
  EXPECT_EQ(b->written, (std::vector<bool>{false, true}));
  EXPECT_EQ(std::count(log_.begin(), log_.end(), "b:before"), 1) << "not after a's error";
  EXPECT_EQ(core.ticks_failed(), 1);
  EXPECT_EQ(core.ticks_written(), 1);
  ASSERT_TRUE(core.Stop().ok());
  EXPECT_EQ(Ticks(dir_ + "/h.db"), 1);
}

TEST_F(DaemonCoreTest, AModuleThatCannotStartStopsTheDaemonWithItsReason) {
  DaemonCore core(Options(), &env_);
  Add(core, "a")->start_error = InvalidArgument("--a: no such file");
  RecordingModule* b = Add(core, "b");
  Status started = core.Start();
  EXPECT_EQ(started.message(), "--a: no such file");
  EXPECT_EQ(std::count(log_.begin(), log_.end(), "b:start"), 0);
  EXPECT_TRUE(b->written.empty());
}

TEST_F(DaemonCoreTest, PeriodicRunsAtTheModulesStatedPeriodFromTheFirstTick) {
  DaemonCore core(Options(), &env_);
  RecordingModule* a = Add(core, "a");
  a->period_value = std::chrono::minutes(1);
  ASSERT_TRUE(core.Start().ok());
  const int64_t start_ms = clock_.WallNs() / 1'000'000;
  for (int i = 0; i < 7; ++i) {  // every 20 s: 0, 20, ..., 120 s
    core.Tick();
    clock_.AdvanceNs(20'000'000'000);
  }
  EXPECT_EQ(a->periodic_at,
            (std::vector<int64_t>{start_ms, start_ms + 60'000, start_ms + 120'000}));
  ASSERT_TRUE(core.Stop().ok());
}

// SIGHUP after the file was moved away (a restore, a rotation): the history is reopened at its
// path, the run goes on there, and every module reloads after the core.
TEST_F(DaemonCoreTest, AReloadReopensTheHistoryAtItsPathAndReloadsEachModule) {
  DaemonCore core(Options(), &env_);
  Add(core, "a");
  Add(core, "b");
  ASSERT_TRUE(core.Start().ok());
  core.Tick();
  PutTheDatabaseAside();
  log_.clear();
  core.Reload();
  EXPECT_EQ(log_, (std::vector<std::string>{"a:reload", "b:reload"}));
  clock_.AdvanceNs(1'000'000'000);
  core.Tick();
  ASSERT_TRUE(core.Stop().ok());
  EXPECT_EQ(Ticks(dir_ + "/h.db"), 1) << "the tick after the reload went to the path";
  EXPECT_EQ(core.ticks_written(), 2);
}

// The history's identity ids name the records of the file they were read from: a file put in
// the database's place numbers them afresh, and a module asking what an id names is told the new
// file's record. bob's notebook was id 2 (mallory's came first); in the new, empty file it is
// id 1, which the old file's cache called mallory.
class IdentityModule : public DaemonModule {
 public:
  explicit IdentityModule(DaemonContext* d) : d_(*d) {}
  std::string_view name() const override { return "identities"; }
  Status AfterWrite(DaemonTick* tick) override {
    for (const StoredProcess& p : tick->stored.processes) {
      const IdentityRecord* r = d_.IdentityOf(p.identity_id);
      users.push_back(r == nullptr ? "?" : r->user);
    }
    return Status::Ok();
  }
  std::vector<std::string> users;

 private:
  DaemonContext& d_;
};

TEST_F(DaemonCoreTest, AReplacedDatabasesIdentityIdsAreReadFromIt) {
  {
    auto store = HistoryStore::Open(dir_ + "/h.db", HistoryStore::Mode::kWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    IdentityRecord mallory;
    mallory.user = "mallory";
    ASSERT_EQ((*store)->IdentityId(mallory).value(), 1u);
  }
  DaemonCore core(Options(), &env_);
  auto module = std::make_unique<IdentityModule>(&core.context());
  IdentityModule* seen = module.get();
  core.Add(std::move(module));
  ASSERT_TRUE(core.Start().ok());
  core.Tick();
  PutTheDatabaseAside();
  core.Reload();
  clock_.AdvanceNs(1'000'000'000);
  core.Tick();
  ASSERT_TRUE(core.Stop().ok());
  EXPECT_EQ(seen->users, (std::vector<std::string>{"bob", "bob"}));
  auto fresh = HistoryStore::Open(dir_ + "/h.db", HistoryStore::Mode::kRead);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->Identities()->at(1).user, "bob") << "the new file numbers bob 1";
}

}  // namespace
}  // namespace cgov
