// How wide one entry of an NVML process list is, and how to read a list a driver wrote without
// trusting that belief.
//
// The width of an entry depends on the driver, not only on the symbol: the same
// nvmlDevice*RunningProcesses_v3 writes 32-byte entries on drivers 535.43.02-535.86.x and 24-byte
// entries on every other driver that has it (see nvml_api.h and docs/nvml-abi.md). So the source
// (1) expects a width from the driver's version and exported symbols, (2) hands the driver a buffer
// sized for the widest entry any driver writes and filled with a sentinel byte, and (3) decodes
// with the width the driver evidently used: how far it wrote tells. A disagreement between (1) and
// (3) is reported, never decoded as garbage. Everything here is pure.
#ifndef CGOV_TELEMETRY_NVML_PROCESS_LAYOUT_H_
#define CGOV_TELEMETRY_NVML_PROCESS_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cgov {

// "535.54.03" -> {535, 54, 3}; "470.57.02" -> {470, 57, 2}; "535.98" -> {535, 98, 0}.
struct DriverVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  auto operator<=>(const DriverVersion&) const = default;
};
std::optional<DriverVersion> ParseDriverVersion(std::string_view text);

// What decides the expected entry width of one process-list symbol.
struct ProcessListFacts {
  std::string symbol;          // as resolved, e.g. "nvmlDeviceGetComputeRunningProcesses_v3"
  std::string driver_version;  // nvmlSystemGetDriverVersion; empty when unknown
  bool has_conf_compute_mem_size_info = false;   // nvmlDeviceGetConfComputeMemSizeInfo exported
  bool has_running_process_detail_list = false;  // nvmlDeviceGetRunningProcessDetailList exported
};

struct ProcessEntryWidth {
  size_t bytes = 0;  // 16, 24 or 32
  std::string why;   // "driver 535.54.03: _v3 writes 32-byte entries on 535.43.02-535.86.x"
};

// The expected width: the unversioned symbol writes 16 bytes, _v2 24, _v3 24 except on
// 535.43.02-535.86.x (32). When the driver version cannot be parsed, the exported symbols decide
// _v3: ConfComputeMemSizeInfo present and RunningProcessDetailList absent is that 535 window.
ProcessEntryWidth ExpectedProcessEntryWidth(const ProcessListFacts& facts);

// The byte every buffer byte is set to before the driver writes; no entry ends in it (an entry's
// last field is a MIG id, 0xFFFFFFFF or small, or a byte count below 2^56).
inline constexpr unsigned char kProcessBufferSentinel = 0xA5;

struct ProcessEntry {
  uint32_t pid = 0;
  uint64_t used_memory_bytes = 0;  // NVML_VALUE_NOT_AVAILABLE (~0) when the driver cannot say
};

// The width a driver wrote a list in, found from where its writes end.
struct ProcessListShape {
  size_t entry_bytes = 0;    // the width decoded with; 0 when no width fits
  bool mismatch = false;     // the driver wrote another width than expected (or none that fits)
  size_t written_bytes = 0;  // how far the driver wrote (last non-sentinel byte + 1), looked
                             // for in the first (count + 1) x 32 bytes
};

struct DecodedProcessList : ProcessListShape {
  std::vector<ProcessEntry> entries;  // empty when entry_bytes is 0
};

// The shape of `count` entries in a buffer the driver filled; the width is the one (16, 24 or
// 32) for which the driver's writes end inside the last entry's last 8 bytes. REQUIRES:
// count * 32 <= buffer_bytes. With ProcessEntryAt, a list read every tick allocates nothing.
ProcessListShape MeasureProcessList(const unsigned char* buffer, size_t buffer_bytes,
                                    unsigned count, size_t expected_bytes);
// Entry k of a list of `entry_bytes`-wide entries (a non-zero MeasureProcessList width).
ProcessEntry ProcessEntryAt(const unsigned char* buffer, size_t entry_bytes, unsigned k);

// Decodes `count` entries from a buffer the driver filled. `expected_bytes` is the width from
// ExpectedProcessEntryWidth; the width used is MeasureProcessList's.
DecodedProcessList DecodeProcessList(const unsigned char* buffer, size_t buffer_bytes,
                                     unsigned count, size_t expected_bytes);

}  // namespace cgov

#endif  // CGOV_TELEMETRY_NVML_PROCESS_LAYOUT_H_
