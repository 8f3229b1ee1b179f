#include "analysis/mig_profiles.h"

#include <cmath>

namespace cgov {
namespace {

// The driver keeps part of each instance's memory (A100-SXM4-40GB: a 1g.5gb instance reports
// 4,864 MiB of the 5,067 MiB an eighth would be): a plan counts 95 % of the share usable.
constexpr double kUsableShare = 0.95;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The product's memory as its profile names count it (GB), or 0 when the model has no MIG.
int NominalGb(std::string_view name, uint64_t mem_total_mib) {
  const double gib = static_cast<double>(mem_total_mib) / 1024.0;
  if (Contains(name, "A30")) return 24;
  if (Contains(name, "A100")) return gib < 60 ? 40 : 80;
  // "GH200" and "H200" both hold "H20": the longer names first.
  if (Contains(name, "GH200")) return 96;
  if (Contains(name, "H200")) return 141;
  if (Contains(name, "H20")) return 96;
  if (Contains(name, "H100")) return gib < 85 ? 80 : 94;
  if (Contains(name, "B200")) return 180;
  return 0;
}

}  // namespace

std::vector<MigProfile> MigProfilesFor(std::string_view name, uint64_t mem_total_mib) {
  const int gb = NominalGb(name, mem_total_mib);
  if (gb == 0 || mem_total_mib == 0) return {};
  const bool a30 = Contains(name, "A30");
  // (compute slices, memory eighths): A30 has 4 slices of a quarter each; the others 7 compute
  // slices over 8 memory slices, 3g and 4g both with half the memory.
  const std::vector<std::pair<int, int>> shapes =
      a30 ? std::vector<std::pair<int, int>>{{1, 2}, {2, 4}, {4, 8}}
          : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {3, 4}, {4, 4}, {7, 8}};
  std::vector<MigProfile> out;
  for (const auto& [g, eighths] : shapes) {
    MigProfile p;
    p.compute_slices = g;
    p.total_slices = a30 ? 4 : 7;
    p.memory_eighths = eighths;
    // NVIDIA names round the share of the product's GB half up (141 GB / 8 = 17.6: 1g.18gb).
    const long profile_gb = std::lround(std::floor(gb * eighths / 8.0 + 0.5));
    p.name = std::to_string(g) + "g." + std::to_string(profile_gb) + "gb";
    p.usable_mib =
        static_cast<uint64_t>(static_cast<double>(mem_total_mib) * eighths / 8.0 * kUsableShare);
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<double> DenseTensorTflops(std::string_view model) {
  struct Row {
    std::string_view model;
    double tflops;
  };
  // Datasheet BF16 Tensor Core figures (sparse / 2): H100 SXM and H200 1,979; H100 PCIe 1,513;
  // H100 NVL and H200 NVL 1,671; B200 4,500; A100 624; L40S 733; L4 242; A10 250; RTX A6000
  // 309.7. T4 (65) and V100 (125): FP16 mixed precision, no sparsity.
  static constexpr Row kRows[] = {{"NVIDIA H200", 989},
                                  {"NVIDIA H200 NVL", 835},
                                  {"NVIDIA H100 80GB HBM3", 989},
                                  {"NVIDIA H100 PCIe", 756},
                                  {"NVIDIA H100 NVL", 835},
                                  {"NVIDIA A100-SXM4-80GB", 312},
                                  {"NVIDIA A100 80GB PCIe", 312},
                                  {"NVIDIA A100-SXM4-40GB", 312},
                                  {"NVIDIA B200", 2250},
                                  {"NVIDIA L40S", 362},
                                  {"NVIDIA L4", 121},
                                  {"NVIDIA A10", 125},
                                  {"Tesla T4", 65},
                                  {"Tesla V100", 125},
                                  {"NVIDIA RTX A6000", 155}};
  for (const Row& r : kRows) {
    if (r.model == model) return r.tflops;
  }
  return std::nullopt;
}

}  // namespace cgov
