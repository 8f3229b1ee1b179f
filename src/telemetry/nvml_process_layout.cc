#include "telemetry/nvml_process_layout.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

namespace cgov {
namespace {

constexpr DriverVersion kCcEntriesFirst{535, 43, 2};  // first driver whose _v3 writes 32 bytes
constexpr DriverVersion kCcEntriesEnd{535, 98, 0};    // first one after that window (no _v3)
constexpr size_t kWidths[] = {16, 24, 32};
constexpr size_t kLastFieldBytes = 8;  // the widest last field of any entry

bool ParseInt(std::string_view text, int* out) {
  if (text.empty() || text.size() > 6) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

uint32_t LoadU32(const unsigned char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

uint64_t LoadU64(const unsigned char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

}  // namespace

std::optional<DriverVersion> ParseDriverVersion(std::string_view text) {
  int parts[3] = {0, 0, 0};
  for (int i = 0; i < 3 && !text.empty(); ++i) {
    const size_t dot = text.find('.');
    if (!ParseInt(text.substr(0, dot), &parts[i])) return std::nullopt;
    text = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    if (dot != std::string_view::npos && text.empty()) return std::nullopt;
  }
  if (!text.empty() || parts[0] == 0) return std::nullopt;
  return DriverVersion{parts[0], parts[1], parts[2]};
}

ProcessEntryWidth ExpectedProcessEntryWidth(const ProcessListFacts& facts) {
  if (facts.symbol.ends_with("_v2")) return {24, "_v2 entries are 24 bytes on every driver"};
  if (!facts.symbol.ends_with("_v3")) return {16, "v1 entries are 16 bytes on every driver"};
  if (std::optional<DriverVersion> v = ParseDriverVersion(facts.driver_version)) {
    if (*v >= kCcEntriesFirst && *v < kCcEntriesEnd) {
      return {32, fmt::format("driver {}: _v3 writes 32-byte entries on 535.43.02-535.86.x",
                              facts.driver_version)};
    }
    return {24, fmt::format("driver {}: _v3 writes 24-byte entries", facts.driver_version)};
  }
  if (facts.has_conf_compute_mem_size_info && !facts.has_running_process_detail_list) {
    return {32,
            "driver version unknown; its symbols are those of 535.43.02-535.86.x (32-byte _v3)"};
  }
  return {24, "driver version unknown; its symbols say 24-byte _v3 entries"};
}

ProcessListShape MeasureProcessList(const unsigned char* buffer, size_t buffer_bytes,
                                    unsigned count, size_t expected_bytes) {
  ProcessListShape out;
  // No width writes `count` entries past count x 32 bytes; one entry more is looked at so that a
  // driver writing more than it says is caught, the rest of a large buffer is not scanned.
  size_t written = std::min(buffer_bytes, (size_t{count} + 1) * kWidths[2]);
  // Eight bytes at a time, then byte by byte: most of what is looked at is the sentinel.
  constexpr uint64_t kSentinelWord = 0x0101010101010101ull * kProcessBufferSentinel;
  while (written >= 8) {
    uint64_t word;
    std::memcpy(&word, buffer + written - 8, 8);
    if (word != kSentinelWord) break;
    written -= 8;
  }
  while (written > 0 && buffer[written - 1] == kProcessBufferSentinel) --written;
  out.written_bytes = written;
  if (count == 0) {
    out.entry_bytes = expected_bytes;
    return out;
  }
  for (size_t width : kWidths) {
    const size_t end = size_t{count} * width;
    if (end > buffer_bytes) continue;
    if (written + kLastFieldBytes > end && written <= end) out.entry_bytes = width;
  }
  out.mismatch = out.entry_bytes != expected_bytes;
  return out;
}

ProcessEntry ProcessEntryAt(const unsigned char* buffer, size_t entry_bytes, unsigned k) {
  const unsigned char* entry = buffer + size_t{k} * entry_bytes;
  return {LoadU32(entry), LoadU64(entry + 8)};
}

DecodedProcessList DecodeProcessList(const unsigned char* buffer, size_t buffer_bytes,
                                     unsigned count, size_t expected_bytes) {
  DecodedProcessList out;
  static_cast<ProcessListShape&>(out) =
      MeasureProcessList(buffer, buffer_bytes, count, expected_bytes);
  if (out.entry_bytes == 0 || count == 0) return out;
  out.entries.reserve(count);
  for (unsigned k = 0; k < count; ++k)
    out.entries.push_back(ProcessEntryAt(buffer, out.entry_bytes, k));
  return out;
}

}  // namespace cgov
