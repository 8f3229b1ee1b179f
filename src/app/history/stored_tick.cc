#include "app/history/stored_tick.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

namespace cgov {
namespace {

std::optional<uint64_t> Rounded(std::optional<double> v, double scale) {
  if (!v) return std::nullopt;
  return static_cast<uint64_t>(std::llround(std::max(0.0, *v) * scale));
}

void FillGpu(const GpuFastSample& f, StoredGpu* g) {
  using F = StoredGpuField;
  g->set(F::kUtilPct, f.util_gpu_pct);
  g->set(F::kMemUtilPct, f.util_mem_pct);
  if (f.mem_used_bytes) g->set(F::kMemUsedMib, (*f.mem_used_bytes + (1u << 19)) >> 20);
  if (f.power_mw) g->set(F::kPowerDw, (*f.power_mw + 50) / 100);
  if (f.power_limit_mw) g->set(F::kPowerLimitDw, (*f.power_limit_mw + 50) / 100);
  g->set(F::kTempC, f.temp_c);
  g->set(F::kSmClockMhz, f.sm_clock_mhz);
  g->set(F::kMemClockMhz, f.mem_clock_mhz);
  g->set(F::kClockReasons, f.clock_reasons);
  g->set(F::kEncUtilPct, f.enc_util_pct);
  g->set(F::kDecUtilPct, f.dec_util_pct);
  // The driver's energy counter, on the ticks that read it (a daemon: once a minute):
  // the ledger corrects its power x time by it (analysis/history_aggregator.h).
  if (f.energy_fresh) g->set(F::kEnergyMj, f.energy_mj);
}

}  // namespace

Result<std::vector<uint32_t>> RegisterGpus(const std::vector<GpuInfo>& gpus, HistoryStore* store) {
  std::vector<uint32_t> ids;
  for (const GpuInfo& g : gpus) {
    GpuRecord r;
    r.uuid = g.uuid.empty() ? fmt::format("index:{}", g.index) : g.uuid;
    r.index = g.index;
    r.name = g.name;
    if (g.memory_total_bytes) r.mem_total_mib = *g.memory_total_bytes >> 20;
    r.pci_bus_id = g.pci_bus_id;
    r.mig = g.mig;
    CGOV_ASSIGN_OR_RETURN(uint32_t id, store->GpuId(r));
    ids.push_back(id);
  }
  return ids;
}

Status BuildStoredTick(const TickSample& tick, const std::vector<uint32_t>& gpu_ids,
                       ProcessAttributor* attributor, StoredTick* out_tick) {
  StoredTick& out = *out_tick;
  out.gpus.clear();
  out.processes.clear();
  out.allocations.clear();
  out.mem_used_pct_x10.reset();
  out.cpu_pct_x10 = Rounded(tick.host.cpu_pct, 10);
  out.iowait_pct_x10 = Rounded(tick.host.iowait_pct, 10);
  if (tick.host.mem_total_bytes && tick.host.mem_available_bytes &&
      *tick.host.mem_total_bytes > 0) {
    const double used =
        static_cast<double>(*tick.host.mem_total_bytes -
                            std::min(*tick.host.mem_available_bytes, *tick.host.mem_total_bytes));
    out.mem_used_pct_x10 =
        Rounded(100.0 * used / static_cast<double>(*tick.host.mem_total_bytes), 10);
  }
  for (size_t i = 0; i < tick.gpu_fast.size() && i < gpu_ids.size(); ++i) {
    StoredGpu g;
    g.gpu_id = gpu_ids[i];
    FillGpu(tick.gpu_fast[i], &g);
    g.lost = tick.gpu_fast[i].lost;
    if (i < tick.gpu_slow.size()) {
      const GpuSlowSample& slow = tick.gpu_slow[i];
      g.lost = g.lost || slow.lost;
      g.set(StoredGpuField::kPcieTxKbps, slow.pcie_tx_kbps);
      g.set(StoredGpuField::kPcieRxKbps, slow.pcie_rx_kbps);
      g.set(StoredGpuField::kSmActivePctX10, Rounded(slow.gpm.sm_active_pct, 10));
      g.set(StoredGpuField::kSmOccupancyPctX10, Rounded(slow.gpm.sm_occupancy_pct, 10));
      g.set(StoredGpuField::kTensorActivePctX10, Rounded(slow.gpm.tensor_active_pct, 10));
      g.set(StoredGpuField::kDramActivePctX10, Rounded(slow.gpm.dram_active_pct, 10));
      g.processes_known = slow.processes_known;
      for (const GpuProcess& p : slow.processes) {
        StoredProcess sp;
        sp.gpu_pos = static_cast<uint32_t>(out.gpus.size());
        sp.pid = p.pid;
        sp.compute = p.compute;
        sp.graphics = p.graphics;
        if (p.used_memory_bytes) {
          sp.mem_used_mib = static_cast<uint32_t>((*p.used_memory_bytes + (1u << 19)) >> 20);
        }
        sp.sm_util_pct = p.sm_util_pct;
        if (attributor != nullptr) {
          CGOV_ASSIGN_OR_RETURN(ProcessAttributor::Ids ids, attributor->Lookup(p.pid));
          sp.identity_id = ids.identity_id;
          sp.command_id = ids.command_id;
        }
        out.processes.push_back(sp);
      }
    }
    out.gpus.push_back(std::move(g));
  }
  if (attributor != nullptr) attributor->ForgetUnseen();
  return Status::Ok();
}

std::vector<GpuAllocation> AllocatedGpus(const std::vector<PodDevice>& devices,
                                         const std::vector<GpuInfo>& gpus) {
  std::vector<GpuAllocation> out;
  auto add = [&](size_t pos, const PodDevice& d) {
    GpuAllocation a{static_cast<uint32_t>(pos), d.namespace_name, d.pod, d.container};
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(std::move(a));
  };
  for (const PodDevice& d : devices) {
    // Time-slicing hands out replicas of one GPU as "<uuid>::<n>".
    std::string_view id = d.device_id;
    if (size_t replica = id.find("::"); replica != std::string_view::npos)
      id = id.substr(0, replica);
    bool found = false;
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (!gpus[i].uuid.empty() && gpus[i].uuid == id) {
        add(i, d);
        found = true;
      }
    }
    if (found) continue;
    // A whole GPU whose MIG instances are what cgov samples: every instance of it.
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (gpus[i].mig && !id.empty() && gpus[i].mig->parent_uuid == id) {
        add(i, d);
        found = true;
      }
    }
    // The device plugin's index strategy names a whole GPU by its index.
    if (found || !d.resource_name.starts_with("nvidia.com/") || id.empty() ||
        id.find_first_not_of("0123456789") != std::string_view::npos || id.size() > 4) {
      continue;
    }
    for (size_t i = 0; i < gpus.size(); ++i) {
      if (!gpus[i].mig && std::to_string(gpus[i].index) == id) add(i, d);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status AddAllocations(const std::vector<GpuAllocation>& allocations, ProcessAttributor* attributor,
                      StoredTick* out) {
  std::string pod_uid;
  for (const GpuAllocation& a : allocations) {
    if (a.gpu_pos >= out->gpus.size()) continue;
    CGOV_ASSIGN_OR_RETURN(
        std::optional<uint32_t> id,
        attributor->ContainerIdentity(a.namespace_name, a.pod, a.container, &pod_uid));
    if (!id) continue;  // the pod is not (yet) in the directory: its UID and labels are unknown
    // A process of the pod computing on the GPU holds it already, under its own identity.
    const bool seen =
        std::any_of(out->processes.begin(), out->processes.end(), [&](const StoredProcess& p) {
          return p.gpu_pos == a.gpu_pos && p.compute && attributor->PodOf(p.pid) == pod_uid;
        });
    if (!seen) out->allocations.push_back({a.gpu_pos, *id});
  }
  std::sort(out->allocations.begin(), out->allocations.end(),
            [](const StoredAllocation& x, const StoredAllocation& y) {
              return std::tie(x.gpu_pos, x.identity_id) < std::tie(y.gpu_pos, y.identity_id);
            });
  out->allocations.erase(std::unique(out->allocations.begin(), out->allocations.end()),
                         out->allocations.end());
  return Status::Ok();
}

}  // namespace cgov
