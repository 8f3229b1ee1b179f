// NvmlSource: the GPU memory's health as the driver keeps it (docs/nvml-abi.md, "Memory health").
//
// Ampere and later remap a failing DRAM row to a spare (nvmlDeviceGetRemappedRows); earlier GPUs
// retire the page (nvmlDeviceGetRetiredPages). Either may wait for a GPU reset ("pending"); a
// remapping that failed means no spare was left. Both are the physical GPU's: a MIG instance
// asks through its parent (which answers NOT_SUPPORTED for remapped rows while in MIG mode).
#include "telemetry/nvml_source.h"

#include <array>

namespace cgov {

using nvml::nvmlReturn_t;

nvmlReturn_t NvmlSource::ReadMemoryHealth(size_t index, MemoryHealth* out) {
  const NvmlFunctions& f = library_->fn();
  const nvml::nvmlDevice_t d = units_[index].parent;
  *out = MemoryHealth{};
  if (f.remapped_rows != nullptr && !units_[index].retired_pages_only) {
    unsigned int correctable = 0, uncorrectable = 0, pending = 0, failure = 0;
    const nvmlReturn_t ret = f.remapped_rows(d, &correctable, &uncorrectable, &pending, &failure);
    if (ret == nvml::NVML_SUCCESS) {
      out->row_remapping = true;
      out->remapped_correctable = correctable;
      out->remapped_uncorrectable = uncorrectable;
      out->remap_pending = pending != 0;
      out->remap_failure = failure != 0;
      return ret;
    }
    if (ret != nvml::NVML_ERROR_NOT_SUPPORTED || f.retired_pages == nullptr) return ret;
    units_[index].retired_pages_only = true;  // a GPU before Ampere: pages are retired instead
  }
  if (f.retired_pages == nullptr) return nvml::NVML_ERROR_FUNCTION_NOT_FOUND;
  // Only the counts are wanted; the driver says how many when the buffer is too small.
  std::array<unsigned long long, 64> addresses{};
  for (const int cause : {nvml::NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
                          nvml::NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR}) {
    unsigned int count = addresses.size();
    const nvmlReturn_t ret = f.retired_pages(d, cause, &count, addresses.data());
    if (ret != nvml::NVML_SUCCESS && ret != nvml::NVML_ERROR_INSUFFICIENT_SIZE) return ret;
    (cause == nvml::NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? out->retired_dbe
                                                                    : out->retired_sbe) = count;
  }
  int pending = 0;  // nvmlEnableState_t
  if (f.retired_pages_pending != nullptr &&
      f.retired_pages_pending(d, &pending) == nvml::NVML_SUCCESS) {
    out->retired_pending = pending != 0;
  }
  return nvml::NVML_SUCCESS;
}

}  // namespace cgov
