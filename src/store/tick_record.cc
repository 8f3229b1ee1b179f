#include "store/tick_record.h"

#include <vector>

#include <fmt/format.h>

namespace cgov {
namespace {

// GPU header bits, then one bit per StoredGpuField.
constexpr uint64_t kGpuLost = 1;
constexpr uint64_t kGpuProcessesKnown = 2;
constexpr int kGpuFieldShift = 2;

// Process header: gpu_pos << 4 | flags.
constexpr uint64_t kProcCompute = 1;
constexpr uint64_t kProcGraphics = 2;
constexpr uint64_t kProcMemKnown = 4;
constexpr uint64_t kProcSmKnown = 8;

// Host header bits. kBitAllocations: an allocation list follows the processes (history schema 6
// on; a tick without allocations is encoded as before).
constexpr uint64_t kBitCpu = 1, kBitIowait = 2, kBitMem = 4, kBitAllocations = 8;

class Reader {
 public:
  Reader(std::string_view data, std::string_view context) : data_(data), context_(context) {}
  bool Next(uint64_t* v) { return GetVarint(data_, &pos_, v); }
  bool Done() const { return pos_ == data_.size(); }
  Status Error(std::string_view what) const {
    return InvalidArgument(fmt::format("{}: malformed tick ({} at byte {})", context_, what, pos_));
  }

 private:
  std::string_view data_;
  std::string_view context_;
  size_t pos_ = 1;  // after the version byte
};

// Writes varints into room made beforehand (EncodeTick sizes it from the tick): a tick is a few
// hundred varints, and growing a string at each one was ~8 % of a daemon tick (issue 64).
class VarintWriter {
 public:
  static constexpr size_t kMaxBytes = 10;
  explicit VarintWriter(char* at) : at_(at) {}
  void Put(uint64_t v) {
    while (v >= 0x80) {
      *at_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *at_++ = static_cast<char>(v);
  }
  char* at() const { return at_; }

 private:
  char* at_;
};

constexpr size_t kGpuVarints = 2 + kStoredGpuFieldCount;  // EncodeGpu's most
void EncodeGpu(const StoredGpu& g, VarintWriter& out) {
  uint64_t mask = (g.lost ? kGpuLost : 0) | (g.processes_known ? kGpuProcessesKnown : 0);
  for (size_t f = 0; f < kStoredGpuFieldCount; ++f) {
    if (g.fields[f]) mask |= uint64_t{1} << (f + kGpuFieldShift);
  }
  out.Put(g.gpu_id);
  out.Put(mask);
  for (const auto& v : g.fields) {
    if (v) out.Put(*v);
  }
}

Status DecodeGpu(Reader& r, StoredGpu* g) {
  uint64_t id = 0, mask = 0;
  if (!r.Next(&id) || !r.Next(&mask)) return r.Error("GPU header");
  g->gpu_id = static_cast<uint32_t>(id);
  g->lost = mask & kGpuLost;
  g->processes_known = mask & kGpuProcessesKnown;
  for (size_t f = 0; f < kStoredGpuFieldCount; ++f) {
    if (!(mask & (uint64_t{1} << (f + kGpuFieldShift)))) continue;
    uint64_t v = 0;
    if (!r.Next(&v)) return r.Error("GPU field");
    g->fields[f] = v;
  }
  return Status::Ok();
}

constexpr size_t kProcessVarints = 6;  // EncodeProcess's most
void EncodeProcess(const StoredProcess& p, VarintWriter& out) {
  const uint64_t flags = (p.compute ? kProcCompute : 0) | (p.graphics ? kProcGraphics : 0) |
                         (p.mem_used_mib ? kProcMemKnown : 0) | (p.sm_util_pct ? kProcSmKnown : 0);
  out.Put(uint64_t{p.gpu_pos} << 4 | flags);
  out.Put(p.pid);
  out.Put(p.identity_id);
  out.Put(p.command_id);
  if (p.mem_used_mib) out.Put(*p.mem_used_mib);
  if (p.sm_util_pct) out.Put(*p.sm_util_pct);
}

Status DecodeProcess(Reader& r, size_t gpus, StoredProcess* p) {
  uint64_t head = 0, pid = 0, identity = 0, command = 0;
  if (!r.Next(&head) || !r.Next(&pid) || !r.Next(&identity) || !r.Next(&command)) {
    return r.Error("process header");
  }
  p->gpu_pos = static_cast<uint32_t>(head >> 4);
  if (p->gpu_pos >= gpus) return r.Error("process on a GPU the tick does not list");
  p->compute = head & kProcCompute;
  p->graphics = head & kProcGraphics;
  p->pid = static_cast<uint32_t>(pid);
  p->identity_id = static_cast<uint32_t>(identity);
  p->command_id = static_cast<uint32_t>(command);
  uint64_t v = 0;
  if (head & kProcMemKnown) {
    if (!r.Next(&v)) return r.Error("process memory");
    p->mem_used_mib = static_cast<uint32_t>(v);
  }
  if (head & kProcSmKnown) {
    if (!r.Next(&v)) return r.Error("process SM utilization");
    p->sm_util_pct = static_cast<uint32_t>(v);
  }
  return Status::Ok();
}

}  // namespace

void PutVarint(uint64_t v, std::string* out) {
  char bytes[VarintWriter::kMaxBytes];
  VarintWriter w(bytes);
  w.Put(v);
  out->append(bytes, static_cast<size_t>(w.at() - bytes));
}

bool GetVarint(std::string_view data, size_t* pos, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift < 70 && *pos < data.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(data[(*pos)++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *v = result;
      return true;
    }
  }
  return false;
}

void EncodeTick(const StoredTick& tick, std::string* out) {
  // Room for every varint at its longest (kept from tick to tick: not cleared each time),
  // written in place, then appended at once. The count follows what is written below: the
  // host header and its 3 fields, then each list's length and its items' most.
  const size_t varints = 4 + 1 + tick.gpus.size() * kGpuVarints + 1 +
                         tick.processes.size() * kProcessVarints + 1 + tick.allocations.size() * 2;
  thread_local std::vector<char> room;
  if (room.size() < 1 + varints * VarintWriter::kMaxBytes) {
    room.resize(1 + varints * VarintWriter::kMaxBytes);
  }
  char* begin = room.data();
  begin[0] = static_cast<char>(kTickEncodingVersion);
  VarintWriter w(begin + 1);
  const uint64_t host = (tick.cpu_pct_x10 ? kBitCpu : 0) | (tick.iowait_pct_x10 ? kBitIowait : 0) |
                        (tick.mem_used_pct_x10 ? kBitMem : 0) |
                        (tick.allocations.empty() ? 0 : kBitAllocations);
  w.Put(host);
  if (tick.cpu_pct_x10) w.Put(*tick.cpu_pct_x10);
  if (tick.iowait_pct_x10) w.Put(*tick.iowait_pct_x10);
  if (tick.mem_used_pct_x10) w.Put(*tick.mem_used_pct_x10);
  w.Put(tick.gpus.size());
  for (const StoredGpu& g : tick.gpus) EncodeGpu(g, w);
  w.Put(tick.processes.size());
  for (const StoredProcess& p : tick.processes) EncodeProcess(p, w);
  if (!tick.allocations.empty()) {
    w.Put(tick.allocations.size());
    for (const StoredAllocation& a : tick.allocations) {
      w.Put(a.gpu_pos);
      w.Put(a.identity_id);
    }
  }
  out->append(begin, static_cast<size_t>(w.at() - begin));
}

Status DecodeTick(std::string_view data, std::string_view context, StoredTick* tick) {
  *tick = StoredTick{};
  if (data.empty()) return InvalidArgument(fmt::format("{}: empty tick", context));
  if (static_cast<uint8_t>(data[0]) != kTickEncodingVersion) {
    return InvalidArgument(
        fmt::format("{}: tick encoding version {} is not one this cgov reads ({})", context,
                    static_cast<uint8_t>(data[0]), kTickEncodingVersion));
  }
  Reader r(data, context);
  uint64_t host = 0, v = 0, count = 0;
  if (!r.Next(&host)) return r.Error("host header");
  auto host_field = [&](uint64_t bit, std::optional<uint32_t>* field) {
    if (!(host & bit)) return true;
    if (!r.Next(&v)) return false;
    *field = static_cast<uint32_t>(v);
    return true;
  };
  if (!host_field(kBitCpu, &tick->cpu_pct_x10) || !host_field(kBitIowait, &tick->iowait_pct_x10) ||
      !host_field(kBitMem, &tick->mem_used_pct_x10)) {
    return r.Error("host field");
  }
  if (!r.Next(&count) || count > data.size()) return r.Error("GPU count");
  tick->gpus.resize(count);
  for (StoredGpu& g : tick->gpus) CGOV_RETURN_IF_ERROR(DecodeGpu(r, &g));
  if (!r.Next(&count) || count > data.size()) return r.Error("process count");
  tick->processes.resize(count);
  for (StoredProcess& p : tick->processes) {
    CGOV_RETURN_IF_ERROR(DecodeProcess(r, tick->gpus.size(), &p));
  }
  if (host & kBitAllocations) {
    if (!r.Next(&count) || count > data.size()) return r.Error("allocation count");
    tick->allocations.resize(count);
    for (StoredAllocation& a : tick->allocations) {
      uint64_t gpu_pos = 0, identity = 0;
      if (!r.Next(&gpu_pos) || !r.Next(&identity)) return r.Error("allocation");
      if (gpu_pos >= tick->gpus.size())
        return r.Error("allocation of a GPU the tick does not list");
      a.gpu_pos = static_cast<uint32_t>(gpu_pos);
      a.identity_id = static_cast<uint32_t>(identity);
    }
  }
  if (!r.Done()) return r.Error("trailing bytes");
  return Status::Ok();
}

}  // namespace cgov
