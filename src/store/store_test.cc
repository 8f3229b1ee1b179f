#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "file_size_limit.h"
#include "store/jsonl_writer.h"
#include "store/sample_record.h"

namespace cgov {
namespace {

TEST(JsonlWriter, OneLinePerAppendAndNoOverwrite) {
  char tmpl[] = "/tmp/cgov_jsonl_XXXXXX";
  std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/samples.jsonl";
  {
    auto writer = JsonlWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    EXPECT_TRUE((*writer)->Append(R"({"a":1})").ok());
    EXPECT_TRUE((*writer)->Append(R"({"b":2})").ok());
    EXPECT_EQ((*writer)->lines(), 2u);
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"a\":1}\n{\"b\":2}\n");
  auto again = JsonlWriter::Create(path);
  EXPECT_FALSE(again.ok()) << "an existing samples file is never overwritten";
  std::filesystem::remove_all(dir);
}

TEST(JsonlWriter, FullDiskStopsWritingAndSaysWhere) {
  int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto writer = JsonlWriter::FromFd(fd, "run/samples.jsonl");
  Status first = writer->Append("{}");
  EXPECT_EQ(first.code(), StatusCode::kIoError);
  EXPECT_EQ(first.message(),
            "run/samples.jsonl: writing line 1 failed: No space left on device; later samples "
            "were not saved");
  EXPECT_EQ(writer->Append("{}").message(), first.message()) << "the first error is kept";
  EXPECT_EQ(writer->lines(), 0u);
}

// Issue 46 item 6: a line written in part before the disk filled was left, so samples.jsonl
// ended mid-line. The part is cut off again: the file ends with its last whole line. (A
// file-size limit makes the kernel write part of a line, then refuse the rest.)
TEST(JsonlWriter, APartLineIsCutOffAfterAFailedWrite) {
  const std::string path = ::testing::TempDir() + "jsonl_part_" + std::to_string(getpid());
  std::filesystem::remove(path);
  auto writer = JsonlWriter::Create(path);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Append(std::string(59, 'a')).ok());  // 60 bytes
  Status failed;
  {
    test_support::FileSizeLimit limit(100);
    ASSERT_TRUE(limit.ok());
    failed = (*writer)->Append(std::string(59, 'b'));  // 40 bytes fit, 20 do not
  }
  EXPECT_EQ(failed.code(), StatusCode::kIoError);
  EXPECT_NE(failed.message().find("writing line 2 failed: File too large"), std::string::npos)
      << failed.message();
  writer->reset();
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::string(59, 'a') + "\n");
  std::filesystem::remove(path);
}

TEST(SampleRecord, TickHasUnknownsAsNullAndRelativeTime) {
  TickSample tick;
  tick.mono_ns = 3'500'000'000;
  tick.wall_ns = 1'795'000'767'000'000'000;
  tick.host.cpu_pct = 12.34567;
  tick.gpu_fast.resize(1);
  tick.gpu_fast[0].util_gpu_pct = 88;
  JobTreeSample job;
  job.pids = {10, 11};
  std::string line;
  WriteTickRecord(tick, job, 1'000'000'000, &line);
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j.dump(), line) << "canonical: keys sorted, numbers as nlohmann writes them";
  EXPECT_EQ(j["kind"], "tick");
  EXPECT_EQ(j["t_s"], 2.5);
  EXPECT_EQ(j["ts"], "2026-11-18T11:19:27.000Z");
  EXPECT_EQ(j["host"]["cpu_pct"], 12.346);
  EXPECT_TRUE(j["host"]["disk_read_bytes_per_s"].is_null());
  EXPECT_EQ(j["gpus"][0]["util_gpu_pct"], 88);
  EXPECT_TRUE(j["gpus"][0]["power_mw"].is_null());
  EXPECT_TRUE(j["gpus"][0]["processes"].is_null()) << "no slow read yet: unknown, not empty";
  EXPECT_EQ(j["job"]["pids"], nlohmann::json({10, 11}));
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(SampleRecord, SlowFieldsAppearWithTheirAge) {
  TickSample tick;
  tick.mono_ns = 5'000'000'000;
  tick.gpu_fast.resize(1);
  tick.gpu_slow.resize(1);
  tick.gpu_slow[0].read_mono_ns = 4'750'000'000;
  tick.gpu_slow[0].processes_known = true;
  tick.gpu_slow[0].processes = {GpuProcess{7, true, false, 1024, 30, std::nullopt}};
  tick.gpu_slow[0].pcie_rx_kbps = 500;
  tick.gpu_fast[0] = GpuFastSample{false,   95,      60, 75'161'927'680, 85'520'809'984,
                                   610'000, 700'000, 71, 1980,           2619,
                                   4,       0,       0,  std::nullopt,   2,
                                   79};
  tick.host.core_pct = {12.5, std::nullopt};
  tick.host.load = LoadAvg{1.5, 1, 0.5, 77};
  std::string line;
  WriteTickRecord(tick, JobTreeSample{{3, 4}, 150.25, 1 << 20}, 0, &line);
  EXPECT_EQ(nlohmann::json::parse(line).dump(), line) << "every field set: still canonical";
  nlohmann::json g = nlohmann::json::parse(line)["gpus"][0];
  EXPECT_EQ(g["slow_age_s"], 0.25);
  EXPECT_EQ(g["pcie_rx_kbps"], 500);
  EXPECT_TRUE(g["pcie_tx_kbps"].is_null());
  EXPECT_EQ(g["processes"][0]["pid"], 7);
  EXPECT_EQ(g["processes"][0]["sm_util_pct"], 30);
  EXPECT_TRUE(g["processes"][0]["mem_util_pct"].is_null());
  EXPECT_EQ(g["processes"][0]["mps"], false);
  EXPECT_EQ(g["xid_errors"], 2);
  EXPECT_EQ(g["last_xid"], 79);
}

}  // namespace
}  // namespace cgov
