// NvmlSource: profiling metrics by NVML GPM (Hopper and later).
#include "telemetry/nvml_source.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace cgov {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

// Each read takes a GPM sample; the metrics are the driver's over the time since the previous
// one (so the first read has none).
void NvmlSource::ReadGpm(size_t index, bool quiet, GpuSlowSample* out) {
  const NvmlFunctions& f = library_->fn();
  GpmState& g = units_[index].gpm;
  for (nvml::nvmlGpmSample_t& sample : g.samples) {
    if (sample == nullptr && f.gpm_sample_alloc(&sample) != nvml::NVML_SUCCESS) return;
  }
  const std::optional<MigInstance>& mig = gpus_[index].mig;
  nvmlReturn_t ret =
      mig ? f.gpm_mig_sample_get(units_[index].parent, mig->gpu_instance_id, g.samples[g.current])
          : f.gpm_sample_get(units_[index].handle, g.samples[g.current]);
  if (ret != nvml::NVML_SUCCESS) {
    CheckLost(index, ret);
    g.primed = false;
    if (units_[index].util_from_gpm) shared_[index].gpm_util.store(-1, std::memory_order_relaxed);
    return;
  }
  if (g.primed) {
    struct Wanted {
      unsigned int id;
      std::optional<double> GpmMetrics::*field;
    };
    // The activity metrics first (kActivity of them): each request that holds any of them costs
    // the driver an RPC to the GPU's firmware; PCIe and NVLink alone do not.
    static constexpr size_t kActivity = 5;
    static constexpr Wanted kWanted[] = {
        {nvml::NVML_GPM_METRIC_GRAPHICS_UTIL, &GpmMetrics::graphics_active_pct},
        {nvml::NVML_GPM_METRIC_SM_UTIL, &GpmMetrics::sm_active_pct},
        {nvml::NVML_GPM_METRIC_SM_OCCUPANCY, &GpmMetrics::sm_occupancy_pct},
        {nvml::NVML_GPM_METRIC_ANY_TENSOR_UTIL, &GpmMetrics::tensor_active_pct},
        {nvml::NVML_GPM_METRIC_DRAM_BW_UTIL, &GpmMetrics::dram_active_pct},
        {nvml::NVML_GPM_METRIC_PCIE_TX_PER_SEC, &GpmMetrics::pcie_tx_mib_s},
        {nvml::NVML_GPM_METRIC_PCIE_RX_PER_SEC, &GpmMetrics::pcie_rx_mib_s},
        {nvml::NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, &GpmMetrics::nvlink_tx_mib_s},
        {nvml::NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, &GpmMetrics::nvlink_rx_mib_s},
    };
    if (!gpm_request_) gpm_request_ = std::make_unique<nvml::nvmlGpmMetricsGet_t>();  // zeroed
    nvml::nvmlGpmMetricsGet_t& request = *gpm_request_;  // only the slots asked for are reset
    const size_t first = quiet ? kActivity : 0;
    request.version = nvml::NVML_GPM_METRICS_GET_VERSION;
    request.numMetrics = static_cast<unsigned int>(std::size(kWanted) - first);
    request.sample1 = g.samples[g.current ^ 1];
    request.sample2 = g.samples[g.current];
    for (size_t k = first; k < std::size(kWanted); ++k) {
      request.metrics[k - first] = nvml::nvmlGpmMetric_t{};
      request.metrics[k - first].metricId = kWanted[k].id;
    }
    if (f.gpm_metrics_get(&request) == nvml::NVML_SUCCESS) {
      for (size_t k = first; k < std::size(kWanted); ++k) {
        const nvml::nvmlGpmMetric_t& m = request.metrics[k - first];
        if (m.nvmlReturn == nvml::NVML_SUCCESS && std::isfinite(m.value) && m.value >= 0) {
          out->gpm.*kWanted[k].field = m.value;
        }
      }
      for (size_t k = 0; k < first; ++k) out->gpm.*kWanted[k].field = 0.0;
    }
    if (units_[index].pcie_from_gpm) {  // MiB/s as KB/s, the unit of nvmlDeviceGetPcieThroughput
      auto kbps = [](const std::optional<double>& mib_s) -> std::optional<uint32_t> {
        if (!mib_s) return std::nullopt;
        return static_cast<uint32_t>(std::min(std::llround(*mib_s * 1048.576), 0xFFFFFFFFLL));
      };
      out->pcie_tx_kbps = kbps(out->gpm.pcie_tx_mib_s);
      out->pcie_rx_kbps = kbps(out->gpm.pcie_rx_mib_s);
    }
    if (units_[index].util_from_gpm) {
      const std::optional<double>& pct = out->gpm.graphics_active_pct;
      shared_[index].gpm_util.store(pct ? static_cast<int>(std::lround(std::min(*pct, 100.0))) : -1,
                                    std::memory_order_relaxed);
    }
  }
  g.current ^= 1;
  g.primed = true;
}

}  // namespace cgov
