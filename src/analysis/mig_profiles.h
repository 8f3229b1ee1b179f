// GPU models' facts for the right-size plan: the MIG profiles a model can be partitioned into
// (NVIDIA's MIG user guide, "Supported MIG Profiles": A30, A100 40/80 GB, H100 80/94/96 GB, H20,
// H200, B200), for the right-size plan (analysis/rightsize.h). Pure.
#ifndef CGOV_ANALYSIS_MIG_PROFILES_H_
#define CGOV_ANALYSIS_MIG_PROFILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cgov {

struct MigProfile {
  std::string name;         // "1g.10gb", as nvidia-smi mig -lgip names it
  int compute_slices = 0;   // the "g": of `total_slices` compute slices
  int total_slices = 7;     // 7 (4 on A30)
  int memory_eighths = 0;   // its memory, of the GPU's 8 memory slices (A30: 4ths as 8ths)
  uint64_t usable_mib = 0;  // memory a process can use: the share less the driver's reserve
  double PriceShare() const {
    return memory_eighths / 8.0;
  }  // cgov prices a MIG instance by
     // its memory share
  double ComputeShare() const { return static_cast<double>(compute_slices) / total_slices; }
};

// The GPU instance profiles of a model, smallest first; empty when the model has no MIG (or is
// not one cgov knows). `name`: NVML's product name; `mem_total_mib`: the whole GPU's memory.
// The "+me" (media) and 1g double-memory variants are left out: a plan names the plain ones.
std::vector<MigProfile> MigProfilesFor(std::string_view name, uint64_t mem_total_mib);

// Dense BF16/FP16 Tensor Core TFLOPS of a price-catalog model (data/prices.json's `model`), from
// NVIDIA's datasheets (their "with sparsity" figures halved): the throughput a cheaper-SKU
// suggestion assumes a workload scales by. nullopt for a model without a figure here (A10G,
// RTX 4090: none published by NVIDIA in this form), which is then never suggested.
std::optional<double> DenseTensorTflops(std::string_view catalog_model);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_MIG_PROFILES_H_
