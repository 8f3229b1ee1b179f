#include "store/history_store.h"

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/time_format.h"
#include "file_size_limit.h"
#include "store/sqlite_db.h"
#include "store/tick_record.h"

namespace cgov {
namespace {

StoredTick SampleTick() {
  StoredTick t;
  t.cpu_pct_x10 = 455;
  t.mem_used_pct_x10 = 0;
  StoredGpu a;
  a.gpu_id = 1;
  a.processes_known = true;
  a.set(StoredGpuField::kUtilPct, 97);
  a.set(StoredGpuField::kMemUsedMib, 71680);
  a.set(StoredGpuField::kClockReasons, 0x20);
  StoredGpu b;
  b.gpu_id = 300;
  b.lost = true;
  t.gpus = {a, b};
  StoredProcess p;
  p.gpu_pos = 0;
  p.pid = 4'000'000;
  p.compute = true;
  p.identity_id = 7;
  p.command_id = 2;
  p.mem_used_mib = 70000;
  StoredProcess q = p;
  q.pid = 5;
  q.graphics = true;
  q.compute = false;
  q.mem_used_mib.reset();
  q.sm_util_pct = 0;
  t.processes = {q, p};
  return t;
}

TEST(TickRecord, RoundTripsEveryFieldAndUnknowns) {
  const StoredTick t = SampleTick();
  std::string data;
  EncodeTick(t, &data);
  StoredTick back;
  ASSERT_TRUE(DecodeTick(data, "row", &back).ok());
  EXPECT_EQ(back.cpu_pct_x10, t.cpu_pct_x10);
  EXPECT_FALSE(back.iowait_pct_x10.has_value());
  EXPECT_EQ(back.mem_used_pct_x10, 0u) << "zero is known, not unknown";
  ASSERT_EQ(back.gpus.size(), 2u);
  EXPECT_EQ(back.gpus[0].fields, t.gpus[0].fields);
  EXPECT_TRUE(back.gpus[1].lost);
  EXPECT_EQ(back.gpus[1].gpu_id, 300u);
  ASSERT_EQ(back.processes.size(), 2u);
  EXPECT_EQ(back.processes[1].pid, 4'000'000u);
  EXPECT_EQ(back.processes[1].mem_used_mib, 70000u);
  EXPECT_FALSE(back.processes[0].mem_used_mib.has_value());
  EXPECT_EQ(back.processes[0].sm_util_pct, 0u);
  EXPECT_TRUE(back.processes[0].graphics);
  // Compact: a few bytes per field, not a column per field.
  EXPECT_LT(data.size(), 40u) << data.size();
}

// Every value at its widest (ten-byte varints), after what the string held: the room the encoder
// makes beforehand is enough, and what was there stays.
TEST(TickRecord, TheWidestValuesRoundTripAfterWhatTheStringHeld) {
  StoredTick t;
  t.cpu_pct_x10 = t.iowait_pct_x10 = t.mem_used_pct_x10 = UINT32_MAX;
  for (uint32_t i = 0; i < 3; ++i) {
    StoredGpu g;
    g.gpu_id = UINT32_MAX - i;
    g.lost = i == 1;
    g.processes_known = true;
    for (auto& f : g.fields) f = UINT64_MAX;
    t.gpus.push_back(g);
  }
  for (uint32_t k = 0; k < 40; ++k) {
    StoredProcess p;
    p.gpu_pos = k % 3;
    p.pid = UINT32_MAX - k;
    p.identity_id = p.command_id = UINT32_MAX;
    p.compute = p.graphics = true;
    p.mem_used_mib = p.sm_util_pct = UINT32_MAX;
    t.processes.push_back(p);
  }
  t.allocations = {{2, UINT32_MAX}, {0, 1}};
  std::string data = "prefix";
  EncodeTick(t, &data);
  ASSERT_EQ(data.substr(0, 6), "prefix");
  StoredTick back;
  ASSERT_TRUE(DecodeTick(std::string_view(data).substr(6), "row", &back).ok());
  EXPECT_EQ(back.cpu_pct_x10, t.cpu_pct_x10);
  EXPECT_EQ(back.mem_used_pct_x10, t.mem_used_pct_x10);
  ASSERT_EQ(back.gpus.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.gpus[i].fields, t.gpus[i].fields);
    EXPECT_EQ(back.gpus[i].gpu_id, t.gpus[i].gpu_id);
    EXPECT_EQ(back.gpus[i].lost, t.gpus[i].lost);
  }
  ASSERT_EQ(back.processes.size(), 40u);
  for (size_t k = 0; k < 40; ++k) {
    EXPECT_EQ(back.processes[k].pid, t.processes[k].pid);
    EXPECT_EQ(back.processes[k].mem_used_mib, t.processes[k].mem_used_mib);
    EXPECT_EQ(back.processes[k].sm_util_pct, t.processes[k].sm_util_pct);
  }
  EXPECT_EQ(back.allocations, t.allocations);
}

// A GPU allocated to a pod (cgov daemon --pod-resources) travels with the tick; a tick without
// allocations encodes as history schema 5 wrote it, byte for byte.
TEST(TickRecord, AllocationsRoundTripAndCostNothingWhenAbsent) {
  StoredTick t = SampleTick();
  std::string without;
  EncodeTick(t, &without);
  t.allocations = {{0, 9}, {1, 3}};
  std::string with;
  EncodeTick(t, &with);
  EXPECT_EQ(with.size(), without.size() + 5) << "count and two pairs of one-byte varints";
  StoredTick back;
  ASSERT_TRUE(DecodeTick(with, "row", &back).ok());
  EXPECT_EQ(back.allocations, t.allocations);
  EXPECT_EQ(back.processes.size(), 2u);
  ASSERT_TRUE(DecodeTick(without, "row", &back).ok());
  EXPECT_TRUE(back.allocations.empty());
  for (size_t cut = without.size(); cut < with.size(); ++cut) {
    EXPECT_FALSE(DecodeTick(std::string_view(with).substr(0, cut), "t", &back).ok()) << cut;
  }
  t.allocations = {{2, 1}};  // the tick lists two GPUs
  EncodeTick(t, &(with = {}));
  EXPECT_NE(DecodeTick(with, "t", &back).message().find("allocation of a GPU"), std::string::npos);
}

TEST(TickRecord, MalformedDataIsAnErrorThatNamesTheRow) {
  std::string data;
  EncodeTick(SampleTick(), &data);
  StoredTick back;
  for (size_t cut = 0; cut < data.size(); ++cut) {
    Status s = DecodeTick(std::string_view(data).substr(0, cut), "tick 42", &back);
    EXPECT_FALSE(s.ok()) << "truncated at " << cut;
    EXPECT_NE(s.message().find("tick 42"), std::string::npos) << s.message();
  }
  std::string versioned = data;
  versioned[0] = 9;
  EXPECT_NE(DecodeTick(versioned, "t", &back).message().find("version 9"), std::string::npos);
  EXPECT_FALSE(DecodeTick(data + "x", "t", &back).ok()) << "trailing bytes";
}

class HistoryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cgov-store-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "h.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(HistoryStoreTest, WritesAndReadsBackTicksDictionariesAndRollups) {
  {
    auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    HistoryStore& s = **store;
    ASSERT_TRUE(s.Begin().ok());
    auto gpu = s.GpuId({0, "GPU-a", 0, "H100", 81559, "00:18", "", {}});
    ASSERT_TRUE(gpu.ok());
    EXPECT_EQ(*s.GpuId({0, "GPU-a", 0, "H100", 81559, "00:18", "", {}}), *gpu)
        << "dictionary: same id";
    IdentityRecord alice;
    alice.user = "alice";
    alice.project = "llm";
    auto id = s.IdentityId(alice);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*s.IdentityId(alice), *id);
    auto run = s.BeginRun("daemon", 1000, 1000, "box");
    ASSERT_TRUE(run.ok());
    EXPECT_TRUE(*s.AppendTick(1000, run->id, SampleTick()));
    EXPECT_FALSE(*s.AppendTick(1000, run->id, SampleTick())) << "a tick is written once";
    EXPECT_TRUE(*s.AppendTick(2000, run->id, SampleTick()));
    ASSERT_TRUE(s.PutRollup({5, 0, *gpu, "x"}).ok());
    ASSERT_TRUE(s.PutRollup({5, *id, *gpu, "y"}).ok());
    ASSERT_TRUE(s.SetWatermark(6 * kHourMs).ok());
    ASSERT_TRUE(s.Commit().ok());
  }
  auto store = HistoryStore::Open(path_, HistoryStore::Mode::kRead);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ((*store)->watermark_ms(), 6 * kHourMs);
  auto range = (*store)->TickRange();
  ASSERT_TRUE(range.ok() && range->has_value());
  EXPECT_EQ((*range)->first, 1000);
  EXPECT_EQ((*range)->second, 2000);
  int ticks = 0;
  ASSERT_TRUE((*store)
                  ->ForEachTick(0, 1500,
                                [&](int64_t ts, uint32_t, const StoredTick& t) {
                                  EXPECT_EQ(ts, 1000);
                                  EXPECT_EQ(t.processes.size(), 2u);
                                  ++ticks;
                                  return Status::Ok();
                                })
                  .ok());
  EXPECT_EQ(ticks, 1) << "the window's end is exclusive";
  std::vector<std::string> rows;
  for (bool identities : {false, true}) {
    ASSERT_TRUE((*store)
                    ->ForEachRollup(0, 10, identities,
                                    [&](const RollupRow& r) {
                                      rows.push_back(r.data);
                                      return Status::Ok();
                                    })
                    .ok());
  }
  EXPECT_EQ(rows, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ((*store)->Identities()->begin()->second.project, "llm");
}

// Issue 46 item 7: `cgov run --db` refused on a full disk left a 0-byte database behind. A
// writer that created the file and failed removes it (a file-size limit stands in for the
// full disk); one that was there before is left as it was.
TEST_F(HistoryStoreTest, AWriterThatCreatedTheFileAndFailedLeavesNothingBehind) {
  Result<std::unique_ptr<HistoryStore>> failed = InvalidArgument("not tried");
  {
    test_support::FileSizeLimit none(0);
    ASSERT_TRUE(none.ok());
    failed = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  }
  ASSERT_FALSE(failed.ok());
  EXPECT_FALSE(std::filesystem::exists(path_)) << failed.status().message();
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    EXPECT_FALSE(std::filesystem::exists(path_ + suffix)) << suffix;
  }
  // An empty file that was there before is someone's: left.
  std::ofstream(path_).close();
  {
    test_support::FileSizeLimit none(0);
    failed = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  }
  EXPECT_FALSE(failed.ok());
  EXPECT_TRUE(std::filesystem::exists(path_));
  // And with room, a writer creates it as before.
  std::filesystem::remove(path_);
  EXPECT_TRUE(HistoryStore::Open(path_, HistoryStore::Mode::kWrite).ok());
}

TEST_F(HistoryStoreTest, ASecondWriterIsRefusedReadersAreNot) {
  auto first = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_TRUE(first.ok());
  auto second = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("another cgov is writing"), std::string::npos);
  EXPECT_NE(second.status().message().find("pid " + std::to_string(getpid())), std::string::npos)
      << second.status().message();
  EXPECT_TRUE(HistoryStore::Open(path_, HistoryStore::Mode::kRead).ok());
  first->reset();
  EXPECT_TRUE(HistoryStore::Open(path_, HistoryStore::Mode::kWrite).ok()) << "lock released";
}

// Issue 44: a reader does not look at every page on open (a report over an hour of a year's
// history read the whole year); a corrupt page it does read is SQLite's error, said as corruption
// with the salvage advice. A writer still checks every page before its first write.
TEST_F(HistoryStoreTest, AReaderMeetsCorruptionWhereItReadsAndAWriterBeforeItWrites) {
  {
    auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto run = (*store)->BeginRun("daemon", 0, 1000, "box");
    for (int64_t t = 1; t <= 400; ++t) {
      StoredTick tick;
      tick.cpu_pct_x10 = static_cast<uint32_t>(t);
      ASSERT_TRUE((*store)->AppendTick(t * 1000, run->id, tick).ok());
    }
  }
  int64_t page_size = 0, root = 0;
  {
    auto db = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
    page_size = *(*db)->QueryInt("PRAGMA page_size");
    root = *(*db)->QueryInt("SELECT rootpage FROM sqlite_schema WHERE name = 'tick'");
  }
  ASSERT_GT(root, 1);
  {
    std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp((root - 1) * page_size);
    const std::string garbage(64, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto reader = HistoryStore::Open(path_, HistoryStore::Mode::kRead);
  ASSERT_TRUE(reader.ok()) << "the tick table is not read on open: " << reader.status().message();
  EXPECT_FALSE((*reader)->fully_checked());
  Status read = (*reader)->ForEachTick(
      0, 1'000'000, [](int64_t, uint32_t, const StoredTick&) { return Status::Ok(); });
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.message().rfind(
                path_ +
                    ": the database is corrupt (SQLite: database disk image is malformed); nothing "
                    "was written. Keep a copy, then salvage what is readable with `sqlite3 " +
                    path_ + " .recover",
                0),
            0u)
      << read.message();
  reader->reset();
  auto writer = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_FALSE(writer.ok());
  EXPECT_NE(writer.status().message().find(": the database is corrupt (SQLite quick_check: "),
            std::string::npos)
      << writer.status().message();
}

TEST_F(HistoryStoreTest, ForeignOrCorruptOrNewerDatabasesAreLeftUntouched) {
  { std::ofstream(path_) << "not a database at all, just text\n"; }
  auto text = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.status().message().find("not a SQLite database"), std::string::npos);
  EXPECT_EQ(std::filesystem::file_size(path_), 33u) << "nothing overwritten";

  const std::string other = (dir_ / "other.db").string();
  {
    auto db = SqliteDb::Open(other, SqliteDb::OpenMode::kCreate);
    ASSERT_TRUE((*db)->Exec("CREATE TABLE gpu_sample (ts TEXT)").ok());
  }
  auto foreign = HistoryStore::Open(other, HistoryStore::Mode::kWrite);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("not a Cost Governor history"), std::string::npos);

  ASSERT_TRUE(HistoryStore::Open(path_ + ".new", HistoryStore::Mode::kWrite).ok());
  {
    auto db = SqliteDb::Open(path_ + ".new", SqliteDb::OpenMode::kReadWrite);
    ASSERT_TRUE((*db)->Exec("PRAGMA user_version = 99").ok());
  }
  auto newer = HistoryStore::Open(path_ + ".new", HistoryStore::Mode::kRead);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("newer cgov"), std::string::npos);
  EXPECT_FALSE(HistoryStore::Open(dir_ / "missing.db", HistoryStore::Mode::kRead).ok());
}

// Regression for the schema-2 and -3 upgrades: a database an older cgov wrote (version 1: no
// gpu_event, no MIG columns) is read as it is, and the first writer migrates it in place, ticks
// and GPUs kept.
TEST_F(HistoryStoreTest, AVersionOneDatabaseIsReadAndThenMigratedByTheWriter) {
  {
    auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
    ASSERT_TRUE(store.ok());
    auto run = (*store)->BeginRun("daemon", 0, 1000, "box");
    ASSERT_TRUE((*store)->AppendTick(1000, run->id, {}).ok());
    ASSERT_TRUE((*store)->GpuId({0, "GPU-a", 0, "NVIDIA H100", 81920, "", "", {}}).ok());
    SessionRecord old;
    old.gpu_id = 1;
    old.pid = 42;
    old.end_ms = 9000;
    old.held_ms = old.idle_held_ms = 5000;
    ASSERT_TRUE((*store)->PutSession(old).ok());
  }
  {
    auto db = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadWrite);
    std::string v1 =
        "DROP TABLE gpu_event; DROP TABLE gpu_price; DROP TABLE kube_pod; DROP TABLE "
        "kube_container; DROP TABLE policy_action; PRAGMA user_version = 1;";
    for (const char* column : {"mig_profile", "gpu_instance_id", "compute_instance_id",
                               "mig_slices", "parent_uuid", "parent_name", "price_share"}) {
      v1 += std::string(" ALTER TABLE gpu DROP COLUMN ") + column + ";";
    }
    v1 += " ALTER TABLE session DROP COLUMN idle_held_share_ms;";
    ASSERT_TRUE((*db)->Exec(v1).ok());
  }
  {
    auto reader = HistoryStore::Open(path_, HistoryStore::Mode::kRead);
    ASSERT_TRUE(reader.ok()) << reader.status().message();
    auto events = (*reader)->Events(0, 10'000);
    ASSERT_TRUE(events.ok()) << events.status().message();
    EXPECT_TRUE(events->empty());
    auto gpus = (*reader)->Gpus();
    ASSERT_TRUE(gpus.ok()) << gpus.status().message();
    ASSERT_EQ(gpus->size(), 1u);
    EXPECT_EQ((*gpus)[0].uuid, "GPU-a");
    EXPECT_FALSE((*gpus)[0].mig.has_value());
    auto prices = (*reader)->PricesAt(10'000);
    ASSERT_TRUE(prices.ok()) << prices.status().message();
    EXPECT_TRUE(prices->empty()) << "no prices recorded before schema 4";
    auto identities = (*reader)->Identities();
    ASSERT_TRUE(identities.ok()) << identities.status().message() << ": no kube tables before 5";
    auto actions = (*reader)->PolicyActions(0, 10'000);
    ASSERT_TRUE(actions.ok()) << actions.status().message() << ": no policy_action before 7";
    EXPECT_TRUE(actions->empty());
    auto sessions = (*reader)->Sessions(0, 10'000);
    ASSERT_TRUE(sessions.ok()) << sessions.status().message() << ": no share column before 9";
    ASSERT_EQ(sessions->size(), 1u);
    EXPECT_EQ((*sessions)[0].idle_held_share_ms, 5000) << "an old row's share: all its idle time";
  }
  auto writer = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  {
    SessionRecord shared;
    shared.gpu_id = 1;
    shared.pid = 43;
    shared.end_ms = 9000;
    shared.held_ms = shared.idle_held_ms = 5000;
    shared.idle_held_share_ms = 2500;
    ASSERT_TRUE((*writer)->PutSession(shared).ok());
    auto sessions = (*writer)->Sessions(0, 10'000);
    ASSERT_TRUE(sessions.ok() && sessions->size() == 2u);
    EXPECT_EQ((*sessions)[1].idle_held_share_ms, 2500) << "the share round-trips once migrated";
  }
  ASSERT_TRUE((*writer)->PutEvent({1500, 1, "xid", 79}).ok());
  auto events = (*writer)->Events(0, 10'000);
  ASSERT_TRUE(events.ok() && events->size() == 1u);
  EXPECT_EQ((*events)[0].code, 79);
  EXPECT_TRUE(*(*writer)->HasTick(1000)) << "the migration kept the ticks";
  const PolicyActionRecord action{
      1600,  "stale",       "sigterm", 1,      4242,
      "bob", "jupyter-lab", 7'200'000, "sent", "uid 1000 euid 1000 suid 1000 login 1001"};
  ASSERT_TRUE((*writer)->PutPolicyAction(action).ok());
  auto actions = (*writer)->PolicyActions(0, 10'000);
  ASSERT_TRUE(actions.ok()) << actions.status().message();
  ASSERT_EQ(actions->size(), 1u);
  EXPECT_EQ(actions->front(), action);
  EXPECT_TRUE((*writer)->PolicyActions(1601, 10'000)->empty()) << "the window's start counts";
  MigInstance mig;
  mig.gpu_instance_id = 1;
  mig.profile = "3g.40gb";
  mig.slices = 3;
  mig.parent_uuid = "GPU-b";
  mig.parent_name = "NVIDIA H100 80GB HBM3";
  mig.price_share = 0.4928;
  ASSERT_TRUE((*writer)
                  ->GpuId({0, "MIG-b1", 1, "NVIDIA H100 80GB HBM3 MIG 3g.40gb", 40192, "", "", mig})
                  .ok());
  auto gpus = (*writer)->Gpus();
  ASSERT_TRUE(gpus.ok() && gpus->size() == 2u);
  EXPECT_EQ((*gpus)[0].uuid, "GPU-a") << "kept through the migration";
  EXPECT_FALSE((*gpus)[0].mig.has_value());
  ASSERT_TRUE((*gpus)[1].mig.has_value()) << "MIG columns round-trip";
  EXPECT_EQ(*(*gpus)[1].mig, mig);
  EXPECT_EQ((*gpus)[1].Label(), "1 MIG 3g.40gb GI 1");
  writer->reset();
  auto db = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadOnly);
  EXPECT_EQ(*(*db)->QueryInt("PRAGMA user_version"), kHistorySchemaVersion);
}

// Kubernetes names sit beside the identity rows: an identity read back carries its pod's
// namespace and name and its container's name; a change of name is recorded, a repeat is not.
TEST_F(HistoryStoreTest, KubernetesNamesComeBackWithTheirIdentities) {
  auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_TRUE(store.ok());
  IdentityRecord a;
  a.user = "alice";
  a.pod = "uid-a";
  a.container = "c-a";
  a.kube_namespace = "ml";
  a.kube_pod_name = "train-0";
  a.kube_container_name = "trainer";
  IdentityRecord plain;
  plain.user = "bob";
  auto id_a = (*store)->IdentityId(a);
  auto id_plain = (*store)->IdentityId(plain);
  ASSERT_TRUE(id_a.ok() && id_plain.ok());
  ASSERT_TRUE((*store)->RecordKubeNames(a).ok());
  ASSERT_TRUE((*store)->RecordKubeNames(a).ok());
  auto all = (*store)->Identities();
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->at(*id_a).kube_namespace, "ml");
  EXPECT_EQ(all->at(*id_a).kube_pod_name, "train-0");
  EXPECT_EQ(all->at(*id_a).kube_container_name, "trainer");
  EXPECT_EQ(all->at(*id_plain).kube_pod_name, "");
  auto db = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadOnly);
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM kube_pod"), 1);
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM kube_container"), 1);
}

// Memory health is a state recorded on change: a report asks for each GPU's latest before its
// window's end, and pruning keeps that one however old it is.
TEST_F(HistoryStoreTest, TheLatestMemoryHealthOfEachGpuOutlivesPruning) {
  auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_TRUE(store.ok());
  HistoryStore& s = **store;
  ASSERT_TRUE(s.Begin().ok());
  auto a = s.GpuId({0, "GPU-a", 0, "A100", 81920, "", "", {}});
  auto b = s.GpuId({0, "GPU-b", 1, "A100", 81920, "", "", {}});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(s.PutEvent({1000, *a, "memory_health", 8}).ok());
  ASSERT_TRUE(s.PutEvent({1200, *a, "xid", 48}).ok());
  ASSERT_TRUE(s.PutEvent({1500, *b, "memory_health", 9}).ok());
  ASSERT_TRUE(s.PutEvent({2000, *a, "memory_health", 9 | (1 << 8)}).ok());
  auto latest = s.LatestEvents("memory_health", 10'000);
  ASSERT_TRUE(latest.ok()) << latest.status().message();
  ASSERT_EQ(latest->size(), 2u);
  EXPECT_EQ((*latest)[0].gpu_id, *a);
  EXPECT_EQ((*latest)[0].code, 9 | (1 << 8));
  EXPECT_EQ((*latest)[1].code, 9);
  auto earlier = s.LatestEvents("memory_health", 1800);
  ASSERT_TRUE(earlier.ok() && earlier->size() == 2u);
  EXPECT_EQ((*earlier)[0].code, 8) << "as it was before the window's end";
  ASSERT_TRUE(s.SetWatermark(100'000).ok());
  ASSERT_TRUE(s.PruneTicks(50'000).ok());
  ASSERT_TRUE(s.Commit().ok());
  auto events = s.Events(0, 100'000);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u) << "the Xid and the superseded state went; each latest stayed";
  EXPECT_EQ((*events)[0].ts_ms, 1500);
  EXPECT_EQ((*events)[1].ts_ms, 2000);
}

TEST_F(HistoryStoreTest, PruningNeverPassesTheWatermark) {
  auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_TRUE(store.ok());
  HistoryStore& s = **store;
  ASSERT_TRUE(s.Begin().ok());
  auto run = s.BeginRun("daemon", 0, 1000, "box");
  for (int64_t ts = 0; ts < 10; ++ts) ASSERT_TRUE(s.AppendTick(ts * 1000, run->id, {}).ok());
  ASSERT_TRUE(s.SetWatermark(4000).ok());
  EXPECT_EQ(*s.RawPrunedBeforeMs(), std::nullopt) << "nothing pruned yet";
  EXPECT_EQ(*s.PruneTicks(8000), 4) << "only rolled-up ticks go";
  ASSERT_TRUE(s.Commit().ok());
  EXPECT_EQ((*s.TickRange())->first, 4000);
  EXPECT_EQ(*s.RawPrunedBeforeMs(), 4000) << "what went, for the report's note";
  ASSERT_TRUE(s.Begin().ok());
  EXPECT_EQ(*s.PruneTicks(2000), 0);
  ASSERT_TRUE(s.Commit().ok());
  EXPECT_EQ(*s.RawPrunedBeforeMs(), 4000) << "a prune that deletes nothing changes nothing";
  ASSERT_TRUE(s.SetMeta("raw_pruned_before_ms", "junk").ok());
  Result<std::optional<int64_t>> junk = s.RawPrunedBeforeMs();
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.status().message().find(path_), std::string::npos) << "names the database";
  EXPECT_NE(junk.status().message().find("raw_pruned_before_ms"), std::string::npos);
}

}  // namespace
}  // namespace cgov

namespace cgov {
namespace {

// Issue 11: the writer records the price it priced each GPU at; a report reads the one in effect
// at the window's end. A restart at the same price adds no row; a change does.
TEST_F(HistoryStoreTest, RecordsEachGpusPriceFromWhenItApplies) {
  auto store = HistoryStore::Open(path_, HistoryStore::Mode::kWrite);
  ASSERT_TRUE(store.ok()) << store.status().message();
  PriceRecord list{5'435'000, 5'435'000, 6'571'000, false, "reference price: H100 SXM 80GB"};
  PriceRecord mine{2'500'000, 5'435'000, 6'571'000, false, "--price-per-gpu-hour $2.5000"};
  ASSERT_TRUE((*store)->PutPrice(1, 1'000, list).ok());
  ASSERT_TRUE((*store)->PutPrice(1, 2'000, list).ok());  // a restart, same price
  ASSERT_TRUE((*store)->PutPrice(1, 3'000, mine).ok());
  ASSERT_TRUE((*store)
                  ->PutPrice(2, 3'000,
                             PriceRecord{std::nullopt, std::nullopt, std::nullopt, false,
                                         "price unknown: no entry"})
                  .ok());
  auto rows = (*store)->PricesAt(kEndTimestampMs);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->at(1), mine);
  EXPECT_FALSE(rows->at(2).micro_usd) << "unknown is kept as unknown, never 0";
  EXPECT_EQ((*store)->PricesAt(2'999)->at(1), list);
  EXPECT_EQ((*store)->PricesAt(1'000)->at(1), list);
  EXPECT_TRUE((*store)->PricesAt(999)->empty());
  auto db = SqliteDb::Open(path_, SqliteDb::OpenMode::kReadOnly);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*(*db)->QueryInt("SELECT count(*) FROM gpu_price WHERE gpu = 1"), 2)
      << "the restart at the same price added no row";
}

}  // namespace
}  // namespace cgov
