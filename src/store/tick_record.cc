#include "store/tick_record.h"

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

void EncodeGpu(const StoredGpu& g, std::string* out) {
  uint64_t mask = (g.lost ? kGpuLost : 0) | (g.processes_known ? kGpuProcessesKnown : 0);
  for (size_t f = 0; f < kStoredGpuFieldCount; ++f) {
    if (g.fields[f]) mask |= uint64_t{1} << (f + kGpuFieldShift);
  }
  PutVarint(g.gpu_id, out);
  PutVarint(mask, out);
  for (const auto& v : g.fields) {
    if (v) PutVarint(*v, out);
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

void EncodeProcess(const StoredProcess& p, std::string* out) {
  const uint64_t flags = (p.compute ? kProcCompute : 0) | (p.graphics ? kProcGraphics : 0) |
                         (p.mem_used_mib ? kProcMemKnown : 0) | (p.sm_util_pct ? kProcSmKnown : 0);
  PutVarint(uint64_t{p.gpu_pos} << 4 | flags, out);
  PutVarint(p.pid, out);
  PutVarint(p.identity_id, out);
  PutVarint(p.command_id, out);
  if (p.mem_used_mib) PutVarint(*p.mem_used_mib, out);
  if (p.sm_util_pct) PutVarint(*p.sm_util_pct, out);
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
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
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
  out->push_back(static_cast<char>(kTickEncodingVersion));
  const uint64_t host = (tick.cpu_pct_x10 ? kBitCpu : 0) | (tick.iowait_pct_x10 ? kBitIowait : 0) |
                        (tick.mem_used_pct_x10 ? kBitMem : 0) |
                        (tick.allocations.empty() ? 0 : kBitAllocations);
  PutVarint(host, out);
  if (tick.cpu_pct_x10) PutVarint(*tick.cpu_pct_x10, out);
  if (tick.iowait_pct_x10) PutVarint(*tick.iowait_pct_x10, out);
  if (tick.mem_used_pct_x10) PutVarint(*tick.mem_used_pct_x10, out);
  PutVarint(tick.gpus.size(), out);
  for (const StoredGpu& g : tick.gpus) EncodeGpu(g, out);
  PutVarint(tick.processes.size(), out);
  for (const StoredProcess& p : tick.processes) EncodeProcess(p, out);
  if (tick.allocations.empty()) return;
  PutVarint(tick.allocations.size(), out);
  for (const StoredAllocation& a : tick.allocations) {
    PutVarint(a.gpu_pos, out);
    PutVarint(a.identity_id, out);
  }
}

Status DecodeTick(std::string_view data, std::string_view context, StoredTick* tick) {
  *tick = StoredTick{};
  if (data.empty()) return InvalidArgument(fmt::format("{}: empty tick", context));
  if (static_cast<uint8_t>(data[0]) != kTickEncodingVersion) {
    return InvalidArgument(fmt::format("{}: tick encoding version {} is not one this cgov reads "
                                       "({})", context, static_cast<uint8_t>(data[0]),
                                       kTickEncodingVersion));
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
      if (gpu_pos >= tick->gpus.size()) return r.Error("allocation of a GPU the tick does not list");
      a.gpu_pos = static_cast<uint32_t>(gpu_pos);
      a.identity_id = static_cast<uint32_t>(identity);
    }
  }
  if (!r.Done()) return r.Error("trailing bytes");
  return Status::Ok();
}

}  // namespace cgov
