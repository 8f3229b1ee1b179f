#include "analysis/plan_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/showback.h"
#include "core/duration.h"
#include "core/time_format.h"

namespace cgov {
namespace {

constexpr int64_t kMonthMs = 30LL * 24 * 3600 * 1000;

// The context indexed once: GPUs by id, each identity's attributed time by GPU.
struct Lookup {
  explicit Lookup(const PlanContext& context) : c(context) {
    for (size_t i = 0; i < c.report_gpus.size(); ++i) index_of[c.report_gpus[i].gpu_id] = i;
    for (const GpuRecord& g : *c.gpus) record_of[g.id] = &g;
    for (const auto& [key, ms] : c.attributed_ms)
      attributed[key.first].emplace_back(key.second, ms);
  }
  std::string Label(uint32_t gpu_id) const {
    auto it = index_of.find(gpu_id);
    return it != index_of.end() ? c.report_gpus[it->second].label : "id " + std::to_string(gpu_id);
  }
  int Index(uint32_t gpu_id) const {
    auto it = index_of.find(gpu_id);
    return it != index_of.end() ? static_cast<int>(it->second) : -1;
  }
  const GpuRecord* Record(uint32_t gpu_id) const {
    auto it = record_of.find(gpu_id);
    return it != record_of.end() ? it->second : nullptr;
  }
  // (GPU id, attributed ms) of one identity.
  const std::vector<std::pair<uint32_t, int64_t>>& Attributed(uint32_t identity) const {
    static const std::vector<std::pair<uint32_t, int64_t>> kNone;
    auto it = attributed.find(identity);
    return it != attributed.end() ? it->second : kNone;
  }

  const PlanContext& c;
  std::map<uint32_t, size_t> index_of;
  std::map<uint32_t, const GpuRecord*> record_of;
  std::map<uint32_t, std::vector<std::pair<uint32_t, int64_t>>> attributed;
};

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

double PlanPct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// One candidate the replay refused, in words.
std::string RefusedText(const Lookup& l, const PlanCandidate& c, const PlanOptions& o) {
  std::string why;
  for (const PlanBin& b : c.bins) {
    if (b.mem_over_ms > 0) {
      why += fmt::format("{}memory over on GPU {} for {} ({:.2f} % of the time, peak {} of {} MiB)",
                         why.empty() ? "" : "; ", l.Label(b.target_gpu_id), SpanOf(b.mem_over_ms),
                         PlanPct(b.mem_over_ms, c.replay_ms), b.peak_mem_mib, b.capacity_mib);
    }
  }
  if (why.empty()) {
    why = fmt::format("compute over {} % for {:.1f} % of the time (allowed {} %)",
                      o.compute_ceiling_pct, PlanPct(c.ComputeOverMs(), c.replay_ms),
                      o.compute_over_pct);
  }
  return fmt::format("{} sizing onto {} GPU(s): {}", c.sizing, c.bins.size(), why);
}

PlanGroupRow GroupRow(const Lookup& l, const PlanGroup& g, const PlanOptions& o) {
  PlanGroupRow row;
  row.model = g.model;
  row.mem_total_mib = g.mem_total_mib;
  for (uint32_t id : g.gpu_ids) row.gpus.push_back(l.Label(id));
  row.gpus_planned = g.GpusPlanned();
  for (size_t i = 0; i < g.candidates.size(); ++i) {
    const PlanCandidate& c = g.candidates[i];
    if (static_cast<int>(i) != g.chosen) {
      if (g.chosen < 0 || static_cast<int>(i) < g.chosen)
        row.refused.push_back(RefusedText(l, c, o));
      continue;
    }
    row.sizing = c.sizing;
    for (const PlanBin& b : c.bins) {
      PlanBinRow& bin = row.bins.emplace_back();
      bin.target = l.Label(b.target_gpu_id);
      for (uint32_t s : b.sources) bin.sources.push_back(l.Label(s));
      bin.capacity_mib = b.capacity_mib;
      bin.peak_mem_mib = b.peak_mem_mib;
      bin.peak_compute_pct = b.peak_compute_x10 / 10.0;
      bin.compute_over_pct = PlanPct(b.compute_over_ms, c.replay_ms);
    }
    for (uint32_t id : g.gpu_ids) {
      bool target = false;
      for (const PlanBin& b : c.bins) target = target || b.target_gpu_id == id;
      if (!target) row.freed.push_back(l.Label(id));
    }
  }
  return row;
}

// Sets a finding's GPUs and per-GPU fractions (each clamped to [0, 1]; by usage index), its
// evidence and its savings fraction of all GPUs' known time.
void ClaimGpus(const Lookup& l, const std::map<unsigned, double>& fraction_of, Finding* f) {
  double recovered_ms = 0;
  for (const auto& [index, fraction] : fraction_of) {
    const double clamped = std::clamp(fraction, 0.0, 1.0);
    const int64_t known = l.c.report_gpus[index].known_ms;
    if (clamped <= 0 || known <= 0) continue;
    f->gpu_savings.push_back({index, clamped});
    f->gpus.push_back(index);
    f->gpu_names.push_back(l.c.report_gpus[index].label);
    recovered_ms += clamped * static_cast<double>(known);
  }
  f->evidence_gpu_ms = static_cast<int64_t>(recovered_ms);
  f->savings_fraction = recovered_ms / static_cast<double>(std::max<int64_t>(1, l.c.known_ms));
}

// consolidate_gpus: each freed GPU's whole time, and on the GPU that takes a freed GPU's load
// the time that load kept busy (its effective time, now spent in the taker's idle capacity). A
// freed GPU's claim is capped by its own waste and the taker's by its own, so no GPU-second is
// claimed twice and the sum is the freed GPUs' time when the caps allow.
std::map<unsigned, double> ConsolidationClaims(const Lookup& l, std::vector<std::string>* moves) {
  std::map<unsigned, double> claim;  // by usage index: fraction of that GPU's known time
  auto gpu = [&](uint32_t id) -> const PlanReportGpu* {
    const int index = l.Index(id);
    return index < 0 ? nullptr : &l.c.report_gpus[static_cast<size_t>(index)];
  };
  for (const PlanGroup& g : l.c.input->groups) {
    if (g.chosen < 0) continue;
    const PlanCandidate& c = g.candidates[static_cast<size_t>(g.chosen)];
    std::set<uint32_t> targets;
    for (const PlanBin& b : c.bins) targets.insert(b.target_gpu_id);
    for (uint32_t id : g.gpu_ids) {
      if (!targets.count(id) && gpu(id) && gpu(id)->known_ms > 0) {
        claim[static_cast<unsigned>(l.Index(id))] = 1.0;
      }
    }
    for (const PlanBin& b : c.bins) {
      const PlanReportGpu* taker = gpu(b.target_gpu_id);
      if (b.sources.size() > 1) {
        std::vector<std::string> names;
        for (uint32_t s : b.sources) names.push_back(l.Label(s));
        moves->push_back(fmt::format("GPU {} takes {}", l.Label(b.target_gpu_id), Join(names)));
      }
      if (taker == nullptr || taker->known_ms <= 0) continue;
      for (uint32_t s : b.sources) {
        const PlanReportGpu* from = gpu(s);
        if (s == b.target_gpu_id || from == nullptr) continue;
        claim[static_cast<unsigned>(l.Index(b.target_gpu_id))] +=
            static_cast<double>(from->effective_ms) / static_cast<double>(taker->known_ms);
      }
    }
  }
  return claim;
}

void ConsolidateFinding(const Lookup& l, const PlanSummary& plan, std::vector<Finding>* out) {
  Finding f;
  std::vector<std::string> moves;
  size_t freed = 0;
  for (const PlanGroupRow& g : plan.groups) freed += g.freed.size();
  ClaimGpus(l, ConsolidationClaims(l, &moves), &f);
  if (freed == 0 || f.gpu_savings.empty()) return;
  f.id = kConsolidateFindingId;
  f.severity = Severity::kWarning;
  f.title = fmt::format("The window's loads fit on {} of {} GPUs: {} could be freed",
                        plan.gpus_planned, plan.gpus_now, freed);
  f.observed = static_cast<double>(freed);
  f.observed_unit = "GPUs freed";
  f.threshold = 1;
  f.threshold_text = fmt::format(
      ">= 1 GPU freed with memory never over in the replay and compute over {} % for <= {} % of "
      "the time",
      plan.options.compute_ceiling_pct, plan.options.compute_over_pct);
  f.window_end_ms = plan.covered_ms;
  f.recommendation = fmt::format(
      "Pack the loads as the Right-size plan lays out ({}), sharing each GPU by time-slicing or "
      "CUDA MPS, and release the {} GPU(s) left. Replayed over the {:.1f} days of samples, the "
      "plan never ran out of memory. Co-located jobs interfere (not measured); a multi-GPU job "
      "needs its ranks on separate GPUs.",
      moves.empty() ? "only idle GPUs to release" : Join(moves), freed, plan.days);
  f.remediations = {"cuda_mps", "release_idle_gpu"};
  f.axis = Axis::kUtilization;
  f.savings_reasoning =
      "each freed GPU's time, and on each GPU taking a load the time that load kept its own GPU "
      "busy (now in the taker's idle capacity); each capped by that GPU's measured waste";
  out->push_back(std::move(f));
}

// right_size: a workload on a profile or a cheaper GPU needs only its price share of its time.
void RightSizeFinding(const Lookup& l, const PlanSummary& plan, std::vector<Finding>* out) {
  std::map<unsigned, double> saved_ms;  // by usage index
  std::vector<std::string> named;
  for (const PlanWorkloadRow& w : plan.workloads) {
    if (w.profile.empty()) continue;
    named.push_back(
        fmt::format("{} on {}{}", w.name, w.profile_kind == "gpu" ? "an " : "MIG ", w.profile));
    for (const auto& [gpu, ms] : l.Attributed(w.identity_id)) {
      const int index = l.Index(gpu);
      if (index < 0) continue;
      saved_ms[static_cast<unsigned>(index)] +=
          (1 - w.profile_price_share) * static_cast<double>(ms);
    }
  }
  for (auto& [index, ms] : saved_ms) {
    ms /= static_cast<double>(std::max<int64_t>(1, l.c.report_gpus[index].known_ms));
  }
  Finding f;
  ClaimGpus(l, saved_ms, &f);  // (now fractions of each GPU's known time)
  if (f.gpu_savings.empty()) return;
  f.id = kRightSizeFindingId;
  f.severity = Severity::kInfo;
  f.title = fmt::format("{} workload(s) fit a MIG instance or a cheaper GPU", named.size());
  f.observed = static_cast<double>(named.size());
  f.observed_unit = "workloads";
  f.threshold = 1;
  f.threshold_text = fmt::format(
      "peak memory within a profile (or a cheaper GPU), p99 with {} % headroom, p95 compute within "
      "its share x {} %, one GPU at a time",
      plan.options.memory_margin_pct, plan.options.compute_ceiling_pct);
  f.window_end_ms = plan.covered_ms;
  f.recommendation = fmt::format(
      "Run {} (the Right-size table has each one's peak, p99 and headroom). MIG needs the GPU "
      "drained and reconfigured, the rest of it then serves other work; a cheaper GPU's speed is "
      "an assumption (dense Tensor TFLOPS): measure a step before moving.",
      Join(named));
  f.remediations = {"mig", "smaller_sku"};
  f.axis = Axis::kUtilization;
  f.savings_reasoning =
      "each workload's share of its GPUs' time x (1 - the price share of its profile (its memory "
      "share) or cheaper GPU (catalog prices)); capped by each GPU's waste";
  out->push_back(std::move(f));
}

// A cheaper catalog GPU whose memory (90 % of its nominal GB, under what each card reports) holds
// the workload's peak and, with the headroom, its p99, and whose throughput holds its p95 compute
// under the ceiling, assuming the work scales with dense Tensor TFLOPS: the cheapest, by its
// price's share of the workload's GPU's (both the catalog's references).
struct SkuChoice {
  const PlanSku* sku = nullptr;
  double price_share = 1;
  uint64_t usable_mib = 0;
  double compute_pct = 0;  // its p95 compute on the new GPU
};

std::optional<SkuChoice> CheaperSku(const Lookup& l, const WorkloadLoad& w, uint32_t gpu_id,
                                    const PlanOptions& o) {
  auto model = l.c.catalog_model.find(gpu_id);
  if (model == l.c.catalog_model.end() || w.gpus_at_once.Percentile(0.99) > 1) return std::nullopt;
  const PlanSku* now = nullptr;
  for (const PlanSku& s : l.c.skus) now = s.model == model->second ? &s : now;
  if (now == nullptr || now->price <= 0) return std::nullopt;
  const uint64_t p99 = w.mem_mib.Percentile(0.99), peak = w.mem_mib.max();
  const double p95 = w.compute_x10.Percentile(0.95) / 10.0;
  std::optional<SkuChoice> best;
  for (const PlanSku& s : l.c.skus) {
    if (&s == now || s.price >= now->price || s.tflops <= 0) continue;
    const auto usable = static_cast<uint64_t>(static_cast<double>(s.memory_mib) * 0.9);
    const uint64_t fill = usable * static_cast<uint64_t>(100 - o.memory_margin_pct) / 100;
    const double compute = p95 * now->tflops / s.tflops;
    if (peak > usable || p99 > fill || compute > o.compute_ceiling_pct) continue;
    const double share = static_cast<double>(s.price) / static_cast<double>(now->price);
    if (!best || share < best->price_share) best = SkuChoice{&s, share, usable, compute};
  }
  return best;
}

PlanWorkloadRow WorkloadRow(const Lookup& l, uint32_t id, const WorkloadLoad& w,
                            const PlanOptions& o) {
  PlanWorkloadRow row;
  row.identity_id = id;
  auto name = l.c.identity_names.find(id);
  row.name = name != l.c.identity_names.end() ? name->second : "(unknown)";
  row.mem_peak_mib = w.mem_mib.max();
  row.mem_p99_mib = w.mem_mib.Percentile(0.99);
  row.compute_p50_pct = w.compute_x10.Percentile(0.5) / 10.0;
  row.compute_p95_pct = w.compute_x10.Percentile(0.95) / 10.0;
  row.gpus_max = w.gpus_at_once.max();
  row.gpus_p99 = w.gpus_at_once.Percentile(0.99);
  uint32_t longest = 0;
  int64_t longest_ms = -1;
  for (const auto& [gpu, ms] : w.held_ms_by_gpu) {
    row.held_ms += ms;
    if (ms > longest_ms) longest = gpu, longest_ms = ms;
  }
  for (const auto& [gpu, ms] : l.Attributed(id)) row.attributed_ms += ms;
  int64_t command_ms = -1;
  for (const auto& [command, ms] : w.held_ms_by_command) {
    auto it = l.c.command_names.find(command);
    if (ms > command_ms && it != l.c.command_names.end()) row.command = it->second, command_ms = ms;
  }
  const GpuRecord* gpu = l.Record(longest);
  if (gpu == nullptr) return row;
  row.gpu_model = gpu->name;
  const WorkloadAdvice advice = AdviseWorkload(w, *gpu, o);
  row.why = advice.why;
  if (advice.profile) {
    row.profile = advice.profile->name;
    row.profile_kind = "mig";
    row.profile_mib = advice.profile->usable_mib;
    row.headroom_mib = advice.headroom_mib;
    row.profile_price_share = advice.profile->PriceShare();
    row.why =
        fmt::format("{}/8 of the GPU's price (its memory share)", advice.profile->memory_eighths);
  }
  if (const std::optional<SkuChoice> sku = CheaperSku(l, w, longest, o);
      sku && sku->price_share < row.profile_price_share) {
    row.profile = sku->sku->label;
    row.profile_kind = "gpu";
    row.profile_mib = sku->usable_mib;
    row.headroom_mib = sku->usable_mib - row.mem_p99_mib;
    row.profile_price_share = sku->price_share;
    row.why = fmt::format(
        "a cheaper GPU ({:.0f} % of the price): its p95 compute would be {:.1f} % there, assuming "
        "throughput scales with dense Tensor TFLOPS",
        100 * sku->price_share, sku->compute_pct);
  }
  return row;
}

}  // namespace

PlanSummary BuildPlan(const PlanContext& c, std::vector<Finding>* findings) {
  PlanSummary plan;
  const PlanInput& in = *c.input;
  const Lookup l(c);
  plan.computed = true;
  plan.options = in.options;
  plan.from_ms = in.profile.from_ms;
  plan.until_ms = in.profile.until_ms;
  plan.covered_ms = in.profile.covered_ms;
  plan.days = static_cast<double>(plan.until_ms - plan.from_ms) / 86'400'000.0;
  for (const PlanGroup& g : in.groups) {
    plan.groups.push_back(GroupRow(l, g, in.options));
    plan.gpus_now += g.gpu_ids.size();
    plan.gpus_planned += g.GpusPlanned();
  }
  for (const auto& [id, w] : in.profile.workloads) {
    plan.workloads.push_back(WorkloadRow(l, id, w, in.options));
  }
  for (const PlanWorkloadRow& w : plan.workloads)
    plan.workloads_fitting += w.profile.empty() ? 0 : 1;
  std::stable_sort(plan.workloads.begin(), plan.workloads.end(),
                   [](const PlanWorkloadRow& a, const PlanWorkloadRow& b) {
                     return a.attributed_ms > b.attributed_ms;
                   });
  if (!in.source_note.empty()) plan.notes.push_back(in.source_note);
  if (in.profile.ticks == 0) {
    plan.notes.push_back(
        "no raw ticks in the window: nothing to plan (raw ticks older than the daemon's --retain "
        "are pruned; rollups cannot be replayed)");
  } else if (in.raw_pruned_before_ms) {
    plan.notes.push_back(fmt::format(
        "raw ticks before {} were pruned (--retain): the plan covers only the ticks kept, from "
        "there on",
        FormatMinuteUtc(*in.raw_pruned_before_ms)));
  }
  ConsolidateFinding(l, plan, findings);
  RightSizeFinding(l, plan, findings);
  return plan;
}

void PricePlan(const SavingsBlock& savings, const CostBlock& cost, PlanSummary* plan) {
  plan->priced = cost.priced;
  if (!cost.priced) return;
  auto lever_usd = [&](const char* id) {
    double fraction = 0;
    for (const GpuSavings& row : savings.gpus) {
      for (const SavingsLever& lever : row.levers) {
        if (lever.finding_id == id)
          fraction += row.weight * std::min(lever.fraction, row.waste_fraction);
      }
    }
    return RoundToCent(static_cast<MicroUsd>(std::llround(
        static_cast<double>(cost.exact_total) * std::min(fraction, savings.waste_fraction))));
  };
  const int64_t span = std::max<int64_t>(1, plan->until_ms - plan->from_ms);
  auto month = [span](MicroUsd usd) {
    return RoundToCent(static_cast<MicroUsd>(std::llround(
        static_cast<double>(usd) * static_cast<double>(kMonthMs) / static_cast<double>(span))));
  };
  plan->consolidate_usd = lever_usd(kConsolidateFindingId);
  plan->rightsize_usd = lever_usd(kRightSizeFindingId);
  plan->consolidate_usd_month = month(plan->consolidate_usd);
  plan->rightsize_usd_month = month(plan->rightsize_usd);
  // Shared out in proportion to the claims: a group's freed GPUs, a workload's saved GPU-time;
  // the parts add up to the lever's cents exactly.
  auto share = [](MicroUsd total, const std::vector<int64_t>& claims) {
    std::vector<int64_t> cents = LargestRemainder(total / kMicroPerCent, claims);
    for (int64_t& c : cents) c *= kMicroPerCent;
    return cents;
  };
  std::vector<int64_t> claims;
  for (const PlanGroupRow& g : plan->groups) claims.push_back(static_cast<int64_t>(g.freed.size()));
  std::vector<int64_t> usd = share(plan->consolidate_usd, claims);
  std::vector<int64_t> usd_month = share(plan->consolidate_usd_month, claims);
  for (size_t i = 0; i < plan->groups.size(); ++i) {
    plan->groups[i].usd = usd[i];
    plan->groups[i].usd_month = usd_month[i];
  }
  claims.clear();
  for (const PlanWorkloadRow& w : plan->workloads) {
    claims.push_back(w.profile.empty() ? 0
                                       : std::llround(static_cast<double>(w.attributed_ms) *
                                                      (1 - w.profile_price_share)));
  }
  usd = share(plan->rightsize_usd, claims);
  usd_month = share(plan->rightsize_usd_month, claims);
  for (size_t i = 0; i < plan->workloads.size(); ++i) {
    plan->workloads[i].usd = usd[i];
    plan->workloads[i].usd_month = usd_month[i];
  }
}

}  // namespace cgov
