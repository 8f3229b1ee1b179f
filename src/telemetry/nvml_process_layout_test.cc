#include "telemetry/nvml_process_layout.h"

#include <gtest/gtest.h>

#include <cstring>

#include "abi_table.h"  // the fake driver's own table, written from NVIDIA's headers

namespace cgov {
namespace {

TEST(ParseDriverVersion, ReadsTheFormsDriversReport) {
  struct Case {
    const char* text;
    std::optional<DriverVersion> want;
  };
  const Case cases[] = {
      {"535.54.03", DriverVersion{535, 54, 3}},
      {"470.57.02", DriverVersion{470, 57, 2}},
      {"535.98", DriverVersion{535, 98, 0}},
      {"610.43.02", DriverVersion{610, 43, 2}},
      {"", std::nullopt},
      {"535.", std::nullopt},
      {"535.54.03-fake", std::nullopt},
      {"abc", std::nullopt},
      {"535.54.03.1", std::nullopt},
      {"9999999.1", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseDriverVersion(c.text), c.want) << c.text;
}

TEST(ExpectedProcessEntryWidth, FollowsTheDriverNotTheSymbol) {
  struct Case {
    const char* symbol;
    const char* driver;
    bool conf_compute, detail_list;
    size_t want;
  };
  const Case cases[] = {
      {"nvmlDeviceGetComputeRunningProcesses", "470.57.02", false, false, 16},
      {"nvmlDeviceGetComputeRunningProcesses_v2", "535.54.03", true, false, 24},
      {"nvmlDeviceGetComputeRunningProcesses_v3", "530.41.03", false, false, 24},
      {"nvmlDeviceGetComputeRunningProcesses_v3", "535.43.02", true, false, 32},
      {"nvmlDeviceGetComputeRunningProcesses_v3", "535.54.03", true, false, 32},
      {"nvmlDeviceGetGraphicsRunningProcesses_v3", "535.86.10", true, false, 32},
      {"nvmlDeviceGetComputeRunningProcesses_v3", "535.104.05", true, true, 24},
      {"nvmlDeviceGetMPSComputeRunningProcesses_v3", "550.54.14", true, true, 24},
      // Version unreadable: the exported symbols decide.
      {"nvmlDeviceGetComputeRunningProcesses_v3", "", true, false, 32},
      {"nvmlDeviceGetComputeRunningProcesses_v3", "custom", true, true, 24},
      {"nvmlDeviceGetComputeRunningProcesses_v3", "", false, false, 24},
  };
  for (const Case& c : cases) {
    ProcessEntryWidth w =
        ExpectedProcessEntryWidth({c.symbol, c.driver, c.conf_compute, c.detail_list});
    EXPECT_EQ(w.bytes, c.want) << c.symbol << " on " << c.driver << ": " << w.why;
    EXPECT_FALSE(w.why.empty());
  }
}

// cgov's belief (nvml_process_layout.cc) against the fake driver's table (abi_table.cc), both
// written from NVIDIA's headers but separately: a row on which they disagree fails here.
TEST(ExpectedProcessEntryWidth, AgreesWithTheFakeDriversTableOnEveryRow) {
  for (const fake_nvml::DriverAbi& row : fake_nvml::DriverAbiTable()) {
    if (row.v3_process_entry_bytes == 0) continue;  // no _v3 on these drivers
    const std::string first = std::to_string(row.first[0]) + "." + std::to_string(row.first[1]) +
                              "." + std::to_string(row.first[2]);
    ProcessListFacts facts{"nvmlDeviceGetComputeRunningProcesses_v3", first,
                           row.conf_compute_mem_size_info, row.running_process_detail_list};
    EXPECT_EQ(ExpectedProcessEntryWidth(facts).bytes, row.v3_process_entry_bytes)
        << "driver " << first << " (" << row.source << ")";
    facts.driver_version = "";  // the symbol heuristic alone must agree too
    EXPECT_EQ(ExpectedProcessEntryWidth(facts).bytes, row.v3_process_entry_bytes)
        << "symbols of " << first << " (" << row.source << ")";
  }
}

// A buffer as the source hands it over: sentinel-filled, room for `capacity` 32-byte entries,
// then `count` entries of `width` written the way a driver does.
std::vector<unsigned char> DriverWrote(size_t width, unsigned count, unsigned capacity = 8) {
  std::vector<unsigned char> buffer(size_t{capacity} * 32, kProcessBufferSentinel);
  for (unsigned k = 0; k < count; ++k) {
    unsigned char* at = buffer.data() + size_t{k} * width;
    std::memset(at, 0, width);
    const uint32_t pid = 1000 + k;
    const uint64_t used = (uint64_t{k} + 1) << 20;
    const uint32_t no_mig = 0xFFFFFFFFu;
    std::memcpy(at, &pid, 4);
    std::memcpy(at + 8, &used, 8);
    if (width >= 24) std::memcpy(at + 16, &no_mig, 4), std::memcpy(at + 20, &no_mig, 4);
  }
  return buffer;
}

TEST(DecodeProcessList, ReadsEachWidthAndFlagsTheUnexpectedOne) {
  struct Case {
    size_t written_width, expected_width;
    unsigned count;
  };
  const Case cases[] = {{16, 16, 3}, {24, 24, 1}, {24, 24, 8}, {32, 32, 5},
                        {32, 24, 1}, {32, 24, 7}, {24, 32, 4}, {16, 24, 2}};
  for (const Case& c : cases) {
    std::vector<unsigned char> buffer = DriverWrote(c.written_width, c.count);
    DecodedProcessList d =
        DecodeProcessList(buffer.data(), buffer.size(), c.count, c.expected_width);
    const std::string context = std::to_string(c.count) + " entries of " +
                                std::to_string(c.written_width) + " bytes, expected " +
                                std::to_string(c.expected_width);
    EXPECT_EQ(d.entry_bytes, c.written_width) << context;
    EXPECT_EQ(d.mismatch, c.written_width != c.expected_width) << context;
    EXPECT_EQ(d.written_bytes, c.count * c.written_width) << context;
    ASSERT_EQ(d.entries.size(), c.count) << context;
    for (unsigned k = 0; k < c.count; ++k) {
      EXPECT_EQ(d.entries[k].pid, 1000 + k) << context;
      EXPECT_EQ(d.entries[k].used_memory_bytes, (uint64_t{k} + 1) << 20) << context;
    }
  }
}

TEST(DecodeProcessList, EmptyListIsNoMismatch) {
  std::vector<unsigned char> buffer = DriverWrote(24, 0);
  DecodedProcessList d = DecodeProcessList(buffer.data(), buffer.size(), 0, 32);
  EXPECT_FALSE(d.mismatch);
  EXPECT_TRUE(d.entries.empty());
  EXPECT_EQ(d.written_bytes, 0u);
}

TEST(DecodeProcessList, AWriteThatFitsNoWidthIsUnknownNotGarbage) {
  std::vector<unsigned char> buffer = DriverWrote(24, 2);
  buffer[80] = 0;  // a stray byte past two entries of any width, inside the look-ahead
  DecodedProcessList d = DecodeProcessList(buffer.data(), buffer.size(), 2, 24);
  EXPECT_EQ(d.entry_bytes, 0u);
  EXPECT_TRUE(d.mismatch);
  EXPECT_TRUE(d.entries.empty());
  EXPECT_EQ(d.written_bytes, 81u);
}

TEST(DecodeProcessList, MemoryNotAvailableIsKeptAsTheDriversMarker) {
  std::vector<unsigned char> buffer = DriverWrote(24, 1);
  const uint64_t not_available = ~0ULL;
  std::memcpy(buffer.data() + 8, &not_available, 8);
  DecodedProcessList d = DecodeProcessList(buffer.data(), buffer.size(), 1, 24);
  ASSERT_EQ(d.entries.size(), 1u);
  EXPECT_FALSE(d.mismatch);
  EXPECT_EQ(d.entries[0].used_memory_bytes, not_available);
}

}  // namespace
}  // namespace cgov
