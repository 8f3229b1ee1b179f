// NvmlSource: the compute, graphics and MPS process lists, read robustly to every driver's entry
// width (nvml_process_layout.h), and per-process utilization.
#include "telemetry/nvml_source.h"

#include <algorithm>

#include <fmt/format.h>

namespace cgov {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

void NvmlSource::DecideProcessLists() {
  const NvmlFunctions& f = library_->fn();
  const bool conf_compute = library_->HasSymbol("nvmlDeviceGetConfComputeMemSizeInfo");
  const bool detail_list = library_->HasSymbol("nvmlDeviceGetRunningProcessDetailList");
  struct Kind {
    const char* name;
    const char* role;
    nvml::nvmlDeviceGetProcesses_fn modern;
    nvml::nvmlDeviceGetProcesses_fn v1;
  };
  const Kind kinds[] = {{"compute", "compute processes", f.compute_procs, f.compute_procs_v1},
                        {"graphics", "graphics processes", f.graphics_procs, f.graphics_procs_v1},
                        {"mps", "mps processes", f.mps_procs, f.mps_procs_v1}};
  for (const Kind& kind : kinds) {
    std::string symbol = library_->ResolvedSymbol(kind.role);
    if (symbol.empty()) symbol = library_->ResolvedSymbol(std::string(kind.role) + " (v1)");
    ProcessListFacts facts{symbol, driver_version_, conf_compute, detail_list};
    process_lists_.push_back({kind.name, symbol, ExpectedProcessEntryWidth(facts)});
    process_list_fns_.push_back(kind.modern != nullptr ? kind.modern : kind.v1);
  }
}

void NvmlSource::ReadProcesses(size_t index, GpuSlowSample* out) {
  // Filled in place, its capacity kept from tick to tick: a list read every tick allocates
  // nothing once the GPU's process count has been seen.
  out->processes.clear();
  constexpr GpuField kFields[] = {GpuField::kComputeProcesses, GpuField::kGraphicsProcesses,
                                  GpuField::kMpsProcesses};
  bool known = true;
  for (size_t list = 0; list < process_list_fns_.size() && !IsLost(index); ++list) {
    const FieldSupport& support = gpus_[index].field(kFields[list]);
    // Compute must answer; graphics and MPS lists a GPU does not support are simply empty.
    if (!support.supported) {
      known = known && list != 0;
      continue;
    }
    known = ListProcesses(index, list, &out->processes) && known;
  }
  out->processes_known = known && !IsLost(index);
  // One entry a pid, in pid order: a pid is listed again by another list, or by a MIG parent
  // once per MIG device it uses. Sorted and merged once, not scanned for at every entry (which
  // was quadratic in a GPU's processes).
  std::vector<GpuProcess>& all = out->processes;
  // (Not stable_sort, which allocates: a pid's entries merge the same in any order.)
  std::sort(all.begin(), all.end(),
            [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
  size_t kept = 0;
  for (size_t k = 0; k < all.size(); ++k) {
    if (kept > 0 && all[kept - 1].pid == all[k].pid) {
      GpuProcess& p = all[kept - 1];
      p.compute = p.compute || all[k].compute;
      p.graphics = p.graphics || all[k].graphics;
      p.mps = p.mps || all[k].mps;
      if (all[k].used_memory_bytes) {
        p.used_memory_bytes = std::max(p.used_memory_bytes.value_or(0), *all[k].used_memory_bytes);
      }
      continue;
    }
    if (kept != k) all[kept] = all[k];
    ++kept;
  }
  all.resize(kept);
}

// Adds the list's entries to *processes (ReadProcesses merges a pid's entries).
bool NvmlSource::ListProcesses(size_t index, size_t list, std::vector<GpuProcess>* processes) {
  constexpr size_t kEntry = nvml::kMaxProcessEntryBytes;
  const ProcessListAbi& abi = process_lists_[list];
  if (proc_bytes_.empty()) proc_bytes_.resize(16 * kEntry);
  for (int attempt = 0; attempt < 4; ++attempt) {
    // Room for `capacity` entries of the widest layout: no driver can write past the buffer.
    const unsigned int capacity = static_cast<unsigned int>(proc_bytes_.size() / kEntry);
    std::fill(proc_bytes_.begin(), proc_bytes_.end(), kProcessBufferSentinel);
    unsigned int count = capacity;
    nvmlReturn_t ret = process_list_fns_[list](units_[index].handle, &count, proc_bytes_.data());
    if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) {
      // Processes may start between two calls: leave room for a few more.
      proc_bytes_.resize((size_t{count} + 8) * kEntry);
      continue;
    }
    if (ret != nvml::NVML_SUCCESS || count > capacity) {
      CheckLost(index, ret);
      return false;
    }
    const ProcessListShape decoded =
        MeasureProcessList(proc_bytes_.data(), proc_bytes_.size(), count, abi.expected.bytes);
    if (decoded.mismatch) {
      Warn(decoded.entry_bytes == 0
               ? fmt::format("{} wrote {} bytes for {} process entries, which fits no known "
                             "entry width (expected {}: {}); the list is treated as unknown",
                             abi.symbol, decoded.written_bytes, count, abi.expected.bytes,
                             abi.expected.why)
               : fmt::format("{} wrote {}-byte process entries where {} were expected ({}); they "
                             "are read as {}-byte entries",
                             abi.symbol, decoded.entry_bytes, abi.expected.bytes, abi.expected.why,
                             decoded.entry_bytes));
    }
    if (decoded.entry_bytes == 0) return false;
    for (unsigned k = 0; k < count; ++k) {
      const ProcessEntry e = ProcessEntryAt(proc_bytes_.data(), decoded.entry_bytes, k);
      GpuProcess& p = processes->emplace_back();
      p.pid = e.pid;
      if (list == 1) {
        p.graphics = true;
      } else {
        p.compute = true;
        p.mps = list == 2;
      }
      if (e.used_memory_bytes != nvml::NVML_VALUE_NOT_AVAILABLE) {
        p.used_memory_bytes = e.used_memory_bytes;
      }
    }
    return true;
  }
  return false;
}

std::optional<nvml::nvmlUtilization_t> NvmlSource::UtilizationNow(size_t index) {
  if (units_[index].util_from_gpm || !gpus_[index].field(GpuField::kUtilization).supported) {
    return std::nullopt;
  }
  nvml::nvmlUtilization_t u{};
  const nvmlReturn_t ret = library_->fn().utilization(units_[index].handle, &u);
  CheckLost(index, ret);
  if (ret != nvml::NVML_SUCCESS) return std::nullopt;
  return u;
}

void NvmlSource::ReadProcessUtilization(size_t index, GpuSlowSample* out) {
  if (!gpus_[index].field(GpuField::kProcessUtilization).supported) return;
  const NvmlFunctions& f = library_->fn();
  // One process: whatever ran on the GPU was its, so its utilization is the GPU's (a call of
  // ~12 us instead of one of ~2.4 ms of CPU on driver 580). A MIG instance has no utilization
  // rates of its own and is asked as before.
  if (out->processes.size() == 1 && gpus_[index].field(GpuField::kUtilization).supported &&
      !units_[index].util_from_gpm) {
    if (std::optional<nvml::nvmlUtilization_t> u = UtilizationNow(index)) {
      out->processes[0].sm_util_pct = u->gpu;
      out->processes[0].mem_util_pct = u->memory;
    }
    return;
  }
  unsigned int count = 0;
  nvmlReturn_t ret = nvml::NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 3 && ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    count = static_cast<unsigned int>(util_buffer_.size());
    ret = f.process_utilization(units_[index].handle,
                                util_buffer_.empty() ? nullptr : util_buffer_.data(), &count,
                                units_[index].last_seen_us);
    if (ret == nvml::NVML_ERROR_INSUFFICIENT_SIZE) util_buffer_.resize(count + 8);
  }
  if (ret == nvml::NVML_ERROR_NOT_FOUND) {
    count = 0;  // no process used the GPU since the last read: every listed one was idle
  } else if (ret != nvml::NVML_SUCCESS) {
    CheckLost(index, ret);
    return;
  }
  for (unsigned int k = 0; k < count; ++k) {
    units_[index].last_seen_us = std::max(units_[index].last_seen_us, util_buffer_[k].timeStamp);
  }
  // The driver may give a process several samples in the window: each gets their mean. Both
  // in pid order (the processes are), one pass: a scan per process was quadratic in them.
  std::sort(util_buffer_.begin(), util_buffer_.begin() + count,
            [](const auto& a, const auto& b) { return a.pid < b.pid; });
  unsigned int k = 0;
  for (GpuProcess& p : out->processes) {
    uint64_t sm = 0, mem = 0, n = 0;
    while (k < count && util_buffer_[k].pid < p.pid) ++k;
    for (; k < count && util_buffer_[k].pid == p.pid; ++k) {
      sm += util_buffer_[k].smUtil;
      mem += util_buffer_[k].memUtil;
      ++n;
    }
    // No sample: it did not use the GPU in this window.
    p.sm_util_pct = n == 0 ? 0 : static_cast<uint32_t>(sm / n);
    p.mem_util_pct = n == 0 ? 0 : static_cast<uint32_t>(mem / n);
  }
}

}  // namespace cgov
