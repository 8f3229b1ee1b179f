#include "telemetry/nvml_source.h"

#include <gtest/gtest.h>
#include <cmath>

#include "fakes/nvml_testing.h"

namespace cgov {
namespace {

using testing::FakeNvml;

// GPU 0: busy for 10 s, then idle; a trainer (pid 100) and an X server (pid 200, graphics).
// GPU 1: a notebook's kernel holding memory, cold. GPU 2: lost at t=20.
constexpr const char* kScenario = R"({
  "driver_version": "535.104.05", "nvml_version": "12.535.104.05", "cuda_driver_version": 12020,
  "gpus": [
    {"name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-aaaa", "pci_bus_id": "00000000:07:00.0",
     "memory_total_mib": 81920, "power_limit_w": 400, "mig": false,
     "timeline": [
       {"t": 0, "util_gpu": 97, "util_mem": 55, "power_w": 380.5, "temp_c": 66, "sm_clock_mhz": 1410,
        "mem_clock_mhz": 1593, "clock_reasons": 4, "pcie_tx_kbps": 1000, "pcie_rx_kbps": 2000,
        "enc_util": 3, "dec_util": 4},
       {"t": 10, "util_gpu": 0, "power_w": 60, "clock_reasons": 1}],
     "processes": [
       {"pid": 100, "used_mib": 40960, "sm_util": 91, "mem_util": 50},
       {"pid": 200, "type": "graphics", "used_mib": 128, "end": 15}]},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
     "timeline": [{"t": 0, "util_gpu": 0}],
     "processes": [{"pid": 300, "used_mib": 20480, "sm_util": 0}]},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920, "lost_at": 20}
  ]})";

constexpr uint64_t kMiB = 1048576;

TEST(NvmlSource, EnumeratesAndProbesOnce) {
  FakeNvml fake("full", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  NvmlSource& nvml = **source;
  EXPECT_EQ(nvml.driver_version(), "535.104.05");
  EXPECT_EQ(nvml.nvml_version(), "12.535.104.05");
  EXPECT_EQ(nvml.cuda_driver_version(), 12020);
  ASSERT_EQ(nvml.gpus().size(), 3u);
  const GpuInfo& g0 = nvml.gpus()[0];
  EXPECT_EQ(g0.uuid, "GPU-aaaa");
  EXPECT_EQ(g0.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g0.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(g0.memory_total_bytes, 81920 * kMiB);
  EXPECT_EQ(g0.mig_enabled, false);
  for (size_t f = 0; f < kGpuFieldCount; ++f) {
    if (static_cast<GpuField>(f) == GpuField::kGpm) continue;  // an A100: GPM is Hopper's
    EXPECT_TRUE(g0.fields[f].supported)
        << GpuFieldName(static_cast<GpuField>(f)) << ": " << g0.fields[f].reason;
  }
  EXPECT_FALSE(g0.field(GpuField::kGpm).supported);
  EXPECT_EQ(g0.field(GpuField::kGpm).reason, "NVML_ERROR_NOT_SUPPORTED (Not Supported)");
  EXPECT_EQ(fake.Calls("nvmlDeviceGetMigMode"), 3u) << "probed once per GPU";
  std::vector<GpuFastSample> fast;
  nvml.ReadFast(&fast);
  nvml.ReadFast(&fast);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetMigMode"), 3u) << "not read again while sampling";
}

TEST(NvmlSource, FastFieldsFollowTheTimeline) {
  FakeNvml fake("full", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuFastSample> fast;
  (*source)->ReadFast(&fast);
  ASSERT_EQ(fast.size(), 3u);
  const GpuFastSample& s = fast[0];
  EXPECT_EQ(s.util_gpu_pct, 97u);
  EXPECT_EQ(s.util_mem_pct, 55u);
  EXPECT_EQ(s.power_mw, 380500u);
  EXPECT_EQ(s.power_limit_mw, 400000u);
  EXPECT_EQ(s.temp_c, 66u);
  EXPECT_EQ(s.sm_clock_mhz, 1410u);
  EXPECT_EQ(s.mem_clock_mhz, 1593u);
  EXPECT_EQ(s.clock_reasons, 4u);
  EXPECT_EQ(s.enc_util_pct, 3u);
  EXPECT_EQ(s.dec_util_pct, 4u);
  EXPECT_EQ(s.mem_used_bytes, (40960 + 128) * kMiB) << "sum of the processes when not set";
  EXPECT_EQ(s.mem_total_bytes, 81920 * kMiB);

  fake.SetTime(12);
  (*source)->ReadFast(&fast);
  EXPECT_EQ(fast[0].util_gpu_pct, 0u);
  EXPECT_EQ(fast[0].util_mem_pct, 55u) << "fields a point does not set carry over";
  EXPECT_EQ(fast[0].power_mw, 60000u);
  EXPECT_EQ(fast[0].clock_reasons, 1u);
}

TEST(FakeNvml, ARepeatingTimelineWrapsAtEveryPeriodEvenFarIntoIt) {
  // period_s 20: 80 % from t=0, 10 % from t=14 (the bench's bursty GPU). The fake wraps time
  // without fmod where it can; the answer must be the same at every period and far into one.
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 81920, "period_s": 20, "timeline": [
    {"t": 0, "util_gpu": 80}, {"t": 14, "util_gpu": 10}]}]})",
                1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuFastSample> fast;
  const std::pair<double, uint32_t> at[] = {
      {0, 80},  {13.9, 80},     {14, 10},       {19.99, 10}, {20, 80},       {34.5, 10},
      {40, 80}, {1e6 + 13, 80}, {1e6 + 15, 10}, {1e17, 80},  {1e17 + 16, 10}};
  for (const auto& [t, util] : at) {
    fake.SetTime(t);
    (*source)->ReadFast(&fast);
    EXPECT_EQ(fast[0].util_gpu_pct, util) << "t=" << t;
  }
}

TEST(NvmlSource, SlowFieldsListProcessesWithMemoryAndUtilization) {
  FakeNvml fake("full", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ASSERT_EQ(slow.size(), 3u);
  EXPECT_GT(slow[0].read_mono_ns, 0);
  EXPECT_EQ(slow[0].pcie_tx_kbps, 1000u);
  EXPECT_EQ(slow[0].pcie_rx_kbps, 2000u);
  ASSERT_TRUE(slow[0].processes_known);
  ASSERT_EQ(slow[0].processes.size(), 2u);
  const GpuProcess& trainer = slow[0].processes[0];
  EXPECT_EQ(trainer.pid, 100u);
  EXPECT_TRUE(trainer.compute);
  EXPECT_FALSE(trainer.graphics);
  EXPECT_EQ(trainer.used_memory_bytes, 40960 * kMiB);
  EXPECT_EQ(trainer.sm_util_pct, 91u);
  EXPECT_EQ(trainer.mem_util_pct, 50u);
  const GpuProcess& xorg = slow[0].processes[1];
  EXPECT_EQ(xorg.pid, 200u);
  EXPECT_TRUE(xorg.graphics);
  EXPECT_FALSE(xorg.compute);
  EXPECT_EQ(xorg.sm_util_pct, 0u) << "listed without a sample: it did not use the SM (not unknown)";
  EXPECT_EQ(slow[1].processes.at(0).sm_util_pct, 0u) << "held and cold: 0 is known, not unknown";

  // Same moment again: the driver has no samples newer than lastSeenTimeStamp (NOT_FOUND), so
  // every listed process was idle in that window: 0, not unknown (the bias this regression
  // test guards: averaging only the processes that had samples overstates utilization).
  (*source)->ReadSlow(&slow);
  EXPECT_EQ(slow[0].processes[0].sm_util_pct, 0u);
  fake.SetTime(16);  // later; the X server has exited, and the GPU idles since t=10
  const uint64_t asked = fake.Calls("nvmlDeviceGetProcessUtilization");
  (*source)->ReadSlow(&slow);
  ASSERT_EQ(slow[0].processes.size(), 1u);
  EXPECT_EQ(slow[0].processes[0].sm_util_pct, 0u) << "the one process has the GPU's utilization";
  EXPECT_EQ(fake.Calls("nvmlDeviceGetProcessUtilization"), asked) << "nor asked of GPU 1's one";
}

TEST(NvmlSource, ProcessBufferGrowsOnInsufficientSize) {
  std::string many = R"({"gpus": [{"memory_total_mib": 1024, "processes": [)";
  for (int pid = 1; pid <= 40; ++pid) {
    many += (pid > 1 ? "," : "") + std::string(R"({"pid": )") + std::to_string(pid) +
            R"(, "used_mib": 10})";
  }
  many += "]}]}";
  FakeNvml fake("full", many, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ASSERT_TRUE(slow[0].processes_known);
  EXPECT_EQ(slow[0].processes.size(), 40u);
}

// `count` compute processes of 100 + k MiB each (pid 5000 + k) on one GPU of driver `driver`.
std::string ManyProcesses(const std::string& driver, int count, const std::string& extra = "") {
  std::string json = R"({"driver_version": ")" + driver + R"(", )" + extra +
                     R"("gpus": [{"memory_total_mib": 81920, "processes": [)";
  for (int k = 0; k < count; ++k) {
    json += (k > 0 ? "," : "") + std::string(R"({"pid": )") + std::to_string(5000 + k) +
            R"(, "used_mib": )" + std::to_string(100 + k) + "}";
  }
  return json + "]}]}";
}

void ExpectManyProcesses(const GpuSlowSample& slow, int count, const std::string& context) {
  ASSERT_TRUE(slow.processes_known) << context;
  ASSERT_EQ(slow.processes.size(), static_cast<size_t>(count)) << context;
  for (int k = 0; k < count; ++k) {
    EXPECT_EQ(slow.processes[k].pid, static_cast<uint32_t>(5000 + k)) << context;
    EXPECT_EQ(slow.processes[k].used_memory_bytes, uint64_t(100 + k) * kMiB) << context;
    EXPECT_TRUE(slow.processes[k].compute) << context;
  }
}

// Regression: on 535.43.02-535.86.x the _v3 lists write 32-byte entries; read as 24-byte ones,
// every process after the first was garbage, and 25+ processes overran the buffer (ASan).
TEST(NvmlSource, Driver535_54WritesWideEntriesAndEveryProcessIsExact) {
  FakeNvml fake("r535_54", ManyProcesses("535.54.03", 30), 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  const NvmlSource& nvml = **source;
  ASSERT_EQ(nvml.process_lists().size(), 3u);
  EXPECT_EQ(nvml.process_lists()[0].symbol, "nvmlDeviceGetComputeRunningProcesses_v3");
  EXPECT_EQ(nvml.process_lists()[0].expected.bytes, 32u) << nvml.process_lists()[0].expected.why;
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ExpectManyProcesses(slow[0], 30, "535.54.03");
  EXPECT_TRUE(nvml.AbiWarnings().empty()) << nvml.AbiWarnings().front();
}

TEST(NvmlSource, Driver535_98HasNoV3AndTheV2ListsServe) {
  FakeNvml fake("r535_98", ManyProcesses("535.98", 30), 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->process_lists()[0].symbol, "nvmlDeviceGetComputeRunningProcesses_v2");
  EXPECT_EQ((*source)->process_lists()[0].expected.bytes, 24u);
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ExpectManyProcesses(slow[0], 30, "535.98");
  EXPECT_EQ(fake.Calls("nvmlDeviceGetComputeRunningProcesses_v3"), 0u);
}

TEST(NvmlSource, ADriverWritingAnotherWidthIsDecodedByWhatItWroteAndWarned) {
  // A current driver version (24 bytes expected) whose _v3 writes 32-byte entries anyway.
  FakeNvml fake("full", ManyProcesses("550.54.15", 12, R"("v3_process_entry_bytes": 32, )"), 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->process_lists()[0].expected.bytes, 24u);
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ExpectManyProcesses(slow[0], 12, "unexpected 32-byte entries");
  std::vector<std::string> warnings = (*source)->AbiWarnings();
  ASSERT_EQ(warnings.size(), 1u) << "one line, however often it happens";
  EXPECT_NE(warnings[0].find("nvmlDeviceGetComputeRunningProcesses_v3 wrote 32-byte process "
                             "entries where 24 were expected"),
            std::string::npos)
      << warnings[0];
}

TEST(FakeNvml, RefusesToPlayADriverWithSymbolsThatDriverLacks) {
  // 535.98 has no _v3 lists; the full variant exports them: not a driver that ever existed.
  FakeNvml fake("full", ManyProcesses("535.98", 1), 1);
  auto source = NvmlSource::Open(fake.path());
  EXPECT_FALSE(source.ok());
}

TEST(NvmlSource, APidInTwoListsIsOneProcessAndEachGetsItsOwnUtilization) {
  // Listed out of pid order, one of them by both the compute and the graphics list: one entry a
  // pid, in pid order, each with its own sample (merged by sorting, not a scan an entry).
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 81920, "timeline": [{"t": 0,
    "util_gpu": 60}], "processes": [
      {"pid": 30, "type": "both", "used_mib": 300, "sm_util": 5},
      {"pid": 10, "used_mib": 100, "sm_util": 70},
      {"pid": 40, "type": "graphics", "used_mib": 400},
      {"pid": 20, "used_mib": 200, "sm_util": 20}]}]})",
                1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ASSERT_TRUE(slow[0].processes_known);
  const std::vector<GpuProcess>& p = slow[0].processes;
  ASSERT_EQ(p.size(), 4u);
  const uint32_t pids[] = {10, 20, 30, 40}, sm[] = {70, 20, 5, 0};
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(p[k].pid, pids[k]);
    EXPECT_EQ(p[k].used_memory_bytes, pids[k] * 10 * kMiB) << p[k].pid;
    EXPECT_EQ(p[k].sm_util_pct, sm[k]) << p[k].pid;
  }
  EXPECT_TRUE(p[2].compute && p[2].graphics) << "both lists: one process, both kinds";
  EXPECT_TRUE(!p[3].compute && p[3].graphics);
}

TEST(NvmlSource, MpsClientsComeFromTheMpsListAsComputeProcesses) {
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 81920, "timeline": [{"t": 0,
    "util_gpu": 60}], "processes": [
      {"pid": 10, "used_mib": 30},
      {"pid": 11, "type": "mps", "used_mib": 2000, "sm_util": 40},
      {"pid": 12, "type": "mps", "used_mib": 3000, "sm_util": 20}]}]})",
                1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_TRUE((*source)->gpus()[0].field(GpuField::kMpsProcesses).supported);
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ASSERT_TRUE(slow[0].processes_known);
  ASSERT_EQ(slow[0].processes.size(), 3u);
  EXPECT_FALSE(slow[0].processes[0].mps) << "the MPS server is an ordinary compute process";
  for (size_t k : {1u, 2u}) {
    const GpuProcess& client = slow[0].processes[k];
    EXPECT_TRUE(client.mps && client.compute) << client.pid;
    EXPECT_EQ(client.used_memory_bytes, (k == 1 ? 2000 : 3000) * kMiB) << client.pid;
  }
  EXPECT_EQ(slow[0].processes[1].sm_util_pct, 40u);
}

TEST(NvmlSource, XidErrorsArriveByEventAndAreCountedPerGpu) {
  const std::string scenario = R"({"gpus": [
    {"memory_total_mib": 1024, "xid_events": [{"t": 0.5, "xid": 31}, {"t": 5, "xid": 79},
                                              {"t": 6, "xid": 48}]},
    {"memory_total_mib": 1024},
    {"memory_total_mib": 1024, "not_supported": ["xid_events"]}]})";
  FakeNvml fake("full", scenario, 1);  // the first Xid is before the watch: not delivered
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  NvmlSource& nvml = **source;
  EXPECT_TRUE(nvml.gpus()[0].field(GpuField::kXidEvents).supported);
  EXPECT_FALSE(nvml.gpus()[2].field(GpuField::kXidEvents).supported);
  std::vector<GpuFastSample> fast;
  nvml.ReadFast(&fast);
  EXPECT_FALSE(fast[0].xid_errors.has_value()) << "not watched yet: unknown, not 0";
  nvml.StartEventWatch();
  nvml.ReadFast(&fast);
  EXPECT_EQ(fast[0].xid_errors, 0u);
  EXPECT_FALSE(fast[0].last_xid.has_value());
  EXPECT_EQ(fast[1].xid_errors, 0u);
  EXPECT_FALSE(fast[2].xid_errors.has_value());
  fake.SetTime(10);
  nvml.ReadFast(&fast);
  EXPECT_EQ(fast[0].xid_errors, 0u) << "queued by the driver until the next slow read";
  std::vector<GpuSlowSample> slow;
  nvml.ReadSlow(&slow);
  nvml.ReadFast(&fast);
  EXPECT_EQ(fast[0].xid_errors, 2u);
  EXPECT_EQ(fast[0].last_xid, 48u);
  EXPECT_EQ(fast[1].xid_errors, 0u);
  std::vector<XidEvent> events = nvml.DrainXidEvents();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].xid, 79u);
  EXPECT_EQ(events[1].xid, 48u);
  EXPECT_EQ(events[0].gpu_index, 0u);
  EXPECT_GT(events[0].unix_ms, 1'700'000'000'000);
  EXPECT_TRUE(nvml.DrainXidEvents().empty()) << "each event is drained once";
}

TEST(NvmlSource, GpmMetricsComeFromTwoSamplesOnHopperOnly) {
  const std::string scenario = R"({"gpus": [
    {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "gpm": true,
     "timeline": [{"t": 0, "util_gpu": 100, "sm_active": 31.5, "sm_occupancy": 12,
                   "tensor_active": 2.5, "dram_active": 20, "pcie_tx_mib_s": 100,
                   "nvlink_rx_mib_s": 4096}]},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920}]})";
  FakeNvml fake("full", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_TRUE((*source)->gpus()[0].field(GpuField::kGpm).supported);
  EXPECT_FALSE((*source)->gpus()[1].field(GpuField::kGpm).supported);
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  EXPECT_FALSE(slow[0].gpm.Any()) << "one sample: nothing to compare with yet";
  fake.SetTime(2);
  (*source)->ReadSlow(&slow);
  const GpmMetrics& g = slow[0].gpm;
  EXPECT_EQ(g.sm_active_pct, 31.5);
  EXPECT_EQ(g.sm_occupancy_pct, 12);
  EXPECT_EQ(g.tensor_active_pct, 2.5);
  EXPECT_EQ(g.dram_active_pct, 20);
  EXPECT_EQ(g.pcie_tx_mib_s, 100);
  EXPECT_EQ(g.pcie_rx_mib_s, 0);
  EXPECT_EQ(g.nvlink_rx_mib_s, 4096);
  EXPECT_FALSE(slow[1].gpm.Any()) << "an A100 has no GPM";
  EXPECT_EQ(fake.Calls("nvmlGpmSampleGet"), 2u);
  EXPECT_EQ(fake.Calls("nvmlGpmMetricsGet"), 1u);
}

// nvmlDeviceGetPcieThroughput sleeps ~20 ms a call on a real driver: a GPU with GPM never gets it.
TEST(NvmlSource, PcieRatesComeFromGpmWhereThereIsGpm) {
  const std::string scenario = R"({"gpus": [
    {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "gpm": true,
     "timeline": [{"t": 0, "pcie_tx_mib_s": 100, "pcie_rx_mib_s": 2.5, "pcie_tx_kbps": 7,
                   "pcie_rx_kbps": 7}]},
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
     "timeline": [{"t": 0, "pcie_tx_kbps": 1000, "pcie_rx_kbps": 2000}]}]})";
  FakeNvml fake("full", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  const GpuInfo& h100 = (*source)->gpus()[0];
  EXPECT_TRUE(h100.field(GpuField::kPcieThroughput).supported);
  EXPECT_NE(h100.field(GpuField::kPcieThroughput).reason.find("from GPM"), std::string::npos);
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  EXPECT_FALSE(slow[0].pcie_tx_kbps.has_value()) << "GPM's first sample has nothing to compare";
  fake.SetTime(2);
  (*source)->ReadSlow(&slow);
  EXPECT_EQ(slow[0].pcie_tx_kbps, 104858u) << "100 MiB/s in KB/s";
  EXPECT_EQ(slow[0].pcie_rx_kbps, 2621u);
  EXPECT_EQ(slow[1].pcie_tx_kbps, 1000u) << "the A100 has no GPM: the throughput call";
  EXPECT_EQ(slow[1].pcie_rx_kbps, 2000u);
  // One probe and two reads of TX and RX, all for the A100.
  EXPECT_EQ(fake.Calls("nvmlDeviceGetPcieThroughput"), 5u);
}

// Per-process utilization costs milliseconds of CPU a call on a real driver, found or not
// (docs/validation.md): asked only where it splits a GPU between two or more processes.
TEST(NvmlSource, ProcessUtilizationIsAskedOnlyOfGpusWithTwoOrMoreProcesses) {
  const std::string scenario = R"({"gpus": [{"memory_total_mib": 1024,
      "timeline": [{"t": 0, "util_gpu": 40, "util_mem": 15}],
      "processes": [{"pid": 7, "used_mib": 512, "sm_util": 30, "mem_util": 9, "start": 10},
                    {"pid": 8, "used_mib": 256, "sm_util": 10, "mem_util": 6, "start": 20}]}]})";
  FakeNvml fake("full", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  const uint64_t probes = fake.Calls("nvmlDeviceGetProcessUtilization");
  std::vector<GpuSlowSample> slow;
  (*source)->ReadSlow(&slow);
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_TRUE(slow[0].processes_known);
  EXPECT_TRUE(slow[0].processes.empty());
  EXPECT_EQ(fake.Calls("nvmlDeviceGetProcessUtilization"), probes) << "no process: not asked";
  fake.SetTime(12);
  (*source)->ReadSlow(&slow);
  ASSERT_EQ(slow[0].processes.size(), 1u);
  EXPECT_EQ(slow[0].processes[0].sm_util_pct, 40u) << "all the GPU ran was its own";
  EXPECT_EQ(slow[0].processes[0].mem_util_pct, 15u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetProcessUtilization"), probes) << "one process: not asked";
  fake.SetTime(22);
  (*source)->ReadSlow(&slow);
  ASSERT_EQ(slow[0].processes.size(), 2u);
  EXPECT_EQ(slow[0].processes[0].sm_util_pct, 30u) << "two: the driver splits the GPU";
  EXPECT_EQ(slow[0].processes[1].sm_util_pct, 10u);
  EXPECT_EQ(slow[0].processes[1].mem_util_pct, 6u);
  EXPECT_GT(fake.Calls("nvmlDeviceGetProcessUtilization"), probes);
}

// nvmlGpmMetricsGet costs ~1-2 ms of CPU on a real driver when asked for an activity metric and
// ~4 us for PCIe and NVLink alone (docs/validation.md). A GPU that listed no process at either
// end of the window and idles now ran nothing: its activity is 0 without asking.
TEST(NvmlSource, GpmActivityIsNotAskedOfAGpuThatRanNothing) {
  // The fake answers whatever the scenario says, so an activity read shows as 25 %, and a
  // window in which it was not asked as 0.
  const std::string scenario = R"({"gpus": [
    {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "gpm": true,
     "timeline": [{"t": 0, "util_gpu": 0, "util_mem": 0, "sm_active": 25, "tensor_active": 25,
                   "dram_active": 25, "pcie_tx_mib_s": 3},
                  {"t": 5, "util_gpu": 60, "util_mem": 20, "sm_active": 25, "tensor_active": 25,
                   "dram_active": 25, "pcie_tx_mib_s": 3},
                  {"t": 7, "util_gpu": 0, "util_mem": 0, "sm_active": 25, "tensor_active": 25,
                   "dram_active": 25, "pcie_tx_mib_s": 3}],
     "processes": [{"pid": 9, "used_mib": 512, "start": 10, "end": 12}]}]})";
  FakeNvml fake("full", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuSlowSample> slow;
  struct Step {
    double t;
    double want_sm;
    const char* why;
  };
  const Step steps[] = {
      {2, 0, "no process at either end and 0 %: not asked"},
      {3, 0, "the same"},
      {6, 25, "60 % with no process listed (one the driver hides from this namespace): asked"},
      {8, 0, "0 % again"},
      {11, 25, "a process at the window's end: asked"},
      {13, 25, "a process at the window's start: asked"},
      {14, 0, "none at either end again"}};
  (*source)->ReadSlow(&slow);  // the first GPM sample
  EXPECT_FALSE(slow[0].gpm.Any()) << "one sample: no window yet";
  for (const Step& step : steps) {
    fake.SetTime(step.t);
    (*source)->ReadSlow(&slow);
    const GpmMetrics& g = slow[0].gpm;
    EXPECT_EQ(g.sm_active_pct, step.want_sm) << "t=" << step.t << ": " << step.why;
    EXPECT_EQ(g.tensor_active_pct, step.want_sm) << "t=" << step.t;
    EXPECT_EQ(g.dram_active_pct, step.want_sm) << "t=" << step.t;
    EXPECT_EQ(g.pcie_tx_mib_s, 3) << "t=" << step.t << ": PCIe is always asked (it is cheap)";
  }
}

// The energy counter costs ~2.9 ms of CPU a read on a real driver: read only when asked for, at
// most once a period, the samples between carrying the last value.
TEST(NvmlSource, EnergyIsReadOnlyWhenAskedAndAtMostOncePerPeriod) {
  const std::string scenario =
      R"({"gpus": [{"memory_total_mib": 1024, "timeline": [{"t": 0, "power_w": 100}]}]})";
  FakeNvml fake("full", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  NvmlSource& nvml = **source;
  EXPECT_TRUE(nvml.gpus()[0].field(GpuField::kTotalEnergy).supported);
  const uint64_t probes = fake.Calls("nvmlDeviceGetTotalEnergyConsumption");
  std::vector<GpuFastSample> fast;
  nvml.ReadFast(&fast);
  nvml.ReadFast(&fast);
  EXPECT_FALSE(fast[0].energy_mj.has_value()) << "nobody asked";
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTotalEnergyConsumption"), probes);

  nvml.SetEnergyPeriod(3'600'000'000'000);  // an hour: read once, then carried
  nvml.ReadFast(&fast);
  ASSERT_TRUE(fast[0].energy_mj.has_value());
  const uint64_t first = *fast[0].energy_mj;
  fake.SetTime(100);
  nvml.ReadFast(&fast);
  EXPECT_EQ(fast[0].energy_mj, first) << "carried within the period";
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTotalEnergyConsumption"), probes + 1);

  nvml.SetEnergyPeriod(1);  // every read
  nvml.ReadFast(&fast);
  EXPECT_GT(fast[0].energy_mj.value_or(0), first) << "100 s of power since";
  EXPECT_EQ(fake.Calls("nvmlDeviceGetTotalEnergyConsumption"), probes + 2);
}

TEST(NvmlSource, Driver470MemoryExcludesItsReservationLikeV2Does) {
  const std::string scenario = R"({"driver_version": "470.57.02", "gpus": [
    {"memory_total_mib": 40960, "reserved_mib": 500},
    {"memory_total_mib": 40960, "reserved_mib": 500, "processes": [{"pid": 7, "used_mib": 1000}]}
  ]})";
  FakeNvml fake("r470", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  for (const GpuInfo& gpu : (*source)->gpus()) {
    EXPECT_EQ(gpu.memory_reserved_bytes, 500 * kMiB) << gpu.index;
    EXPECT_NE(gpu.memory_reserved_source.find("estimated"), std::string::npos);
  }
  std::vector<GpuFastSample> fast;
  (*source)->ReadFast(&fast);
  EXPECT_EQ(fast[0].mem_used_bytes, 0u) << "an idle GPU holds nothing, whatever v1 says";
  EXPECT_EQ(fast[1].mem_used_bytes, 1000 * kMiB);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetMemoryInfo_v2"), 0u);
}

TEST(NvmlSource, MemoryV2ErrorFallsBackToV1CorrectedForTheReservation) {
  // Regression: an error from _v2 switched the memory field off instead of falling back.
  const std::string scenario = R"({"gpus": [{"memory_total_mib": 40960, "reserved_mib": 300,
    "not_supported": ["memory_v2"], "processes": [{"pid": 7, "used_mib": 1000}]}]})";
  FakeNvml fake("full", scenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  const GpuInfo& gpu = (*source)->gpus()[0];
  EXPECT_TRUE(gpu.field(GpuField::kMemory).supported) << gpu.field(GpuField::kMemory).reason;
  EXPECT_EQ(gpu.memory_reserved_bytes, 300 * kMiB);
  std::vector<GpuFastSample> fast;
  (*source)->ReadFast(&fast);
  EXPECT_EQ(fast[0].mem_used_bytes, 1000 * kMiB);
  EXPECT_EQ(fast[0].mem_total_bytes, 40960 * kMiB);
}

TEST(NvmlSource, MemoryV2GivesTheReservationAndAllocatedUsed) {
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 40960, "reserved_mib": 420,
    "processes": [{"pid": 7, "used_mib": 1000}]}]})",
                1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->gpus()[0].memory_reserved_bytes, 420 * kMiB);
  EXPECT_EQ((*source)->gpus()[0].memory_reserved_source, "nvmlDeviceGetMemoryInfo_v2");
  std::vector<GpuFastSample> fast;
  (*source)->ReadFast(&fast);
  EXPECT_EQ(fast[0].mem_used_bytes, 1000 * kMiB);
}

TEST(NvmlSource, LegacyDriverGivesTheSameValuesThroughV1Calls) {
  FakeNvml fake("legacy", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  std::vector<GpuFastSample> fast;
  std::vector<GpuSlowSample> slow;
  (*source)->ReadFast(&fast);
  (*source)->ReadSlow(&slow);
  EXPECT_EQ(fast[0].mem_used_bytes, (40960 + 128) * kMiB);
  EXPECT_EQ(fast[0].clock_reasons, 4u);
  ASSERT_EQ(slow[0].processes.size(), 2u);
  EXPECT_EQ(slow[0].processes[0].used_memory_bytes, 40960 * kMiB);
  EXPECT_GT(fake.Calls("nvmlDeviceGetComputeRunningProcesses"), 0u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetComputeRunningProcesses_v3"), 0u);
  EXPECT_GT(fake.Calls("nvmlDeviceGetMemoryInfo"), 0u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetMemoryInfo_v2"), 0u);
}

TEST(NvmlSource, MissingOptionalSymbolsDisableTheirFieldsOnly) {
  FakeNvml fake("no_optional", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  const GpuInfo& g0 = (*source)->gpus()[0];
  EXPECT_FALSE(g0.field(GpuField::kPower).supported);
  EXPECT_EQ(g0.field(GpuField::kPower).reason,
            "symbol nvmlDeviceGetPowerUsage missing from the library");
  EXPECT_TRUE(g0.field(GpuField::kUtilization).supported);
  EXPECT_TRUE(g0.field(GpuField::kComputeProcesses).supported);
  std::vector<GpuFastSample> fast;
  std::vector<GpuSlowSample> slow;
  (*source)->ReadFast(&fast);
  (*source)->ReadSlow(&slow);
  EXPECT_EQ(fast[0].util_gpu_pct, 97u);
  EXPECT_FALSE(fast[0].power_mw.has_value()) << "unknown, not 0";
  EXPECT_FALSE(fast[0].temp_c.has_value());
  ASSERT_TRUE(slow[0].processes_known) << "no graphics list is not a reason to drop compute";
  ASSERT_EQ(slow[0].processes.size(), 1u);
  EXPECT_FALSE(slow[0].processes[0].sm_util_pct.has_value());
}

TEST(NvmlSource, NotSupportedAndNoPermissionAreProbedOnceAndSkipped) {
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 1024,
      "not_supported": ["power", "pcie_throughput"], "no_permission": ["compute_processes"],
      "processes": [{"pid": 5, "used_mib": 1}]}]})",
                1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  const GpuInfo& g = (*source)->gpus()[0];
  EXPECT_EQ(g.field(GpuField::kPower).reason, "NVML_ERROR_NOT_SUPPORTED (Not Supported)");
  EXPECT_EQ(g.field(GpuField::kComputeProcesses).reason,
            "NVML_ERROR_NO_PERMISSION (Insufficient Permissions)");
  fake.ResetCounts();
  std::vector<GpuFastSample> fast;
  std::vector<GpuSlowSample> slow;
  (*source)->ReadFast(&fast);
  (*source)->ReadSlow(&slow);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetPowerUsage"), 0u);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetPcieThroughput"), 0u);
  EXPECT_FALSE(slow[0].processes_known) << "a list we may not read is unknown, not empty";
  EXPECT_TRUE(slow[0].processes.empty());
}

TEST(NvmlSource, LostGpuStopsBeingQueriedAndTheOthersGoOn) {
  FakeNvml fake("full", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  NvmlSource& nvml = **source;
  EXPECT_FALSE(nvml.gpus()[2].lost);
  fake.SetTime(21);
  std::vector<GpuFastSample> fast;
  nvml.ReadFast(&fast);
  EXPECT_TRUE(fast[2].lost);
  EXPECT_FALSE(fast[2].util_gpu_pct.has_value());
  EXPECT_TRUE(nvml.IsLost(2));
  EXPECT_FALSE(fast[0].lost);
  EXPECT_EQ(fast[0].util_gpu_pct, 0u);
  fake.ResetCounts();
  std::vector<GpuSlowSample> slow;
  nvml.ReadFast(&fast);
  nvml.ReadSlow(&slow);
  // GPU 0 and 1 each get one utilization call in the fast read, and one in the slow read (each
  // lists one process, whose utilization is the GPU's); the lost GPU 2 gets none.
  EXPECT_EQ(fake.Calls("nvmlDeviceGetUtilizationRates"), 4u);
  EXPECT_TRUE(slow[2].lost);
  EXPECT_FALSE(slow[2].processes_known);
  EXPECT_TRUE(slow[1].processes_known);
}

TEST(NvmlSource, GpuLostBeforeStartIsListedAsLost) {
  FakeNvml fake("full", R"({"gpus": [{"memory_total_mib": 1024},
                                     {"memory_total_mib": 1024, "lost_at": 0}]})",
                0);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  ASSERT_EQ((*source)->gpus().size(), 2u);
  EXPECT_FALSE((*source)->gpus()[0].lost);
  EXPECT_TRUE((*source)->gpus()[1].lost);
  EXPECT_NE((*source)->gpus()[1].lost_reason.find("NVML_ERROR_GPU_IS_LOST"), std::string::npos);
}

TEST(NvmlSource, InitFailureIsUnavailableWithTheDriverError) {
  FakeNvml fake("full", R"({"init_error": "DRIVER_NOT_LOADED", "gpus": []})");
  auto source = NvmlSource::Open(fake.path());
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(source.status().message().find("NVML_ERROR_DRIVER_NOT_LOADED"), std::string::npos)
      << source.status().message();
}

TEST(NvmlSource, DriverWithoutGpusIsAnEmptyList) {
  FakeNvml fake("full", R"({"gpus": []})");
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_TRUE((*source)->gpus().empty());
  std::vector<GpuFastSample> fast;
  (*source)->ReadFast(&fast);
  EXPECT_TRUE(fast.empty());
}

TEST(NvmlSource, FastReadNeverCallsTheSlowFunctions) {
  FakeNvml fake("full", kScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  fake.ResetCounts();
  std::vector<GpuFastSample> fast;
  for (int i = 0; i < 5; ++i) (*source)->ReadFast(&fast);
  for (const char* slow :
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v3",
        "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetPcieThroughput"}) {
    EXPECT_EQ(fake.Calls(slow), 0u) << slow;
  }
  EXPECT_EQ(fake.Calls("nvmlDeviceGetUtilizationRates"), 15u);
}

// MIG: an H100 in MIG mode is sampled as its instances, each through its own handle (memory,
// processes) and its parent's (GPM, events); a whole GPU beside it stays one unit.
constexpr const char* kMigScenario = R"({
  "gpus": [
    {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "gpm": true, "mig": true,
     "timeline": [{"t": 0, "power_w": 320}],
     "xid_events": [{"t": 5, "xid": 31, "gi": 2}, {"t": 6, "xid": 79}],
     "mig_devices": [
       {"gi": 1, "ci": 0, "slices": 3, "memory_total_mib": 40192, "name": "NVIDIA H100 80GB HBM3 MIG 3g.40gb",
        "timeline": [{"t": 0, "util_gpu": 80, "sm_active": 60}],
        "processes": [{"pid": 700, "used_mib": 30000}]},
       {"gi": 2, "ci": 0, "slices": 2, "memory_total_mib": 19968,
        "processes": [{"pid": 701, "used_mib": 1000}]}]},
    {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "gpm": true,
     "timeline": [{"t": 0, "util_gpu": 40}]}
  ]})";

TEST(NvmlSource, MigInstancesAreSampledInPlaceOfTheirParent) {
  FakeNvml fake("full", kMigScenario, 1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  NvmlSource& nvml = **source;
  ASSERT_EQ(nvml.gpus().size(), 3u) << "two instances, then the whole GPU";
  const GpuInfo& a = nvml.gpus()[0];
  const GpuInfo& b = nvml.gpus()[1];
  ASSERT_TRUE(a.mig && b.mig);
  EXPECT_FALSE(nvml.gpus()[2].mig);
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(nvml.gpus()[2].index, 1u);
  EXPECT_EQ(a.mig->gpu_instance_id, 1u);
  EXPECT_EQ(a.mig->profile, "3g.40gb") << "from the name";
  EXPECT_EQ(b.mig->profile, "2g.20gb") << "the fake's default name, parsed back";
  EXPECT_EQ(a.mig->slices, 3u);
  EXPECT_EQ(a.mig->parent_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(a.mig->parent_uuid, "GPU-fa4e0000-0000-4000-8000-000000000000");
  EXPECT_NEAR(a.mig->price_share, 40192.0 / 81559.0, 1e-9);
  EXPECT_EQ(a.uuid.rfind("MIG-", 0), 0u);
  EXPECT_EQ(a.memory_total_bytes, 40192 * kMiB);
  EXPECT_EQ(a.mig_enabled, true);
  EXPECT_EQ(a.Label(), "0 MIG 3g.40gb GI 1");
  EXPECT_TRUE(a.field(GpuField::kUtilization).supported) << "through GPM";
  // Issue 62: an instance's power is the parent's reading x its memory share (never the MIG
  // handle's answer, which a driver may give as the whole GPU's), and no energy counter.
  EXPECT_TRUE(a.field(GpuField::kPower).supported);
  EXPECT_NE(a.field(GpuField::kPower).reason.find("49.3 % memory share (an estimate)"),
            std::string::npos)
      << a.field(GpuField::kPower).reason;
  EXPECT_FALSE(a.field(GpuField::kTotalEnergy).supported);
  EXPECT_TRUE(a.field(GpuField::kGpm).supported);

  nvml.StartEventWatch();
  std::vector<GpuSlowSample> slow;
  std::vector<GpuFastSample> fast;
  nvml.ReadSlow(&slow);
  nvml.ReadFast(&fast);
  EXPECT_FALSE(fast[0].util_gpu_pct) << "no GPM interval yet: unknown, not 0";
  ASSERT_TRUE(slow[0].processes_known);
  ASSERT_EQ(slow[0].processes.size(), 1u) << "an instance lists its own processes only";
  EXPECT_EQ(slow[0].processes[0].pid, 700u);
  EXPECT_EQ(slow[0].processes[0].used_memory_bytes, 30000 * kMiB);
  ASSERT_EQ(slow[1].processes.size(), 1u);
  EXPECT_EQ(slow[1].processes[0].pid, 701u);
  fake.SetTime(2);
  nvml.ReadSlow(&slow);
  nvml.ReadFast(&fast);
  EXPECT_EQ(fast[0].util_gpu_pct, 80u) << "GPM graphics activity of GPU instance 1";
  EXPECT_EQ(fast[1].util_gpu_pct, 0u);
  EXPECT_EQ(fast[2].util_gpu_pct, 40u) << "the whole GPU's own utilization";
  EXPECT_EQ(slow[0].gpm.sm_active_pct, 60.0);
  EXPECT_EQ(fast[0].mem_used_bytes, 30000 * kMiB);
  EXPECT_EQ(fast[0].power_mw, std::llround(320'000.0 * 40192 / 81559));
  EXPECT_EQ(fast[1].power_mw, std::llround(320'000.0 * 19968 / 81559));
  EXPECT_LE(*fast[0].power_mw + *fast[1].power_mw, 320'000u) << "the GPU's power, once";
  const uint64_t power_reads = fake.Calls("nvmlDeviceGetPowerUsage");
  nvml.ReadFast(&fast);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetPowerUsage") - power_reads, 2u)
      << "the MIG GPU's power read once for both instances, and the whole GPU's";
  EXPECT_EQ(fast[1].power_mw, std::llround(320'000.0 * 19968 / 81559));
  EXPECT_FALSE(fast[0].energy_mj);

  // Xid 31 names GPU instance 2; Xid 79 names none, so it counts on every instance.
  fake.SetTime(7);
  nvml.ReadSlow(&slow);
  nvml.ReadFast(&fast);
  EXPECT_EQ(fast[0].xid_errors, 1u);
  EXPECT_EQ(fast[0].last_xid, 79u);
  EXPECT_EQ(fast[1].xid_errors, 2u);
  EXPECT_EQ(fast[2].xid_errors, 0u) << "the other GPU";
  std::vector<XidEvent> events = nvml.DrainXidEvents();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].gpu_index, 1u);
  EXPECT_EQ(events[0].xid, 31u);
  EXPECT_EQ(fake.Calls("nvmlDeviceRegisterEvents"), 2u) << "once per physical GPU";
}

TEST(NvmlSource, MigProfileComesFromTheDeviceName) {
  EXPECT_EQ(MigProfileFromName("NVIDIA H100 80GB HBM3 MIG 3g.40gb"), "3g.40gb");
  EXPECT_EQ(MigProfileFromName("NVIDIA A100-SXM4-40GB MIG 1c.3g.20gb"), "1c.3g.20gb");
  EXPECT_EQ(MigProfileFromName("NVIDIA H100 80GB HBM3"), "");
  EXPECT_EQ(MigProfileFromName("NVIDIA H100 MIGHTY"), "");
  EXPECT_EQ(MigProfileFromName("MIG 2g.20gb"), "2g.20gb");
}

// Memory health: remapped rows where the GPU has them, retired pages on an older one, nothing
// through a MIG instance (its parent answers NOT_SUPPORTED in MIG mode); read at probe, then
// carried between reads a minute apart.
TEST(NvmlSource, MemoryHealthIsRemappedRowsOrRetiredPages) {
  FakeNvml fake("full", R"({"gpus": [
    {"name": "NVIDIA A100-SXM4-80GB", "memory_total_mib": 81920,
     "remapped_rows": {"correctable": 4, "uncorrectable": 1, "pending": true}},
    {"name": "Tesla V100-SXM2-32GB", "memory_total_mib": 32768,
     "retired_pages": {"sbe": 70, "dbe": 2, "pending": true}},
    {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "mig": true,
     "mig_devices": [{"gi": 1, "memory_total_mib": 40192}]}]})",
                1);
  auto source = NvmlSource::Open(fake.path());
  ASSERT_TRUE(source.ok()) << source.status().message();
  NvmlSource& nvml = **source;
  ASSERT_EQ(nvml.gpus().size(), 3u);
  const std::optional<MemoryHealth>& a100 = nvml.gpus()[0].memory_health;
  ASSERT_TRUE(a100);
  EXPECT_TRUE(a100->row_remapping);
  EXPECT_EQ(a100->remapped_correctable, 4u);
  EXPECT_EQ(a100->remapped_uncorrectable, 1u);
  EXPECT_TRUE(a100->remap_pending);
  EXPECT_TRUE(a100->NeedsAction());
  const std::optional<MemoryHealth>& v100 = nvml.gpus()[1].memory_health;
  ASSERT_TRUE(v100);
  EXPECT_FALSE(v100->row_remapping);
  EXPECT_EQ(v100->retired_sbe, 70u) << "more than the 64-address buffer: the count is the driver's";
  EXPECT_EQ(v100->retired_dbe, 2u);
  EXPECT_TRUE(v100->retired_pending);
  EXPECT_FALSE(nvml.gpus()[2].field(GpuField::kMemoryHealth).supported);
  EXPECT_FALSE(nvml.gpus()[2].memory_health);

  fake.ResetCounts();
  std::vector<GpuSlowSample> slow;
  for (int k = 0; k < 3; ++k) nvml.ReadSlow(&slow);
  EXPECT_EQ(slow[0].memory_health, a100) << "carried between reads";
  EXPECT_EQ(slow[1].memory_health, v100);
  EXPECT_FALSE(slow[2].memory_health);
  EXPECT_EQ(fake.Calls("nvmlDeviceGetRemappedRows"), 0u) << "read again only after a minute";
}

TEST(NvmlSource, MemoryHealthSurvivesItsHistoryEncoding) {
  MemoryHealth rows{true, 4, 4'000'000'000u, true, true, 0, 0, false};
  EXPECT_EQ(DecodeMemoryHealth(EncodeMemoryHealth(rows)), rows);
  MemoryHealth pages;
  pages.retired_sbe = 70;
  pages.retired_dbe = 2;
  pages.retired_pending = true;
  EXPECT_EQ(DecodeMemoryHealth(EncodeMemoryHealth(pages)), pages);
  EXPECT_EQ(DecodeMemoryHealth(EncodeMemoryHealth(MemoryHealth{})), MemoryHealth{});
  MemoryHealth many = rows;
  many.remapped_correctable = 1u << 30;
  EXPECT_EQ(DecodeMemoryHealth(EncodeMemoryHealth(many)).remapped_correctable, (1u << 23) - 1)
      << "clamped, never wrapped into the flags";
  EXPECT_GE(EncodeMemoryHealth(many), 0) << "fits a signed SQLite integer";
}

}  // namespace
}  // namespace cgov
