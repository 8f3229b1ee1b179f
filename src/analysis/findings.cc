#include "analysis/findings.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace cgov {

namespace {

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000.0; }

// What each rule sees.
struct Context {
  const UsageTotals& usage;
  const CostBlock& cost;
  const std::vector<ResolvedPrice>& prices;
  int64_t known_ms;
  std::array<int64_t, kPhaseCount> phase_ms;
  std::vector<unsigned> gpus_with_data;
  const std::vector<std::string>& names;  // may be empty
};

std::string GpuName(const std::vector<std::string>& names, unsigned g) {
  return g < names.size() ? names[g] : fmt::format("{}", g);
}

std::string GpuList(const Context& c, const std::vector<unsigned>& gpus) {
  std::string out;
  for (unsigned g : gpus) out += (out.empty() ? "" : ",") + GpuName(c.names, g);
  return out.empty() ? "none" : out;
}

int64_t Phase_(const Context& c, Phase p) { return c.phase_ms[static_cast<size_t>(p)]; }

// Time under the busy threshold (70 %): truly idle, idle-held and underutilized.
int64_t BelowBusyMs(const GpuUsage& g) {
  return g.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)] +
         g.phase_ms[static_cast<size_t>(Phase::kIdleHeld)] +
         g.phase_ms[static_cast<size_t>(Phase::kUnderutilized)];
}

// The unused capacity of that time (ms): sum of ms x (100 - util) / 100.
int64_t BelowBusyWasteMs(const GpuUsage& g) {
  return (g.waste_ms_x100[static_cast<size_t>(Phase::kTrulyIdle)] +
          g.waste_ms_x100[static_cast<size_t>(Phase::kIdleHeld)] +
          g.waste_ms_x100[static_cast<size_t>(Phase::kUnderutilized)]) /
         100;
}

}  // namespace

// Swinging between a trough and busy: the stalls of a starved input pipeline. The swing is
// relative (15 <-> 95 and 30 <-> 100 are bursts, not only 5 <-> 95): at least 4 switches
// between under 50 % and at least 70 %, each side at least 15 % of the time.
//
// A swing is a loader's when it is quick: at most 10 minutes a cycle on average (a notebook that
// computes for an hour and then idles is idle-held, not starved). Swings faster than the sample
// interval are invisible to cgov: the trough then shows as steady low utilization.
bool IsBurstyGpu(const GpuUsage& g) {
  const int64_t known = g.KnownMs();
  if (g.transitions < 4 || Pct(BelowBusyMs(g), known) < 15 || Pct(g.high_ms, known) < 15) {
    return false;
  }
  const int64_t cycle_ms = 2 * known / g.transitions;
  return cycle_ms <= 10 * 60'000;
}

IdleHeldParts SplitIdleHeld(const UsageTotals& usage) {
  const size_t held = static_cast<size_t>(Phase::kIdleHeld);
  IdleHeldParts p;
  for (const GpuUsage& g : usage.gpus) {
    p.total_ms += g.phase_ms[held];
    if (IsBurstyGpu(g)) p.in_bursts_ms += g.phase_ms[held];
  }
  p.steady_ms = p.total_ms - p.in_bursts_ms;
  return p;
}

namespace {

// A GPU that computed nothing: truly idle (no process held memory, under 10 %) for at least
// 90 % of its known time.
bool IsUnused(const GpuUsage& g) {
  return g.KnownMs() > 0 &&
         Pct(g.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)], g.KnownMs()) >= 90;
}

// A duration as people read it: "7.0 days", "6.5 h", "42 min", "30 s", "200 ms".
std::string Human(int64_t ms) {
  const double s = Seconds(ms);
  if (s >= 2 * 86'400) return fmt::format("{:.1f} days", s / 86'400);
  if (s >= 3'600) return fmt::format("{:.1f} h", s / 3'600);
  if (s >= 120) return fmt::format("{:.0f} min", s / 60);
  if (s < 1) return fmt::format("{} ms", ms);
  return fmt::format("{:.0f} s", s);
}

Severity BySize(double share_pct, double critical_pct) {
  return share_pct >= critical_pct ? Severity::kCritical : Severity::kWarning;
}

// Sets a utilization lever's per-GPU fractions (`of_gpu(g)`: the share of GPU g's own known time
// it recovers) and its fraction of the spend, their sum weighted by each GPU's known time.
template <typename OfGpu>
void SetGpuSavings(const Context& c, const std::vector<unsigned>& gpus, OfGpu of_gpu, Finding* f) {
  f->gpu_savings.clear();
  double recovered_ms = 0;
  for (unsigned g : gpus) {
    const int64_t known = c.usage.gpus[g].KnownMs();
    if (known <= 0) continue;
    const double fraction = std::clamp(static_cast<double>(of_gpu(g)), 0.0, 1.0);
    if (fraction <= 0) continue;
    f->gpu_savings.push_back({g, fraction});
    recovered_ms += fraction * static_cast<double>(known);
  }
  f->savings_fraction = recovered_ms / static_cast<double>(std::max<int64_t>(1, c.known_ms));
}

// A GPU's share of its own known time spent in `ms`.
double ShareOfGpu(const Context& c, unsigned g, int64_t ms) {
  const int64_t known = c.usage.gpus[g].KnownMs();
  return known > 0 ? static_cast<double>(ms) / static_cast<double>(known) : 0;
}

void IdleHeld(const Context& c, std::vector<Finding>* out) {
  // Idle-held time of bursty GPUs is their input stalls: input_pipeline_starvation covers it.
  int64_t held = 0;
  std::vector<unsigned> gpus;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    const int64_t ms = g.phase_ms[static_cast<size_t>(Phase::kIdleHeld)];
    if (ms > 0 && !IsBurstyGpu(g)) {
      held += ms;
      gpus.push_back(i);
    }
  }
  const double share = Pct(held, c.known_ms);
  if (share < 5 && held < 300'000) return;
  Finding f;
  f.id = "idle_held_gpu";
  f.severity = BySize(share, 25);
  f.title = "GPUs held with memory allocated while computing nothing";
  // The branch that fired, with its own observed value: a share, or GPU-seconds below 5 %.
  if (share >= 5) {
    f.observed = share;
    f.observed_unit = "% of GPU-time";
    f.threshold = 5;
    f.threshold_text = ">= 5 % of GPU-time";
  } else {
    f.observed = Seconds(held);
    f.observed_unit = fmt::format("GPU-seconds ({:.1f} % of GPU-time)", share);
    f.threshold = 300;
    f.threshold_text = ">= 300 GPU-seconds (under 5 % of GPU-time)";
  }
  f.evidence_gpu_ms = held;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "A process kept memory on GPU {} for {} of GPU-time while SM utilization stayed under 10 %: "
      "end the process or release the GPU when it is not computing (a notebook kernel left open, a "
      "job waiting on input); checkpoint and exit instead of idling.",
      GpuList(c, f.gpus), Human(held));
  f.remediations = {"release_idle_gpu", "checkpointing"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, gpus,
      [&](unsigned g) {
        return ShareOfGpu(c, g, c.usage.gpus[g].phase_ms[static_cast<size_t>(Phase::kIdleHeld)]);
      },
      &f);
  f.savings_reasoning = "all idle-held GPU-time is recoverable by releasing the GPU";
  out->push_back(f);
}

void InputPipeline(const Context& c, std::vector<Finding>* out) {
  std::vector<unsigned> bursty;
  int64_t trough = 0, time = 0;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    if (IsBurstyGpu(g) && !IsUnused(g)) {
      bursty.push_back(i);
      trough += BelowBusyMs(g);
      time += g.KnownMs();
    }
  }
  if (bursty.empty()) return;
  const double share = Pct(trough, time);
  Finding f;
  f.id = "input_pipeline_starvation";
  f.severity = BySize(share, 40);
  f.title = "Bursty utilization: the GPUs wait for input between bursts of work";
  f.observed = share;
  f.observed_unit = "% of the bursty GPUs' time under 70 % utilization";
  f.threshold = 15;
  f.threshold_text = ">= 4 swings between < 50 % and >= 70 %, each side >= 15 % of the time";
  f.evidence_gpu_ms = trough;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = bursty;
  f.recommendation = fmt::format(
      "GPU {} swing between a trough and busy ({:.0f} % of their time under 70 %): the input "
      "pipeline starves them. Raise DataLoader num_workers and set pin_memory=True (and "
      "persistent_workers, prefetch_factor); move JPEG/video decoding and augmentation to the GPU "
      "with NVIDIA DALI.",
      GpuList(c, bursty), share);
  f.remediations = {"dataloader_num_workers", "pin_memory", "nvidia_dali"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, bursty,
      [&](unsigned g) { return 0.7 * ShareOfGpu(c, g, BelowBusyWasteMs(c.usage.gpus[g])); }, &f);
  f.savings_reasoning =
      "70 % of the unused capacity of the bursty GPUs' troughs, assuming loading overlaps compute "
      "once the pipeline keeps up (an estimate)";
  out->push_back(f);
}

// Low utilization without bursts or idling: the work does not fill the GPU. The convention of
// cost tools is "utilization p50 under 60 %"; cgov keeps the mean per GPU (rollups hold no
// distribution), so the rule is the mean at most 60 % on a GPU that is neither bursty, unused nor
// near idle for 15 % of its time (those have rules of their own).
void SteadyLow(const Context& c, std::vector<Finding>* out) {
  std::vector<unsigned> gpus;
  int64_t time = 0, util_x100 = 0;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    const double mean = g.MeanUtilPct().value_or(100);
    if (mean > 60 || IsBurstyGpu(g) || IsUnused(g) || Pct(g.low_ms, g.KnownMs()) >= 15) continue;
    gpus.push_back(i);
    time += g.KnownMs();
    util_x100 += g.util_ms_x100;
  }
  if (gpus.empty() || Pct(time, c.known_ms) < 5) return;
  const double mean = static_cast<double>(util_x100) / static_cast<double>(time);
  Finding f;
  f.id = "steady_underutilization";
  f.severity = mean < 30 ? Severity::kWarning : BySize(Pct(time, c.known_ms), 200);
  f.title = "Steadily low utilization: the work leaves most of the GPU unused";
  f.observed = mean;
  f.observed_unit = "% mean utilization of these GPUs";
  f.threshold = 60;
  f.threshold_text = "mean utilization <= 60 %, not bursty, < 15 % of the time near idle";
  f.evidence_gpu_ms = time;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  if (mean < 30) {
    f.recommendation = fmt::format(
        "GPU {} ran at {:.0f} % on average for {}: the work is far too small for the GPU. Share it "
        "(MIG instances or CUDA MPS for several jobs or inference replicas), move it to a smaller "
        "GPU, or batch requests so each kernel does more.",
        GpuList(c, gpus), mean, Human(time));
    f.remediations = {"mig", "cuda_mps", "smaller_sku", "larger_batch"};
  } else {
    // The sampling interval, when the source says it (a Prometheus does not).
    const std::string sampled =
        c.usage.interval_ms > 0
            ? fmt::format("Sampled every {}: stalls shorter than that", Human(c.usage.interval_ms))
            : "Stalls shorter than the sampling interval";
    f.recommendation = fmt::format(
        "GPU {} ran at {:.0f} % on average without idling: kernels are too small to fill the GPU. "
        "Increase the batch size (with gradient accumulation to keep the effective batch), use AMP "
        "with BF16 so Tensor Cores do the math, or run on a smaller GPU. ({} look steady too; a "
        "profiler tells them apart.)",
        GpuList(c, gpus), mean, sampled);
    f.remediations = {"larger_batch", "gradient_accumulation", "amp_bf16", "smaller_sku"};
  }
  f.axis = Axis::kUtilization;
  // Half of their unused capacity up to 85 % utilization (a well-fed GPU), an estimate.
  SetGpuSavings(
      c, gpus, [&](unsigned) { return 0.5 * std::max(0.0, (85 - mean) / 85); }, &f);
  f.savings_reasoning =
      "half of the gap between these GPUs' mean utilization and 85 % (a well-fed GPU), over their "
      "share of the GPU-time; an estimate";
  out->push_back(f);
}

// GPUs that computed nothing all window: paid for, unused.
void UnusedGpus(const Context& c, std::vector<Finding>* out) {
  std::vector<unsigned> gpus;
  int64_t idle = 0, time = 0;
  MicroUsd dollars = 0;
  bool priced = true;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    if (!IsUnused(g) || g.KnownMs() < 10 * std::max<int64_t>(1, c.usage.interval_ms)) continue;
    gpus.push_back(i);
    idle += g.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)];
    time += g.KnownMs();
    if (i < c.prices.size() && c.prices[i].per_gpu_hour) {
      dollars += CostOf(*c.prices[i].per_gpu_hour, g.HeldMs());
    } else {
      priced = false;
    }
  }
  if (gpus.empty()) return;
  Finding f;
  f.id = "unused_gpu";
  f.severity = BySize(Pct(idle, c.known_ms), 25);
  f.title = "Unused GPUs: paid for, computing nothing";
  f.observed = Pct(idle, time);
  f.observed_unit = "% of these GPUs' time truly idle (no process, under 10 %)";
  f.threshold = 90;
  f.threshold_text = ">= 90 % of a GPU's time truly idle";
  f.evidence_gpu_ms = idle;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "GPU {} computed nothing for {} of GPU-time{}: release {}, scale the node pool down, or "
      "share the capacity (MIG instances, CUDA MPS) with work that waits for a GPU. In a job: "
      "request only the GPUs it uses.",
      GpuList(c, gpus), Human(idle),
      priced && c.cost.priced ? fmt::format(" ({} at the price above)", FormatUsd(dollars)) : "",
      gpus.size() == 1 ? "it" : "them");
  f.remediations = {"release_idle_gpu", "smaller_sku", "mig", "cuda_mps"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, gpus,
      [&](unsigned g) {
        return ShareOfGpu(c, g, c.usage.gpus[g].phase_ms[static_cast<size_t>(Phase::kTrulyIdle)]);
      },
      &f);
  f.savings_reasoning = "all of the unused GPUs' truly idle time";
  out->push_back(f);
}

// Whether a GPU computed at some time of the window (utilization at or above the idle threshold).
bool DidWork(const GpuUsage& g) {
  return g.phase_ms[static_cast<size_t>(Phase::kUnderutilized)] +
             g.phase_ms[static_cast<size_t>(Phase::kProductive)] +
             g.phase_ms[static_cast<size_t>(Phase::kComputeBound)] >
         0;
}

// Truly idle time on GPUs that did work at other times (a shared box at night, gaps between
// jobs), beyond what the idle head and tail of a run explain. A GPU that never worked is not
// one (issue 57, 10: it fired on a GPU at 0 % throughout, part held, part free).
void IdleCapacity(const Context& c, bool head_or_tail, std::vector<Finding>* out) {
  // The head and tail findings cover their own idle time: each GPU's part of it is left out.
  int64_t edge_ms = 0;
  if (head_or_tail && !c.gpus_with_data.empty()) {
    int64_t tail = 0;
    for (int64_t ms : c.usage.tail_phase_ms) tail += ms;
    edge_ms = c.usage.idle_head_ms + tail / static_cast<int64_t>(c.gpus_with_data.size());
  }
  int64_t idle = 0;
  std::vector<unsigned> gpus;
  std::vector<int64_t> idle_of(c.usage.gpus.size(), 0);
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    if (IsUnused(g) || IsBurstyGpu(g) || !DidWork(g)) continue;
    const int64_t ms =
        g.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)] - g.graphics_only_ms - edge_ms;
    if (ms <= 0) continue;
    idle += ms;
    idle_of[i] = ms;
    gpus.push_back(i);
  }
  const double share = Pct(idle, c.known_ms);
  if (share < 10) return;
  Finding f;
  f.id = "idle_capacity";
  f.severity = BySize(share, 40);
  f.title = "Idle capacity: GPUs with nothing to do for part of the time";
  f.observed = share;
  f.observed_unit = "% of GPU-time truly idle on GPUs that worked at other times";
  f.threshold = 10;
  f.threshold_text = ">= 10 % of GPU-time";
  f.evidence_gpu_ms = idle;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "GPU {} sat idle with no process for {} of GPU-time between their work: queue jobs so the "
      "GPUs are fed (a scheduler such as Slurm or Kueue), scale the pool with the load, or use "
      "spot capacity for work that can wait.",
      GpuList(c, gpus), Human(idle));
  f.remediations = {"release_idle_gpu", "spot_instances"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, gpus, [&](unsigned g) { return 0.5 * ShareOfGpu(c, g, idle_of[g]); }, &f);
  f.savings_reasoning =
      "half of the idle GPU-time, as scaling with the load recovers part of it (an estimate)";
  out->push_back(f);
}

// The coverage invariant: waste that no rule explained is said, never silently dropped.
void Unexplained(const Context& c, std::vector<Finding>* out) {
  double explained = 0;
  for (const Finding& f : *out) {
    if (f.axis == Axis::kUtilization) explained = std::max(explained, f.savings_fraction);
  }
  const double waste = c.cost.waste_fraction;
  if (waste < 0.10 || explained > 0) return;
  Finding f;
  f.id = "unexplained_waste";
  f.severity = Severity::kInfo;
  f.title = "Unused capacity with no specific lever found";
  f.observed = waste * 100;
  f.observed_unit = "% of GPU capacity unused";
  f.threshold = 10;
  f.threshold_text = ">= 10 % unused and no other finding explains it";
  f.evidence_gpu_ms = c.known_ms;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = c.gpus_with_data;
  f.recommendation = fmt::format(
      "{:.0f} % of the GPU capacity went unused and no pattern cgov knows explains it (utilization "
      "varies without a clear burst, idle or steady-low pattern). Profile a few steps (PyTorch "
      "profiler, Nsight Systems) to see where the GPU waits.",
      waste * 100);
  f.axis = Axis::kNone;
  f.savings_reasoning = "no lever: the finding says how much waste stays unexplained";
  out->push_back(f);
}

// GPM over the compute-bound time of every GPU: how much of it is known, the mean SM activity and
// the mean tensor-pipe activity (percent), when known for at least half of that time.
struct BoundGpm {
  std::optional<double> sm_active_pct;
  std::optional<double> tensor_active_pct;
};

BoundGpm BoundGpmOf(const Context& c) {
  int64_t gpm = 0, sm = 0, tensor_ms = 0, tensor = 0;
  for (const GpuUsage& g : c.usage.gpus) {
    gpm += g.bound_gpm_ms;
    sm += g.bound_sm_active_ms_x100;
    tensor_ms += g.bound_tensor_ms;
    tensor += g.bound_tensor_active_ms_x100;
  }
  const int64_t bound = Phase_(c, Phase::kComputeBound);
  BoundGpm out;
  if (bound <= 0) return out;
  if (2 * gpm >= bound) out.sm_active_pct = static_cast<double>(sm) / static_cast<double>(gpm);
  if (2 * tensor_ms >= bound) {
    out.tensor_active_pct = static_cast<double>(tensor) / static_cast<double>(tensor_ms);
  }
  return out;
}

constexpr double kTensorInUsePct = 30;    // at or above: the math already runs on Tensor Cores
constexpr double kLowSmActivityPct = 50;  // below, while utilization.gpu says compute-bound

void ComputeBound(const Context& c, std::vector<Finding>* out) {
  // Busy in bursts with stalls between is a starved pipeline first (input_pipeline_starvation):
  // only the GPUs that do not swing count here.
  int64_t bound = 0, known = 0, low = 0;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    if (IsBurstyGpu(g)) continue;
    bound += g.phase_ms[static_cast<size_t>(Phase::kComputeBound)];
    known += g.KnownMs();
    low += g.low_ms;
  }
  const double share = Pct(bound, known);
  if (known == 0 || share < 50 || Pct(low, known) >= 10) return;
  const BoundGpm gpm = BoundGpmOf(c);
  // The Tensor Cores already do the math: mixed precision has nothing left to give.
  if (gpm.tensor_active_pct && *gpm.tensor_active_pct >= kTensorInUsePct) return;
  Finding f;
  f.id = "compute_bound_precision";
  f.severity = Severity::kInfo;
  f.title = "Compute-bound: the GPUs are busy; speed comes from cheaper math, not the data loader";
  f.observed = share;
  f.observed_unit = "% of GPU-time at >= 90 % utilization";
  f.threshold = 50;
  f.threshold_text =
      ">= 50 % of GPU-time compute-bound and < 10 % near idle (bursty GPUs excluded)";
  f.evidence_gpu_ms = bound;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = c.gpus_with_data;
  const std::string evidence =
      gpm.tensor_active_pct ? fmt::format(
                                  "Tensor-pipe activity was {:.1f} % of that time (NVML GPM; under "
                                  "{:.0f} %: the matrix math does not run on Tensor Cores). ",
                                  *gpm.tensor_active_pct, kTensorInUsePct)
                            : "";
  f.recommendation = evidence +
                     "If the model trains in FP32, use AMP with BF16 (or FP8 on Hopper with "
                     "Transformer Engine) so Tensor Cores run the matrix math; prefer fused "
                     "kernels (torch.compile, fused optimizers). Input-pipeline changes will not "
                     "help here.";
  f.remediations = {"amp_bf16", "fp8", "tensor_cores"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, c.gpus_with_data, [](unsigned) { return 0.25; }, &f);
  f.savings_reasoning = gpm.tensor_active_pct
                            ? "a 1.33x speed-up from mixed precision, the tensor pipes being "
                              "nearly idle (GPM), capped below by the measured waste"
                            : "a 1.33x speed-up from mixed precision (typical for FP32 training, "
                              "none if it already runs in BF16; no GPM here to tell), capped "
                              "below by the measured waste";
  out->push_back(f);
}

// utilization.gpu counts the time *any* kernel ran: one small kernel at a time reads 100 % while
// most SMs idle. GPM's SM activity says how much of the GPU worked.
void LowSmActivity(const Context& c, std::vector<Finding>* out) {
  const int64_t bound = Phase_(c, Phase::kComputeBound);
  const BoundGpm gpm = BoundGpmOf(c);
  if (bound <= 0 || !gpm.sm_active_pct || *gpm.sm_active_pct >= kLowSmActivityPct) return;
  std::vector<unsigned> gpus;
  for (unsigned i = 0; i < c.usage.gpus.size(); ++i) {
    const GpuUsage& g = c.usage.gpus[i];
    if (g.bound_gpm_ms > 0 &&
        static_cast<double>(g.bound_sm_active_ms_x100) / static_cast<double>(g.bound_gpm_ms) <
            kLowSmActivityPct) {
      gpus.push_back(i);
    }
  }
  Finding f;
  f.id = "low_sm_activity";
  f.severity = Severity::kWarning;
  f.title = "Busy by utilization.gpu, but most SMs idle: kernels too small for the GPU";
  f.observed = *gpm.sm_active_pct;
  f.observed_unit = "% SM activity (NVML GPM) over the compute-bound time";
  f.threshold = kLowSmActivityPct;
  f.threshold_text = "< 50 % SM activity while utilization.gpu >= 90 %";
  f.evidence_gpu_ms = bound;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "utilization.gpu counts the time any kernel ran, so one small kernel at a time reads 100 % "
      "while only {:.0f} % of the SMs work. Give each kernel more work (a larger batch, fused "
      "kernels, CUDA graphs for many tiny launches), or share the GPU: run several jobs on it "
      "with CUDA MPS, or a MIG slice sized to the job.",
      *gpm.sm_active_pct);
  f.remediations = {"larger_batch", "cuda_mps", "mig"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, c.gpus_with_data,
      [&](unsigned g) {
        return 0.5 * (1.0 - *gpm.sm_active_pct / 100.0) *
               ShareOfGpu(c, g,
                          c.usage.gpus[g].phase_ms[static_cast<size_t>(Phase::kComputeBound)]);
      },
      &f);
  f.savings_reasoning =
      "half of the idle SM share of the compute-bound time (packing or larger kernels recover part "
      "of it)";
  out->push_back(f);
}

void IdleTailAndHead(const Context& c, std::vector<Finding>* out) {
  const int64_t covered = c.usage.covered_ms;
  const int64_t bar = std::max<int64_t>(10 * c.usage.interval_ms, covered / 10);
  if (c.usage.idle_tail_ms >= bar) {
    int64_t gpu_ms = 0;
    for (int64_t ms : c.usage.tail_phase_ms) gpu_ms += ms;
    const int64_t held = c.usage.tail_phase_ms[static_cast<size_t>(Phase::kIdleHeld)];
    Finding f;
    f.id = "idle_tail";
    f.severity = BySize(Pct(c.usage.idle_tail_ms, covered), 40);
    f.title = "Idle tail: the GPUs sat idle at the end of the run";
    f.observed = Seconds(c.usage.idle_tail_ms);
    f.observed_unit = "s";
    f.threshold = Seconds(bar);
    f.threshold_text = ">= 10 sample intervals and >= 10 % of the run";
    f.evidence_gpu_ms = gpu_ms;
    f.window_start_ms = covered - c.usage.idle_tail_ms;
    f.window_end_ms = covered;
    f.gpus = c.gpus_with_data;
    f.recommendation = fmt::format(
        "After the last work the GPUs stayed allocated for {}{}: exit when training ends (no "
        "trailing evaluation on idle GPUs, no waiting for input), and release GPUs that a finished "
        "process still holds.",
        Human(c.usage.idle_tail_ms),
        held > 0 ? fmt::format(" ({} of GPU-time with memory still held)", Human(held)) : "");
    f.remediations = {"release_idle_gpu", "checkpointing"};
    f.axis = Axis::kUtilization;
    // The tail's GPU-time is known over all GPUs, not per GPU: each gets an equal part of it.
    const int64_t per_gpu =
        gpu_ms / static_cast<int64_t>(std::max<size_t>(1, c.gpus_with_data.size()));
    SetGpuSavings(
        c, c.gpus_with_data, [&](unsigned g) { return ShareOfGpu(c, g, per_gpu); }, &f);
    f.savings_reasoning = "all of the tail's GPU-time";
    out->push_back(f);
  }
  if (c.usage.idle_head_ms >= bar && c.usage.idle_head_ms < covered) {
    Finding f;
    f.id = "idle_head";
    f.severity = Severity::kInfo;
    f.title = "Idle head: the GPUs waited at the start of the run";
    f.observed = Seconds(c.usage.idle_head_ms);
    f.observed_unit = "s";
    f.threshold = Seconds(bar);
    f.threshold_text = ">= 10 sample intervals and >= 10 % of the run";
    f.evidence_gpu_ms = c.usage.idle_head_ms * static_cast<int64_t>(c.gpus_with_data.size());
    f.window_end_ms = c.usage.idle_head_ms;
    f.gpus = c.gpus_with_data;
    f.recommendation = fmt::format(
        "No GPU worked during the first {} (downloads, data preparation, compilation): do that "
        "before allocating GPUs, or cache datasets and compiled kernels between runs.",
        Human(c.usage.idle_head_ms));
    f.remediations = {"release_idle_gpu"};
    f.axis = Axis::kUtilization;
    SetGpuSavings(
        c, c.gpus_with_data, [&](unsigned g) { return ShareOfGpu(c, g, c.usage.idle_head_ms); },
        &f);
    f.savings_reasoning = "all of the head's GPU-time";
    out->push_back(f);
  }
}

void Imbalance(const Context& c, std::vector<Finding>* out) {
  if (c.gpus_with_data.size() < 2) return;
  double lo = 101, hi = -1;
  std::vector<unsigned> idle;
  int64_t idle_ms = 0;
  for (unsigned i : c.gpus_with_data) {
    const double mean = *c.usage.gpus[i].MeanUtilPct();
    lo = std::min(lo, mean);
    hi = std::max(hi, mean);
  }
  if (hi - lo < 40 || lo >= 20 || hi < 60) return;
  // (Unused GPUs have their own finding; the idle ones here did some work.)
  for (unsigned i : c.gpus_with_data) {
    if (*c.usage.gpus[i].MeanUtilPct() < 20 && !IsUnused(c.usage.gpus[i])) {
      idle.push_back(i);
      idle_ms += c.usage.gpus[i].KnownMs();
    }
  }
  if (idle.empty()) return;
  Finding f;
  f.id = "gpu_imbalance";
  f.severity = Severity::kWarning;
  f.title = "Imbalance: some GPUs work while others idle";
  // The difference of the means as the per-GPU table shows them (to 0.1): the figure a reader
  // checks it against (issue 57, 10: 87.5 points where the table's means differed by 87.3).
  const auto shown = [](double mean) { return std::round(mean * 10) / 10; };
  f.observed = shown(hi) - shown(lo);
  f.observed_unit = "percentage points between the busiest and idlest GPU's mean utilization";
  f.threshold = 40;
  f.threshold_text = ">= 40 points, the idlest under 20 %, the busiest at >= 60 %";
  f.evidence_gpu_ms = idle_ms;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = idle;
  f.recommendation = fmt::format(
      "GPU {} averaged under 20 % while another reached {:.0f} %: check that the job uses every "
      "GPU it holds (DDP world size, CUDA_VISIBLE_DEVICES, one process per GPU), or request only "
      "the GPUs it uses; if collective communication dominates, tune NCCL.",
      GpuList(c, idle), hi);
  f.remediations = {"nccl_tuning", "smaller_sku"};
  f.axis = Axis::kUtilization;
  SetGpuSavings(
      c, idle, [](unsigned) { return 0.8; }, &f);
  f.savings_reasoning = "80 % of the idle GPUs' time (they would be released or put to work)";
  out->push_back(f);
}

// GPUs starved by the host: its CPU (cpu_bound_host) or its storage (io_wait).
struct HostBoundRule {
  const char* id;
  const char* title;
  const char* observed_unit;
  int64_t GpuUsage::*ms;
  const char* recommendation;
  std::vector<std::string> remediations;
  const char* reasoning;
};

void HostBound(const Context& c, std::vector<Finding>* out) {
  static const HostBoundRule kRules[] = {
      {"cpu_bound_host",
       "CPU-bound host: the host CPU is saturated while the GPUs wait",
       "% of GPU-time under 70 % utilization with host CPU >= 90 %",
       &GpuUsage::cpu_bound_ms,
       "The host's CPUs are saturated, so more DataLoader workers will not help: move decoding "
       "and augmentation to the GPU with NVIDIA DALI, preprocess the dataset once, or use a host "
       "with more cores per GPU.",
       {"nvidia_dali", "dataloader_num_workers"},
       "half of the CPU-starved GPU-time, an estimate"},
      {"cpu_contention",
       "CPU contention: other processes saturate the host while the GPUs wait",
       "% of GPU-time under 70 % utilization with host CPU >= 90 %, the job's own processes using "
       "under half of it",
       &GpuUsage::cpu_other_ms,
       "The host's CPUs were saturated by processes outside this job (its own used under half of "
       "what was busy): more cores for the job or more DataLoader workers would only compete. "
       "Run it on a quieter host, or give it dedicated cores (a cgroup cpuset, the Kubernetes "
       "static CPU manager policy, Slurm --exclusive).",
       {},
       "half of the GPU-time starved by the other tenants, an estimate"},
      {"io_wait",
       "I/O wait: the host waits for storage while the GPUs wait",
       "% of GPU-time under 70 % utilization with host iowait >= 20 %",
       &GpuUsage::iowait_ms,
       "Reading the data is the bottleneck: stage the dataset on local NVMe or in memory, use a "
       "sharded sequential format (WebDataset, TFRecord), and prefetch with more DataLoader "
       "workers and pin_memory.",
       {"dataloader_num_workers", "pin_memory", "nvidia_dali"},
       "half of the I/O-starved GPU-time, an estimate"},
  };
  // The GPUs the work ran on: an unused GPU (its own finding) waits for no host, so its time
  // is in neither side of the share (issue 57, 10: cpu_contention counted GPUs the job never
  // used).
  std::vector<unsigned> used;
  int64_t used_known_ms = 0;
  for (unsigned i : c.gpus_with_data) {
    if (IsUnused(c.usage.gpus[i])) continue;
    used.push_back(i);
    used_known_ms += c.usage.gpus[i].KnownMs();
  }
  for (const HostBoundRule& rule : kRules) {
    int64_t ms = 0;
    for (unsigned i : used) ms += c.usage.gpus[i].*(rule.ms);
    const double share = Pct(ms, used_known_ms);
    if (share < 20) continue;
    Finding f;
    f.id = rule.id;
    f.severity = BySize(share, 50);
    f.title = rule.title;
    f.observed = share;
    f.observed_unit = rule.observed_unit;
    f.threshold = 20;
    f.threshold_text = ">= 20 % of GPU-time";
    f.evidence_gpu_ms = ms;
    f.window_end_ms = c.usage.covered_ms;
    f.gpus = used;
    f.recommendation = rule.recommendation;
    f.remediations = rule.remediations;
    f.axis = Axis::kUtilization;
    SetGpuSavings(
        c, used, [&](unsigned g) { return 0.5 * ShareOfGpu(c, g, c.usage.gpus[g].*(rule.ms)); },
        &f);
    f.savings_reasoning = rule.reasoning;
    out->push_back(f);
  }
}

void Hardware(const Context& c, std::vector<Finding>* out) {
  int64_t thermal = 0, power = 0, pressure = 0, busy = 0;
  bool slack = !c.gpus_with_data.empty();
  double peak = 0;  // the highest memory use of any GPU, percent
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    thermal += g.thermal_ms;
    power += g.power_capped_ms;
    pressure += g.memory_pressure_ms;
    busy += g.KnownMs() - g.low_ms;
    if (!g.memory_max_pct || *g.memory_max_pct >= 20) slack = false;
    if (g.memory_max_pct) peak = std::max(peak, *g.memory_max_pct);
  }
  auto affected = [&](int64_t GpuUsage::*field) {
    std::vector<unsigned> gpus;
    for (unsigned i : c.gpus_with_data) {
      if (c.usage.gpus[i].*field > 0) gpus.push_back(i);
    }
    return gpus;
  };
  auto simple = [&](const char* id, Severity sev, const char* title, double observed,
                    const char* unit, double threshold, const char* threshold_text, int64_t ms,
                    std::vector<unsigned> gpus, std::string recommendation,
                    std::vector<std::string> remediations) {
    Finding f;
    f.id = id;
    f.severity = sev;
    f.title = title;
    f.observed = observed;
    f.observed_unit = unit;
    f.threshold = threshold;
    f.threshold_text = threshold_text;
    f.evidence_gpu_ms = ms;
    f.window_end_ms = c.usage.covered_ms;
    f.gpus = std::move(gpus);
    f.recommendation = std::move(recommendation);
    f.remediations = std::move(remediations);
    f.savings_reasoning = "a reliability or sizing finding: no spend estimate";
    out->push_back(std::move(f));
  };
  if (busy > 0 && Pct(thermal, busy) >= 10) {
    simple("thermal_throttling", Severity::kWarning, "Thermal throttling while busy",
           Pct(thermal, busy), "% of busy GPU-time", 10, ">= 10 % of busy GPU-time", thermal,
           affected(&GpuUsage::thermal_ms),
           "The GPUs slowed their clocks for heat (NVML thermal slowdown reasons): check airflow, "
           "fan and inlet temperatures; throttled GPUs do less work per dollar.",
           {});
  }
  if (busy > 0 && Pct(power, busy) >= 10) {
    simple("power_capped", Severity::kInfo, "Power-capped while busy", Pct(power, busy),
           "% of busy GPU-time", 10, ">= 10 % of busy GPU-time", power,
           affected(&GpuUsage::power_capped_ms),
           "The GPUs held their clocks down at the power limit (software power cap or power "
           "brake): check the enforced power limit (nvidia-smi -q -d POWER).",
           {});
  }
  if (Pct(pressure, c.known_ms) >= 10) {
    simple("memory_pressure", Severity::kInfo, "GPU memory above 85 %", Pct(pressure, c.known_ms),
           "% of GPU-time", 10, ">= 10 % of GPU-time above 85 % of GPU memory", pressure,
           affected(&GpuUsage::memory_pressure_ms),
           "GPU memory is nearly full: out-of-memory failures and allocator thrash are near. Use "
           "activation checkpointing, BF16 activations, or gradient accumulation with smaller "
           "micro-batches.",
           {"checkpointing", "amp_bf16", "gradient_accumulation"});
  }
  if (slack && c.known_ms > 0) {
    simple("memory_slack", Severity::kInfo, "GPU memory never above 20 %", peak,
           "% of GPU memory at the highest peak of any GPU", 20,
           "the peak of every GPU below 20 % of its memory", c.known_ms, c.gpus_with_data,
           "The job never used a fifth of GPU memory: it would fit on a MIG slice or share the GPU "
           "with other jobs through CUDA MPS, or run on a smaller, cheaper GPU.",
           {"mig", "cuda_mps", "smaller_sku"});
  }
}

// What an Xid means for the person reading the report (NVIDIA's Xid catalog, abridged): whether
// it points at the hardware (a ticket: drain the node) or at the software that ran.
struct XidMeaning {
  uint32_t xid;
  const char* what;
  bool hardware;
};
constexpr XidMeaning kXids[] = {
    {13, "graphics engine exception (often an out-of-bounds access in a kernel)", false},
    {31, "GPU memory page fault (often an illegal address in a kernel)", false},
    {43, "the GPU stopped processing (a user application fault)", false},
    {45, "preemptive cleanup after another fault or a killed process", false},
    {48, "double-bit ECC error: uncorrectable memory error", true},
    {61, "internal micro-controller breakpoint", true},
    {62, "internal micro-controller halt", true},
    {63, "ECC page retirement or row remapping event", true},
    {64, "ECC page retirement or row remapper recording failure", true},
    {74, "NVLink error", true},
    {79, "the GPU has fallen off the bus", true},
    {92, "high single-bit ECC error rate", true},
    {94, "contained ECC error", true},
    {95, "uncontained ECC error", true},
    {119, "GSP RPC timeout", true},
    {120, "GSP error", true},
};

void XidErrors(const Context& c, std::vector<Finding>* out) {
  uint64_t count = 0;
  std::vector<unsigned> gpus;
  const GpuUsage* last = nullptr;
  for (unsigned i = 0; i < c.usage.gpus.size(); ++i) {
    const GpuUsage& g = c.usage.gpus[i];
    if (g.xid_errors == 0) continue;
    count += g.xid_errors;
    gpus.push_back(i);
    if (last == nullptr || g.first_xid_ms > last->first_xid_ms) last = &g;
  }
  if (count == 0) return;
  const uint32_t xid = last->last_xid.value_or(999);
  const XidMeaning* meaning = nullptr;
  for (const XidMeaning& m : kXids) {
    if (m.xid == xid) meaning = &m;
  }
  Finding f;
  f.id = "xid_errors";
  f.severity = Severity::kCritical;
  f.title = fmt::format("The driver reported {} Xid error(s) on GPU {}", count, GpuList(c, gpus));
  f.observed = static_cast<double>(count);
  f.observed_unit = "Xid errors";
  f.threshold = 1;
  f.threshold_text = ">= 1 Xid critical error";
  f.window_start_ms = std::max<int64_t>(0, last->first_xid_ms);
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "Last: Xid {}{}. The GPU-time around an Xid is suspect: a job may have crashed or produced "
      "wrong results, and its idle time after the error is not a tuning problem. {}",
      xid, meaning ? fmt::format(" ({})", meaning->what) : "",
      meaning && meaning->hardware
          ? "This Xid points at the hardware: drain the node and open a hardware ticket with the "
            "GPU's serial number (nvidia-smi -q) and `nvidia-bug-report.sh` output."
          : "Look up the Xid in NVIDIA's Xid catalog and in the kernel log (`dmesg | grep -i "
            "xid`); an application fault is fixed in the job, a repeated one on one GPU is a "
            "hardware ticket.");
  f.savings_reasoning = "a reliability finding: no spend estimate";
  out->push_back(std::move(f));
}

// Remapped rows / retired pages: a GPU whose memory waits for a reset, or has failed, is a
// reliability problem before it is a cost one.
void MemoryHealthFinding(const Context& c, const std::vector<std::optional<MemoryHealth>>& health,
                         std::vector<Finding>* out) {
  std::vector<unsigned> gpus;
  bool reset = false, failure = false;
  std::string what;
  for (unsigned i = 0; i < health.size(); ++i) {
    if (!health[i] || !health[i]->NeedsAction()) continue;
    const MemoryHealth& h = *health[i];
    gpus.push_back(i);
    reset = reset || h.remap_pending || h.retired_pending;
    failure = failure || h.remap_failure;
    std::vector<std::string> parts;
    if (h.remap_failure) parts.push_back("a row remapping failed");
    if (h.remap_pending) parts.push_back("row remapping pending a reset");
    if (h.remapped_uncorrectable > 0) {
      parts.push_back(
          fmt::format("{} row(s) remapped after uncorrectable errors", h.remapped_uncorrectable));
    }
    if (h.retired_pending) parts.push_back("page retirement pending a reboot");
    if (h.retired_dbe > 0) {
      parts.push_back(fmt::format("{} page(s) retired after double-bit errors", h.retired_dbe));
    }
    what += fmt::format("{}GPU {}: {}", what.empty() ? "" : "; ", GpuName(c.names, i),
                        fmt::join(parts, ", "));
  }
  if (gpus.empty()) return;
  Finding f;
  f.id = "gpu_memory_health";
  f.severity = reset || failure ? Severity::kCritical : Severity::kWarning;
  f.title = fmt::format("GPU memory needs attention on GPU {}", GpuList(c, gpus));
  f.observed = static_cast<double>(gpus.size());
  f.observed_unit = "GPUs";
  f.threshold = 1;
  f.threshold_text =
      "a pending row remap or page retirement, a failed remap, or memory lost to uncorrectable "
      "errors";
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "{}. {}{}", what,
      failure ? "A failed remapping means the GPU has no spare rows left: drain it and open a "
                "hardware ticket with `nvidia-smi -q` and `nvidia-bug-report.sh` output. "
              : "",
      reset ? "Pending remaps and retirements take effect only after a GPU reset: drain the GPU, "
              "then reset it (`nvidia-smi -r -i <index>`) or reboot the node."
            : "The memory is protected, but a GPU that keeps losing rows is heading for a "
              "hardware ticket: watch it (DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS).");
  f.savings_reasoning = "a reliability finding: no spend estimate";
  out->push_back(std::move(f));
}

void Spot(const Context& c, std::vector<Finding>* out) {
  if (!c.cost.priced || c.prices.empty()) return;
  double fraction = 0;
  bool given = false;  // a price the user gave (--price-per-gpu-hour): not the catalog's
  for (const ResolvedPrice& p : c.prices) {
    if (p.is_spot || !p.on_demand || !p.spot || *p.on_demand <= 0) return;
    fraction = std::max(fraction, 1.0 - static_cast<double>(*p.spot) / *p.on_demand);
    given = given || p.label.starts_with("--price-per-gpu-hour");
  }
  if (fraction <= 0) return;
  Finding f;
  f.id = "spot_instances";
  f.severity = Severity::kInfo;
  f.title = "Spot capacity would cost less for the same GPU-time";
  f.observed = fraction * 100;
  f.observed_unit = "% below the on-demand list price";
  f.threshold = 0;
  f.threshold_text = "a catalog spot price below the on-demand price";
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = c.gpus_with_data;
  f.recommendation =
      "Run on spot (preemptible) capacity with regular checkpoints so a preempted job resumes "
      "where it stopped.";
  f.remediations = {"spot_instances", "checkpointing"};
  f.axis = Axis::kRate;
  f.savings_fraction = fraction;
  // With a price of the user's own, the discount is still the catalog's: said, as the user's
  // provider may discount spot capacity otherwise (issue 57, 12: applied without a word).
  f.savings_reasoning = given ? "the catalog's spot discount for this GPU model, applied to your "
                                "--price-per-gpu-hour: your provider's spot discount may differ"
                              : "the catalog's spot price relative to its on-demand price";
  out->push_back(f);
}

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "";
}

const char* AxisName(Axis a) {
  switch (a) {
    case Axis::kNone:
      return "none";
    case Axis::kUtilization:
      return "utilization";
    case Axis::kRate:
      return "rate";
  }
  return "";
}

std::optional<Severity> ParseSeverity(std::string_view text) {
  if (text == "warning") return Severity::kWarning;
  if (text == "critical") return Severity::kCritical;
  return std::nullopt;
}

const std::vector<std::string>& RemediationVocabulary() {
  static const std::vector<std::string> words = {"dataloader_num_workers",
                                                 "pin_memory",
                                                 "nvidia_dali",
                                                 "larger_batch",
                                                 "gradient_accumulation",
                                                 "amp_bf16",
                                                 "fp8",
                                                 "tensor_cores",
                                                 "cuda_mps",
                                                 "mig",
                                                 "smaller_sku",
                                                 "spot_instances",
                                                 "nccl_tuning",
                                                 "release_idle_gpu",
                                                 "checkpointing"};
  return words;
}

std::vector<Finding> Recommend(const UsageTotals& usage, const CostBlock& cost,
                               const std::vector<ResolvedPrice>& prices, const PhaseThresholds&,
                               const std::vector<std::string>& gpu_names,
                               const std::vector<std::optional<MemoryHealth>>& health) {
  Context c{usage, cost, prices, usage.KnownMs(), usage.PhaseMs(), {}, gpu_names};
  for (unsigned i = 0; i < usage.gpus.size(); ++i) {
    if (usage.gpus[i].KnownMs() > 0) c.gpus_with_data.push_back(i);
  }
  std::vector<Finding> out;
  // Reliability, even without utilization data (a lost GPU has none).
  XidErrors(c, &out);
  MemoryHealthFinding(c, health, &out);
  if (c.known_ms > 0) {
    IdleHeld(c, &out);
    InputPipeline(c, &out);
    SteadyLow(c, &out);
    UnusedGpus(c, &out);
    ComputeBound(c, &out);
    LowSmActivity(c, &out);
    const size_t before_edges = out.size();
    IdleTailAndHead(c, &out);
    IdleCapacity(c, out.size() > before_edges, &out);
    Imbalance(c, &out);
    HostBound(c, &out);
    Hardware(c, &out);
    Spot(c, &out);
    Unexplained(c, &out);
  }
  for (Finding& f : out) {
    f.savings_fraction = std::clamp(f.savings_fraction, 0.0, 1.0);
    if (!gpu_names.empty()) {
      for (unsigned g : f.gpus) f.gpu_names.push_back(GpuName(gpu_names, g));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Finding& a, const Finding& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.savings_fraction > b.savings_fraction;
  });
  return out;
}

}  // namespace cgov
