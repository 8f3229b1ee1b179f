// The right-size plan as a report shows it (`cgov report --plan`): each GPU model's
// consolidation with its replay, each workload's fitting MIG profile, and the two findings
// whose levers carry the plan's dollars into the ledger's savings (analysis/savings.h), so they
// obey the savings rules: combined per GPU with every other lever, never above the waste.
#ifndef CGOV_ANALYSIS_PLAN_SUMMARY_H_
#define CGOV_ANALYSIS_PLAN_SUMMARY_H_

#include <map>
#include <string>
#include <vector>

#include "analysis/findings.h"
#include "analysis/rightsize.h"
#include "analysis/savings.h"
#include "core/money.h"

namespace cgov {

inline constexpr const char* kConsolidateFindingId = "consolidate_gpus";
inline constexpr const char* kRightSizeFindingId = "right_size";

struct PlanBinRow {
  std::string target;                // the GPU that stays, as the report names it
  std::vector<std::string> sources;  // the GPUs whose loads it takes (itself first)
  uint64_t capacity_mib = 0;
  uint64_t peak_mem_mib = 0;    // the replay's highest summed memory
  double peak_compute_pct = 0;  // ... and compute (100 = one whole GPU)
  double compute_over_pct = 0;  // of the replayed time above the compute ceiling
};

struct PlanGroupRow {
  std::string model;
  uint64_t mem_total_mib = 0;
  std::vector<std::string> gpus;  // every GPU of the model in the window
  size_t gpus_planned = 0;        // gpus.size() when no packing passed the replay
  std::vector<std::string> freed;
  std::string sizing;                // the accepted packing's ("p99", "peak"); "" none
  std::vector<PlanBinRow> bins;      // the accepted packing's
  std::vector<std::string> refused;  // packings the replay refused, and why
  MicroUsd usd = 0, usd_month = 0;   // its part of consolidate_gpus' dollars
};

struct PlanWorkloadRow {
  std::string name;  // the identity as --by names it, with its id when names repeat
  uint32_t identity_id = 0;
  std::string command;    // the command its processes held GPUs longest with ("" unknown)
  std::string gpu_model;  // of the GPU it held longest
  uint64_t mem_peak_mib = 0, mem_p99_mib = 0;
  double compute_p50_pct = 0, compute_p95_pct = 0;
  uint32_t gpus_max = 0, gpus_p99 = 0;  // GPUs held at once
  int64_t held_ms = 0;                  // GPU-time it held (each GPU counts)
  int64_t attributed_ms = 0;            // its share of the GPUs' time (the ledger's)
  std::string profile;                  // "" when none fits: "1g.10gb", or a GPU's label "L4 24GB"
  std::string profile_kind;             // "mig" (an instance of its GPU) or "gpu" (a cheaper one)
  uint64_t profile_mib = 0, headroom_mib = 0;
  double profile_price_share = 1;   // its price share of the GPU (1: none)
  std::string why;                  // why no profile
  MicroUsd usd = 0, usd_month = 0;  // its part of right_size's dollars
};

struct PlanSummary {
  bool computed = false;
  PlanOptions options;
  int64_t from_ms = 0, until_ms = 0;  // the raw ticks read
  int64_t covered_ms = 0;
  double days = 0;  // (until - from) in days
  std::vector<PlanGroupRow> groups;
  std::vector<PlanWorkloadRow> workloads;  // by attributed time, descending
  size_t gpus_now = 0, gpus_planned = 0;
  size_t workloads_fitting = 0;  // workloads with a profile or a cheaper GPU
  // Each lever's dollars in the window, capped by the waste of each GPU it acts on, and the same
  // for a month of 30 days at the window's rate.
  MicroUsd consolidate_usd = 0, consolidate_usd_month = 0;
  MicroUsd rightsize_usd = 0, rightsize_usd_month = 0;
  bool priced = false;
  std::vector<std::string> notes;
};

// One GPU of the report, as the plan needs it: its index in UsageTotals::gpus.
struct PlanReportGpu {
  uint32_t gpu_id = 0;
  std::string label;
  int64_t known_ms = 0;
  int64_t effective_ms = 0;  // its known time x its mean utilization
};

// A catalog GPU model a workload could move to (a cheaper SKU whose memory and throughput fit).
struct PlanSku {
  std::string model, label;  // the catalog's model (NVML name) and how a report names it
  uint64_t memory_mib = 0;   // its nominal GB, as GiB
  double tflops = 0;         // DenseTensorTflops: the throughput a workload is assumed to scale by
  MicroUsd price = 0;        // the catalog's on-demand reference per GPU-hour
};

struct PlanContext {
  const PlanInput* input = nullptr;
  const std::vector<GpuRecord>* gpus = nullptr;                    // the history's records
  std::vector<PlanReportGpu> report_gpus;                          // by usage index
  std::map<uint32_t, std::string> identity_names;                  // by identity id
  std::map<uint32_t, std::string> command_names;                   // by command id
  std::map<std::pair<uint32_t, uint32_t>, int64_t> attributed_ms;  // (identity, GPU id)
  int64_t known_ms = 0;                                            // all GPUs' (the findings' base)
  std::vector<PlanSku> skus;                                       // the catalog's priced models
  std::map<uint32_t, std::string> catalog_model;                   // by GPU id: its catalog model
};

// The plan's rows and its two findings (consolidate_gpus; right_size: a MIG profile or a cheaper
// GPU, whichever costs less) (appended to `findings` when they free anything).
PlanSummary BuildPlan(const PlanContext& c, std::vector<Finding>* findings);

// The levers' dollars from the combined savings: each lever's fraction of each GPU capped by
// that GPU's waste, weighed as CombineSavings weighs it, of the exact spend; then shared out to
// the groups and workloads in proportion to their claims (their parts add up to the lever's).
void PricePlan(const SavingsBlock& savings, const CostBlock& cost, PlanSummary* plan);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_PLAN_SUMMARY_H_
