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

// Alternating between near idle and busy: the stalls of a starved input pipeline.
bool IsBursty(const GpuUsage& g) {
  const int64_t known = g.KnownMs();
  return g.transitions >= 4 && Pct(g.low_ms, known) >= 15 && Pct(g.high_ms, known) >= 15;
}

Severity BySize(double share_pct, double critical_pct) {
  return share_pct >= critical_pct ? Severity::kCritical : Severity::kWarning;
}

void IdleHeld(const Context& c, std::vector<Finding>* out) {
  // Idle-held time of bursty GPUs is their input stalls: input_pipeline_starvation covers it.
  int64_t held = 0;
  std::vector<unsigned> gpus;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    const int64_t ms = g.phase_ms[static_cast<size_t>(Phase::kIdleHeld)];
    if (ms > 0 && !IsBursty(g)) {
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
  f.observed = share;
  f.observed_unit = "% of GPU-time";
  f.threshold = 5;
  f.threshold_text = ">= 5 % of GPU-time or >= 300 GPU-seconds";
  f.evidence_gpu_ms = held;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = gpus;
  f.recommendation = fmt::format(
      "A process kept memory on GPU {} for {:.0f} GPU-seconds while SM utilization stayed under "
      "10 %: end the process or release the GPU when it is not computing (a notebook kernel left "
      "open, a job waiting on input); checkpoint and exit instead of idling.",
      GpuList(c, f.gpus), Seconds(held));
  f.remediations = {"release_idle_gpu", "checkpointing"};
  f.axis = Axis::kUtilization;
  f.savings_fraction = share / 100;
  f.savings_reasoning = "all idle-held GPU-time is recoverable by releasing the GPU";
  out->push_back(f);
}

void InputPipeline(const Context& c, std::vector<Finding>* out) {
  std::vector<unsigned> bursty;
  int64_t low = 0, time = 0;
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    if (IsBursty(g)) {
      bursty.push_back(i);
      low += g.low_ms;
      time += g.KnownMs();
    }
  }
  if (bursty.empty()) return;
  const double share = Pct(low, time);
  Finding f;
  f.id = "input_pipeline_starvation";
  f.severity = BySize(share, 40);
  f.title = "Bursty utilization: the GPUs wait for input between bursts of work";
  f.observed = share;
  f.observed_unit = "% of the bursty GPUs' time under 10 % utilization";
  f.threshold = 15;
  f.threshold_text = ">= 4 switches between < 10 % and >= 70 %, each side >= 15 % of the time";
  f.evidence_gpu_ms = low;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = bursty;
  f.recommendation = fmt::format(
      "GPU {} alternate between near-idle and busy ({:.0f} % of their time near idle): the input "
      "pipeline starves them. Raise DataLoader num_workers and set pin_memory=True (and "
      "persistent_workers, prefetch_factor); move JPEG/video decoding and augmentation to the GPU "
      "with NVIDIA DALI.",
      GpuList(c, bursty), share);
  f.remediations = {"dataloader_num_workers", "pin_memory", "nvidia_dali"};
  f.axis = Axis::kUtilization;
  f.savings_fraction = 0.7 * low / static_cast<double>(std::max<int64_t>(1, c.known_ms));
  f.savings_reasoning = "70 % of the near-idle time of the bursty GPUs, assuming loading overlaps "
                        "compute once the pipeline keeps up (an estimate)";
  out->push_back(f);
}

void SteadyLow(const Context& c, std::vector<Finding>* out) {
  int64_t band = 0, low = 0;
  for (const GpuUsage& g : c.usage.gpus) {
    band += g.band_ms;
    low += g.low_ms;
  }
  const double band_share = Pct(band, c.known_ms);
  if (band_share < 50 || Pct(low, c.known_ms) >= 15) return;
  const double mean = static_cast<double>(c.usage.UtilMsX100()) / std::max<int64_t>(1, c.known_ms);
  Finding f;
  f.id = "steady_underutilization";
  f.severity = Severity::kWarning;
  f.title = "Steadily low utilization: each step leaves the GPU partly unused";
  f.observed = band_share;
  f.observed_unit = "% of GPU-time between 30 % and 60 % utilization";
  f.threshold = 50;
  f.threshold_text = ">= 50 % of GPU-time in 30-60 % utilization and < 15 % near idle";
  f.evidence_gpu_ms = band;
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = c.gpus_with_data;
  f.recommendation = fmt::format(
      "Utilization sits at {:.0f} % on average without idling: kernels are too small to fill the "
      "GPU. Increase the batch size (with gradient accumulation to keep the effective batch), use "
      "AMP with BF16 so Tensor Cores do the math, or run on a smaller GPU.",
      mean);
  f.remediations = {"larger_batch", "gradient_accumulation", "amp_bf16", "smaller_sku"};
  f.axis = Axis::kUtilization;
  f.savings_fraction = std::max(0.0, 0.5 * (85 - mean) / 85);
  f.savings_reasoning = "half of the gap between the mean utilization and 85 % (a well-fed GPU), "
                        "an estimate";
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

constexpr double kTensorInUsePct = 30;   // at or above: the math already runs on Tensor Cores
constexpr double kLowSmActivityPct = 50;  // below, while utilization.gpu says compute-bound

void ComputeBound(const Context& c, std::vector<Finding>* out) {
  const double share = Pct(Phase_(c, Phase::kComputeBound), c.known_ms);
  int64_t low = 0;
  for (const GpuUsage& g : c.usage.gpus) low += g.low_ms;
  // Busy in bursts with stalls between is a starved pipeline first (input_pipeline_starvation).
  if (share < 50 || Pct(low, c.known_ms) >= 10) return;
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
  f.threshold_text = ">= 50 % of GPU-time compute-bound and < 10 % near idle";
  f.evidence_gpu_ms = Phase_(c, Phase::kComputeBound);
  f.window_end_ms = c.usage.covered_ms;
  f.gpus = c.gpus_with_data;
  const std::string evidence =
      gpm.tensor_active_pct
          ? fmt::format("Tensor-pipe activity was {:.1f} % of that time (NVML GPM; under {:.0f} %: "
                        "the matrix math does not run on Tensor Cores). ",
                        *gpm.tensor_active_pct, kTensorInUsePct)
          : "";
  f.recommendation = evidence +
                     "If the model trains in FP32, use AMP with BF16 (or FP8 on Hopper with "
                     "Transformer Engine) so Tensor Cores run the matrix math; prefer fused "
                     "kernels (torch.compile, fused optimizers). Input-pipeline changes will not "
                     "help here.";
  f.remediations = {"amp_bf16", "fp8", "tensor_cores"};
  f.axis = Axis::kUtilization;
  f.savings_fraction = 0.25;
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
  f.savings_fraction = 0.5 * Pct(bound, c.known_ms) / 100.0 * (1.0 - *gpm.sm_active_pct / 100.0);
  f.savings_reasoning = "half of the idle SM share of the compute-bound time (packing or larger "
                        "kernels recover part of it)";
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
        "After the last work the GPUs stayed allocated for {:.0f} s{}: exit when training ends "
        "(no trailing evaluation on idle GPUs, no waiting for input), and release GPUs that a "
        "finished process still holds.",
        Seconds(c.usage.idle_tail_ms),
        held > 0 ? fmt::format(" ({:.0f} GPU-seconds with memory still held)", Seconds(held)) : "");
    f.remediations = {"release_idle_gpu", "checkpointing"};
    f.axis = Axis::kUtilization;
    f.savings_fraction = static_cast<double>(gpu_ms) / std::max<int64_t>(1, c.known_ms);
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
        "No GPU worked during the first {:.0f} s (downloads, data preparation, compilation): do "
        "that before allocating GPUs, or cache datasets and compiled kernels between runs.",
        Seconds(c.usage.idle_head_ms));
    f.remediations = {"release_idle_gpu"};
    f.axis = Axis::kUtilization;
    f.savings_fraction = Pct(c.usage.idle_head_ms, covered) / 100;
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
  for (unsigned i : c.gpus_with_data) {
    if (*c.usage.gpus[i].MeanUtilPct() < 20) {
      idle.push_back(i);
      idle_ms += c.usage.gpus[i].KnownMs();
    }
  }
  Finding f;
  f.id = "gpu_imbalance";
  f.severity = Severity::kWarning;
  f.title = "Imbalance: some GPUs work while others idle";
  f.observed = hi - lo;
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
  f.savings_fraction = static_cast<double>(idle_ms) / std::max<int64_t>(1, c.known_ms) * 0.8;
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
      {"cpu_bound_host", "CPU-bound host: the host CPU is saturated while the GPUs wait",
       "% of GPU-time under 70 % utilization with host CPU >= 90 %", &GpuUsage::cpu_bound_ms,
       "The host's CPUs are saturated, so more DataLoader workers will not help: move decoding "
       "and augmentation to the GPU with NVIDIA DALI, preprocess the dataset once, or use a host "
       "with more cores per GPU.",
       {"nvidia_dali", "dataloader_num_workers"}, "half of the CPU-starved GPU-time, an estimate"},
      {"io_wait", "I/O wait: the host waits for storage while the GPUs wait",
       "% of GPU-time under 70 % utilization with host iowait >= 20 %", &GpuUsage::iowait_ms,
       "Reading the data is the bottleneck: stage the dataset on local NVMe or in memory, use a "
       "sharded sequential format (WebDataset, TFRecord), and prefetch with more DataLoader "
       "workers and pin_memory.",
       {"dataloader_num_workers", "pin_memory", "nvidia_dali"},
       "half of the I/O-starved GPU-time, an estimate"},
  };
  for (const HostBoundRule& rule : kRules) {
    int64_t ms = 0;
    for (const GpuUsage& g : c.usage.gpus) ms += g.*(rule.ms);
    const double share = Pct(ms, c.known_ms);
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
    f.gpus = c.gpus_with_data;
    f.recommendation = rule.recommendation;
    f.remediations = rule.remediations;
    f.axis = Axis::kUtilization;
    f.savings_fraction = 0.5 * share / 100;
    f.savings_reasoning = rule.reasoning;
    out->push_back(f);
  }
}

void Hardware(const Context& c, std::vector<Finding>* out) {
  int64_t thermal = 0, power = 0, pressure = 0, busy = 0;
  bool slack = !c.gpus_with_data.empty();
  for (unsigned i : c.gpus_with_data) {
    const GpuUsage& g = c.usage.gpus[i];
    thermal += g.thermal_ms;
    power += g.power_capped_ms;
    pressure += g.memory_pressure_ms;
    busy += g.KnownMs() - g.low_ms;
    if (!g.memory_max_pct || *g.memory_max_pct >= 20) slack = false;
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
    simple("memory_slack", Severity::kInfo, "GPU memory never above 20 %", 20, "% of GPU memory",
           20, "the peak of every GPU below 20 % of its memory", c.known_ms, c.gpus_with_data,
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
      parts.push_back(fmt::format("{} row(s) remapped after uncorrectable errors",
                                  h.remapped_uncorrectable));
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
  f.threshold_text = "a pending row remap or page retirement, a failed remap, or memory lost to "
                     "uncorrectable errors";
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
  for (const ResolvedPrice& p : c.prices) {
    if (p.is_spot || !p.on_demand || !p.spot || *p.on_demand <= 0) return;
    fraction = std::max(fraction, 1.0 - static_cast<double>(*p.spot) / *p.on_demand);
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
  f.recommendation = "Run on spot (preemptible) capacity with regular checkpoints so a "
                     "preempted job resumes where it stopped.";
  f.remediations = {"spot_instances", "checkpointing"};
  f.axis = Axis::kRate;
  f.savings_fraction = fraction;
  f.savings_reasoning = "the catalog's spot price relative to its on-demand price";
  out->push_back(f);
}

}  // namespace

const char* SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kCritical: return "critical";
  }
  return "";
}

const char* AxisName(Axis a) {
  switch (a) {
    case Axis::kNone: return "none";
    case Axis::kUtilization: return "utilization";
    case Axis::kRate: return "rate";
  }
  return "";
}

std::optional<Severity> ParseSeverity(std::string_view text) {
  if (text == "warning") return Severity::kWarning;
  if (text == "critical") return Severity::kCritical;
  return std::nullopt;
}

const std::vector<std::string>& RemediationVocabulary() {
  static const std::vector<std::string> words = {
      "dataloader_num_workers", "pin_memory",   "nvidia_dali", "larger_batch",
      "gradient_accumulation",  "amp_bf16",     "fp8",         "tensor_cores",
      "cuda_mps",               "mig",          "smaller_sku", "spot_instances",
      "nccl_tuning",            "release_idle_gpu", "checkpointing"};
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
    ComputeBound(c, &out);
    LowSmActivity(c, &out);
    IdleTailAndHead(c, &out);
    Imbalance(c, &out);
    HostBound(c, &out);
    Hardware(c, &out);
    Spot(c, &out);
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
