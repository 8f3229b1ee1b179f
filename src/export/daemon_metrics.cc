#include "export/daemon_metrics.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>

#include <fmt/format.h>

#include "core/build_info.h"
#include "core/json_writer.h"

namespace cgov {
namespace {

constexpr double kMib = 1024.0 * 1024.0;

// Where identities beyond MetricsOptions::max_identity_series are credited.
constexpr char kOther[] = "(other)";
// The namespace, pod and container of cgov_honor_labels_check.
constexpr char kLabelCheck[] = "cgov-label-check";
// A label value from the outside (a user name, a pod or project label) is at most this long.
constexpr size_t kMaxLabelBytes = 128;

// `value` cut to kMaxLabelBytes at a UTF-8 character boundary, ending in "…" when cut.
std::string BoundedLabel(std::string_view value) {
  if (value.size() <= kMaxLabelBytes) return std::string(value);
  size_t end = kMaxLabelBytes - 3;  // room for the ellipsis
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  return std::string(value.substr(0, end)) + "\u2026";
}

std::string_view PhaseKeyAt(size_t i) {
  return i < kPhaseCount ? PhaseKey(static_cast<Phase>(i)) : std::string_view("unknown");
}

double UsdOf(MicroUsd micro) { return static_cast<double>(micro) / kMicroPerUsd; }

}  // namespace

// dcgm-exporter's label set for one GPU. `labels` points into the strings: never copied or moved
// (kept in a deque).
struct DaemonMetrics::GpuLabels {
  std::string gpu, device, gpu_instance;
  Labels labels;
  GpuLabels(const MetricsGpu& g, const std::string& hostname)
      : gpu(fmt::format("{}", g.index)), device(fmt::format("nvidia{}", g.index)) {
    labels = Labels{{"gpu", gpu},          {"UUID", g.uuid},       {"device", device},
                    {"modelName", g.name}, {"Hostname", hostname}, {"pci_bus_id", g.pci_bus_id}};
    if (g.gpu_instance_id) {
      gpu_instance = fmt::format("{}", *g.gpu_instance_id);
      labels.emplace_back("GPU_I_PROFILE", g.mig_profile);
      labels.emplace_back("GPU_I_ID", gpu_instance);
    }
  }
  GpuLabels(const GpuLabels&) = delete;
  GpuLabels& operator=(const GpuLabels&) = delete;
  Labels With(std::string_view name, std::string_view value) const {
    Labels out = labels;
    out.emplace_back(name, value);
    return out;
  }
};

void DaemonMetrics::SetGpus(std::vector<MetricsGpu> gpus) {
  std::lock_guard lock(mu_);
  gpus_ = std::move(gpus);
  gpu_pos_.clear();
  for (size_t i = 0; i < gpus_.size(); ++i) gpu_pos_[gpus_[i].gpu_id] = i;
  gpu_counters_.resize(gpus_.size());
  Changed();
}

void DaemonMetrics::RecordTick(MetricsTick tick) {
  if (!options_.process_series) tick.processes.clear();
  const size_t cap = options_.max_process_series;
  int64_t dropped = 0;
  if (tick.processes.size() > cap) {
    dropped = static_cast<int64_t>(tick.processes.size() - cap);
    // Keep the biggest holders: they are the ones worth a look.
    std::stable_sort(tick.processes.begin(), tick.processes.end(),
                     [](const MetricsProcess& a, const MetricsProcess& b) {
                       return a.used_memory_bytes.value_or(0) > b.used_memory_bytes.value_or(0);
                     });
    tick.processes.resize(cap);
  }
  std::lock_guard lock(mu_);
  dropped_process_series_ += dropped;
  last_ = std::move(tick);
  Changed();
}

void DaemonMetrics::Credit(const TickCredit& credit,
                           const std::function<const IdentityRecord*(uint32_t)>& identity_of) {
  std::lock_guard lock(mu_);
  Changed();
  // Identities gone for a while leave first, making room (their counters stay in Prometheus'
  // history).
  bool left = false;
  for (auto it = identities_.begin(); it != identities_.end();) {
    if (credit.ts_ms - it->second.last_credit_ms > options_.identity_expiry_ms) {
      it = identities_.erase(it);
      left = true;
    } else {
      ++it;
    }
  }
  if (left) {
    for (auto& [id, slot] : ids_) slot.counters = nullptr;
  }
  for (const TickCredit::Gpu& g : credit.gpus) run_states_[g.gpu_id] = g.state;
  Apply(credit, &gpu_counters_, [&](uint32_t id) -> IdentityCounters& {
    IdentityCounters& c = CountersOfId(id, identity_of);
    c.last_credit_ms = credit.ts_ms;
    return c;
  });
}

void DaemonMetrics::ForgetIdentityIds() {
  std::lock_guard lock(mu_);
  ids_.clear();
}

DaemonMetrics::IdSlot* DaemonMetrics::SlotOf(
    uint32_t id, const std::function<const IdentityRecord*(uint32_t)>& identity_of) {
  if (auto it = ids_.find(id); it != ids_.end()) return &it->second;
  const IdentityRecord* record = identity_of(id);
  if (record == nullptr) return nullptr;  // not known (yet): not remembered as unknown
  // A few times the series cap: the ids of a tick, and those credited within the expiry.
  if (ids_.size() >= 4 * options_.max_identity_series + 64) ids_.clear();
  return &ids_.emplace(id, IdSlot{KeyOf(record), nullptr, false}).first->second;
}

DaemonMetrics::IdentityKey DaemonMetrics::KeyOfId(
    uint32_t id, const std::function<const IdentityRecord*(uint32_t)>& identity_of) {
  const IdSlot* slot = SlotOf(id, identity_of);
  return slot != nullptr ? slot->key : IdentityKey{};
}

DaemonMetrics::IdentityCounters& DaemonMetrics::CountersOfId(
    uint32_t id, const std::function<const IdentityRecord*(uint32_t)>& identity_of) {
  IdSlot* slot = SlotOf(id, identity_of);
  if (slot == nullptr) return CountersOf(IdentityKey{});  // unknown: resolved each time
  if (slot->counters != nullptr) {
    if (slot->folded) ++folded_identity_credits_;  // as CountersOf counts each folded credit
    return *slot->counters;
  }
  const int64_t folded_before = folded_identity_credits_;
  slot->counters = &CountersOf(slot->key);
  slot->folded = folded_identity_credits_ != folded_before;
  return *slot->counters;
}

void DaemonMetrics::Apply(
    const TickCredit& credit, std::vector<GpuCounters>* gpus,
    const std::function<IdentityCounters&(uint32_t identity_id)>& counters_of) const {
  for (const TickCredit::Gpu& g : credit.gpus) {
    auto pos = gpu_pos_.find(g.gpu_id);
    if (pos == gpu_pos_.end()) continue;
    GpuCounters& c = (*gpus)[pos->second];
    const size_t slot = g.phase ? static_cast<size_t>(*g.phase) : kUnknownPhase;
    c.ms[slot] += g.duration_ms;
    c.util_ms_x100[slot] += g.util_ms_x100;
    MergeInto(g.usage, &c.usage);
    if (const std::optional<MicroUsd>& price = gpus_[pos->second].price_per_gpu_hour) {
      c.cost_micro_usd[slot] = AddUsd(c.cost_micro_usd[slot], CostOf(*price, g.duration_ms));
    }
  }
  for (const TickCredit::Identity& id : credit.identities) {
    IdentityCounters& c = counters_of(id.identity_id);
    c.held_ms += id.held_ms;
    c.idle_held_ms += id.idle_held_ms;
    c.energy_mj += id.energy_mj;
    if (id.idle_held_ms > 0) c.idle_held_energy_mj += id.energy_mj;  // as IdentityHour's
    c.attributed_ms[id.phase ? static_cast<size_t>(*id.phase) : kUnknownPhase] += id.attributed_ms;
    auto pos = gpu_pos_.find(id.gpu_id);
    if (pos != gpu_pos_.end() && gpus_[pos->second].price_per_gpu_hour) {
      const MicroUsd price = *gpus_[pos->second].price_per_gpu_hour;
      c.cost_micro_usd = AddUsd(c.cost_micro_usd, CostOf(price, id.attributed_ms));
    }
  }
}

void DaemonMetrics::SetPending(const StoredTick& tick, int64_t ts_ms,
                               const std::function<const IdentityRecord*(uint32_t)>& identity_of) {
  std::lock_guard lock(mu_);
  Changed();
  if (!pending_) pending_ = PendingTick{};  // (clang: not emplace() of a nested struct)
  pending_->tick = tick;  // assigned into: the vectors keep their capacity from tick to tick
  pending_->ts_ms = ts_ms;
  pending_->keys.clear();
  auto resolve = [&](uint32_t id) {
    if (!pending_->keys.count(id)) pending_->keys.emplace(id, KeyOfId(id, identity_of));
  };
  for (const StoredProcess& p : tick.processes) resolve(p.identity_id);
  for (const StoredAllocation& a : tick.allocations) resolve(a.identity_id);
}

void DaemonMetrics::ClearPending() {
  std::lock_guard lock(mu_);
  Changed();
  pending_.reset();
}

DaemonMetrics::IdentityKey DaemonMetrics::KeyOf(const IdentityRecord* record) const {
  IdentityKey key;
  if (record == nullptr) return key;
  key = IdentityKey{BoundedLabel(record->user),
                    BoundedLabel(record->project),
                    BoundedLabel(record->team),
                    BoundedLabel(record->kube_namespace),
                    BoundedLabel(record->kube_pod_name),
                    BoundedLabel(record->kube_container_name),
                    BoundedLabel(record->pod),
                    BoundedLabel(record->slurm_job),
                    "",
                    ""};
  if (slurm_jobs_ && !record->slurm_job.empty()) {
    if (auto job = slurm_jobs_->find(record->slurm_job); job != slurm_jobs_->end()) {
      key.slurm_account = BoundedLabel(job->second.account);
      key.slurm_partition = BoundedLabel(job->second.partition);
    }
  }
  return key;
}

DaemonMetrics::IdentityCounters& DaemonMetrics::CountersOf(IdentityKey key) {
  return CountersIn(&identities_, std::move(key), &folded_identity_credits_);
}

DaemonMetrics::IdentityCounters& DaemonMetrics::CountersIn(
    std::map<IdentityKey, IdentityCounters>* identities, IdentityKey key, int64_t* folded) const {
  auto it = identities->find(key);
  if (it == identities->end()) {
    // Beyond the cap a new identity is credited to "(other)" (which may take the cap's last
    // place): the totals over identities stay the GPUs' totals.
    if (identities->size() + 1 >= options_.max_identity_series) {
      if (folded != nullptr) ++*folded;
      key = IdentityKey{kOther, kOther, kOther, kOther, kOther,
                        kOther, kOther, kOther, kOther, kOther};
      it = identities->find(key);
    }
    if (it == identities->end()) it = identities->emplace(std::move(key), IdentityCounters{}).first;
  }
  return it->second;
}

void DaemonMetrics::CreditWork(const IdentityRecord* identity, const std::string& unit,
                               double amount, int64_t now_ms) {
  if (!(amount > 0) || unit.empty()) return;
  std::lock_guard lock(mu_);
  Changed();
  IdentityCounters& c = CountersOf(KeyOf(identity));
  c.work[unit] += amount;
  c.last_credit_ms = std::max(c.last_credit_ms, now_ms);
}

void DaemonMetrics::SetSlurmJobs(std::shared_ptr<const SlurmJobs> jobs) {
  std::lock_guard lock(mu_);
  slurm_jobs_ = std::move(jobs);
  ids_.clear();  // their labels change
  Changed();
}

void DaemonMetrics::AddSection(std::shared_ptr<const MetricsSection> section) {
  std::lock_guard lock(mu_);
  sections_.push_back(std::move(section));
  Changed();
}

void DaemonMetrics::SetDaemonSelf(const DaemonSelf& self) {
  std::lock_guard lock(mu_);
  self_ = self;
  Changed();
}

void DaemonMetrics::SetCollectorSuccess(const std::string& collector, bool ok) {
  std::lock_guard lock(mu_);
  auto [it, added] = module_collectors_.emplace(collector, ok);
  if (!added && it->second == ok) return;  // the cached exposition stays valid
  it->second = ok;
  Changed();
}

std::string DaemonMetrics::HistoryDbProblem() const {
  std::lock_guard lock(mu_);
  return self_.history_db_problem;
}

int64_t DaemonMetrics::StaleAfterMs() const {
  return std::max(3 * options_.interval_ms, options_.interval_ms + 10'000);
}

bool DaemonMetrics::SamplerFresh(int64_t now_ms) const {
  std::lock_guard lock(mu_);
  return Fresh(now_ms);
}

bool DaemonMetrics::Fresh(int64_t now_ms) const {
  return last_ && now_ms - last_->wall_ms <= StaleAfterMs();
}

std::string DaemonMetrics::Render(ExpositionFormat format, int64_t now_ms,
                                  const SelfStats* self) const {
  std::lock_guard lock(mu_);
  const bool fresh = Fresh(now_ms);
  // The newest tick counts for the time since it, up to one interval (SetPending): what the
  // history counts for it when its data ends now (docs/analysis.md, "What a sample covers"), in
  // tenths of the interval, so that a flood of scrapes rebuilds the exposition at most ten times
  // a tick rather than at each scrape.
  const int64_t tenth = std::max<int64_t>(1, options_.interval_ms / 10);
  const int64_t pending_ms =
      pending_
          ? std::clamp<int64_t>((now_ms - pending_->ts_ms) / tenth * tenth, 0, options_.interval_ms)
          : 0;
  Cached& cached = cache_[format == ExpositionFormat::kOpenMetrics ? 1 : 0];
  uint64_t sections_generation = 0;
  for (const auto& section : sections_) sections_generation += section->generation();
  if (cached.generation != generation_ || cached.sections_generation != sections_generation ||
      cached.fresh != fresh || cached.pending_ms != pending_ms) {
    cached.body.clear();
    cached.body.reserve(65536);
    ExpositionWriter w(format, &cached.body);
    std::deque<GpuLabels> labels;  // views into these strings: never copied or moved
    for (const MetricsGpu& g : gpus_) labels.emplace_back(g, options_.hostname);
    RenderGpuGauges(w, labels, now_ms);
    if (pending_ms > 0) {
      std::vector<GpuCounters> counters = gpu_counters_;
      std::map<IdentityKey, IdentityCounters> identities = identities_;
      TickCredit credit;
      std::vector<TickHolder> holders;
      GpuRunStates states = run_states_;  // provisional: the next credit starts from the same
      // Phases as the history writer's aggregator classifies them (its defaults).
      CreditOf(pending_->tick, pending_->ts_ms, pending_ms, PhaseThresholds{}, &states, &holders,
               &credit);
      Apply(credit, &counters, [&](uint32_t id) -> IdentityCounters& {
        auto key = pending_->keys.find(id);
        // As Credit will count it ("(other)" beyond the cap), the fold not counted twice.
        return CountersIn(&identities, key != pending_->keys.end() ? key->second : IdentityKey{},
                          nullptr);
      });
      RenderCounters(w, labels, counters);
      RenderProcesses(w, now_ms, identities);
    } else {
      RenderCounters(w, labels, gpu_counters_);
      RenderProcesses(w, now_ms, identities_);
    }
    RenderSelf(w, now_ms);
    for (const auto& section : sections_) section->Render(w, options_.hostname, now_ms);
    cached.generation = generation_;
    cached.sections_generation = sections_generation;
    cached.fresh = fresh;
    cached.pending_ms = pending_ms;
  }
  std::string out;
  out.reserve(cached.body.size() + 256);
  out = cached.body;
  ExpositionWriter w(format, &out);
  if (last_) {
    w.Family("cgov_sample_age_seconds", MetricType::kGauge,
             "Seconds since the last sampling tick, at the time of the scrape.");
    w.Sample({{"Hostname", options_.hostname}},
             std::max<int64_t>(0, now_ms - last_->wall_ms) / 1000.0);
  }
  if (self != nullptr) RenderProcessSelf(w, *self);
  w.Finish();
  return out;
}

namespace {

using ValueOf = std::function<std::optional<double>(size_t)>;

// One reading under cgov's name (base units) and, with --metrics-names dcgm, under
// dcgm-exporter's name and unit too. A sample for each GPU whose value is known; a lost GPU's
// only when `lost_too` (Xid errors: Xid 79 is how a GPU gets lost).
struct Reading {
  std::string_view name, help, dcgm_name, dcgm_help;
  MetricType type = MetricType::kGauge;
  bool lost_too = false;
  ValueOf value, dcgm_value;
  // dcgm-exporter's type when it differs (etc/default-counters.csv: remapped rows are counters).
  std::optional<MetricType> dcgm_type = std::nullopt;
};

struct GaugeWriter {
  ExpositionWriter& w;
  const MetricsTick& t;
  const std::vector<MetricsGpu>& gpus;
  std::vector<const Labels*> labels;       // by GPU position
  std::vector<const Labels*> dcgm_labels;  // likewise, with the GPU's pod as dcgm-exporter's
  bool dcgm_names = false;

  void Emit(std::string_view name, std::string_view help, MetricType type, bool lost_too,
            const ValueOf& value_of, bool dcgm = false) const {
    bool started = false;
    for (size_t i = 0; i < gpus.size() && i < t.gpus.size(); ++i) {
      if (t.gpus[i].lost && !lost_too) continue;
      const std::optional<double> v = value_of(i);
      if (!v) continue;
      if (!started) w.Family(name, type, help);
      started = true;
      w.Sample(dcgm ? *dcgm_labels[i] : *labels[i], *v);
    }
  }
  void Render(const Reading& r) const {
    Emit(r.name, r.help, r.type, r.lost_too, r.value);
    if (dcgm_names) {
      Emit(r.dcgm_name, r.dcgm_help, r.dcgm_type.value_or(r.type), r.lost_too, r.dcgm_value, true);
    }
  }
};

// Integer readings in another unit: divided (57 / 100 is 0.57; 57 * 0.01 is not).
template <typename Field>
ValueOf Scaled(const MetricsTick& t, Field field, double divisor) {
  return [&t, field, divisor](size_t i) -> std::optional<double> {
    const auto& v = t.gpus[i].*field;
    if (!v) return std::nullopt;
    return static_cast<double>(*v) / divisor;
  };
}

template <typename Field>
ValueOf Hertz(const MetricsTick& t, Field field) {  // from MHz
  return [&t, field](size_t i) -> std::optional<double> {
    const auto& v = t.gpus[i].*field;
    if (!v) return std::nullopt;
    return static_cast<double>(*v) * 1e6;
  };
}

// Utilization, memory, power, temperature, clocks.
void RenderUsage(const GaugeWriter& g) {
  const MetricsTick& t = g.t;
  g.Render({"cgov_gpu_utilization_ratio",
            "Time a kernel ran on the GPU in the last sample period (NVML utilization.gpu, 0-1).",
            "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", MetricType::kGauge, false,
            Scaled(t, &GpuFastSample::util_gpu_pct, 100),
            Scaled(t, &GpuFastSample::util_gpu_pct, 1)});
  g.Render({"cgov_gpu_memory_copy_utilization_ratio",
            "Time device memory was read or written (NVML utilization.memory, 0-1).",
            "DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", MetricType::kGauge, false,
            Scaled(t, &GpuFastSample::util_mem_pct, 100),
            Scaled(t, &GpuFastSample::util_mem_pct, 1)});
  g.Render({"cgov_gpu_encoder_utilization_ratio", "Time the video encoder was busy (NVML, 0-1).",
            "DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %).", MetricType::kGauge, false,
            Scaled(t, &GpuFastSample::enc_util_pct, 100),
            Scaled(t, &GpuFastSample::enc_util_pct, 1)});
  g.Render({"cgov_gpu_decoder_utilization_ratio", "Time the video decoder was busy (NVML, 0-1).",
            "DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %).", MetricType::kGauge, false,
            Scaled(t, &GpuFastSample::dec_util_pct, 100),
            Scaled(t, &GpuFastSample::dec_util_pct, 1)});
  // Free as nvidia-smi and DCGM count it: the driver's reservation is neither used nor free
  // (an idle H100 80GB: 81559 MiB total, 480 reserved, 81079 free; driver 580.159.04).
  auto free_bytes = [&](size_t i) -> std::optional<double> {
    const GpuFastSample& s = t.gpus[i];
    if (!s.mem_used_bytes || !s.mem_total_bytes) return std::nullopt;
    const uint64_t taken = *s.mem_used_bytes + g.gpus[i].memory_reserved_bytes.value_or(0);
    return static_cast<double>(*s.mem_total_bytes - std::min(taken, *s.mem_total_bytes));
  };
  auto mib = [](const ValueOf& bytes) -> ValueOf {
    return [bytes](size_t i) -> std::optional<double> {
      const std::optional<double> b = bytes(i);
      if (!b) return std::nullopt;
      return std::floor(*b / kMib);
    };
  };
  const ValueOf used_bytes = Scaled(t, &GpuFastSample::mem_used_bytes, 1);
  g.Render({"cgov_gpu_memory_used_bytes", "Device memory in use (bytes).", "DCGM_FI_DEV_FB_USED",
            "Framebuffer memory used (in MiB).", MetricType::kGauge, false, used_bytes,
            mib(used_bytes)});
  g.Render({"cgov_gpu_memory_free_bytes",
            "Device memory free: total less used and the driver's reservation (bytes).",
            "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", MetricType::kGauge, false,
            free_bytes, mib(free_bytes)});
  // What the driver sets aside (nvmlMemory_v2_t.reserved), as DCGM reports it.
  const ValueOf reserved_bytes = [&g](size_t i) -> std::optional<double> {
    const std::optional<uint64_t>& r = g.gpus[i].memory_reserved_bytes;
    if (!r) return std::nullopt;
    return static_cast<double>(*r);
  };
  g.Render({"cgov_gpu_memory_reserved_bytes",
            "Device memory the driver reserves: neither used nor free (bytes).",
            "DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).", MetricType::kGauge,
            false, reserved_bytes, mib(reserved_bytes)});
  g.Render({"cgov_gpu_power_watts", "Power draw (W).", "DCGM_FI_DEV_POWER_USAGE",
            "Power draw (in W).", MetricType::kGauge, false,
            Scaled(t, &GpuFastSample::power_mw, 1000), Scaled(t, &GpuFastSample::power_mw, 1000)});
  g.Render({"cgov_gpu_temperature_celsius", "GPU temperature (degrees Celsius).",
            "DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", MetricType::kGauge, false,
            Scaled(t, &GpuFastSample::temp_c, 1), Scaled(t, &GpuFastSample::temp_c, 1)});
  g.Render({"cgov_gpu_sm_clock_hertz", "SM clock frequency (Hz).", "DCGM_FI_DEV_SM_CLOCK",
            "SM clock frequency (in MHz).", MetricType::kGauge, false,
            Hertz(t, &GpuFastSample::sm_clock_mhz), Scaled(t, &GpuFastSample::sm_clock_mhz, 1)});
  g.Render({"cgov_gpu_memory_clock_hertz", "Memory clock frequency (Hz).", "DCGM_FI_DEV_MEM_CLOCK",
            "Memory clock frequency (in MHz).", MetricType::kGauge, false,
            Hertz(t, &GpuFastSample::mem_clock_mhz), Scaled(t, &GpuFastSample::mem_clock_mhz, 1)});
}

// The engine's activity (NVML GPM graphics utilization: time any compute or graphics work ran,
// DCGM's GR_ENGINE_ACTIVE). Under dcgm-exporter's name a GPU held by one pod carries its labels
// (as every dcgm series of it does); a GPU shared by several pods (or a pod and processes
// outside pods) is served once per holder, each with its share of the activity split as the
// identity counters split the GPU's time, so that OpenCost's per-pod average sees each pod's
// part and the sum over holders is the GPU's activity.
void RenderEngineActive(const GaugeWriter& g, const ValueOf& active) {
  g.Emit("cgov_gpu_engine_active_ratio",
         "Ratio of time any compute or graphics work ran on the GPU (NVML GPM graphics "
         "utilization, 0-1).",
         MetricType::kGauge, false, active);
  if (!g.dcgm_names) return;
  bool started = false;
  for (size_t i = 0; i < g.gpus.size() && i < g.t.gpus.size(); ++i) {
    const std::optional<double> v = g.t.gpus[i].lost ? std::nullopt : active(i);
    if (!v) continue;
    if (!started) {
      g.w.Family("DCGM_FI_PROF_GR_ENGINE_ACTIVE", MetricType::kGauge,
                 "Ratio of time the graphics engine is active.");
    }
    started = true;
    const std::vector<MetricsGpuPod>* pods = i < g.t.gpu_pods.size() ? &g.t.gpu_pods[i] : nullptr;
    if (pods == nullptr || pods->size() <= 1) {
      g.w.Sample(*g.dcgm_labels[i], *v);
      continue;
    }
    for (const MetricsGpuPod& p : *pods) {
      Labels l = *g.labels[i];
      l.insert(l.end(),
               {{"container", p.container}, {"namespace", p.namespace_name}, {"pod", p.pod}});
      g.w.Sample(l, Round6(*v * p.share));  // 0.72, not 0.7200000000000001
    }
  }
}

void RenderProfiling(const GaugeWriter& g) {
  const MetricsTick& t = g.t;
  // NVML GPM, as dcgm-exporter's profiling fields: activity as a ratio (percent / 100, divided
  // as above), traffic in bytes/s (MiB/s x 1048576).
  auto gpm = [&](std::optional<double> GpmMetrics::*field, double times, double per) -> ValueOf {
    return [&t, field, times, per](size_t i) -> std::optional<double> {
      if (i >= t.gpm.size() || !(t.gpm[i].*field)) return std::nullopt;
      return *(t.gpm[i].*field) * times / per;
    };
  };
  auto prof = [&](std::string_view name, std::string_view help, std::string_view dcgm_name,
                  std::optional<double> GpmMetrics::*field, bool ratio) {
    const ValueOf v = ratio ? gpm(field, 1, 100) : gpm(field, 1048576.0, 1);
    g.Render({name, help, dcgm_name, help, MetricType::kGauge, false, v, v});
  };
  RenderEngineActive(g, gpm(&GpmMetrics::graphics_active_pct, 1, 100));
  prof("cgov_gpu_sm_active_ratio", "Ratio of SMs busy (NVML GPM SM utilization, 0-1).",
       "DCGM_FI_PROF_SM_ACTIVE", &GpmMetrics::sm_active_pct, true);
  prof("cgov_gpu_sm_occupancy_ratio", "Ratio of resident warps to the maximum (0-1).",
       "DCGM_FI_PROF_SM_OCCUPANCY", &GpmMetrics::sm_occupancy_pct, true);
  prof("cgov_gpu_tensor_active_ratio", "Ratio of time any tensor pipe was busy (0-1).",
       "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", &GpmMetrics::tensor_active_pct, true);
  prof("cgov_gpu_dram_active_ratio", "Ratio of peak DRAM bandwidth used (0-1).",
       "DCGM_FI_PROF_DRAM_ACTIVE", &GpmMetrics::dram_active_pct, true);
  prof("cgov_gpu_pcie_transmit_bytes_per_second", "PCIe bytes sent per second.",
       "DCGM_FI_PROF_PCIE_TX_BYTES", &GpmMetrics::pcie_tx_mib_s, false);
  prof("cgov_gpu_pcie_receive_bytes_per_second", "PCIe bytes received per second.",
       "DCGM_FI_PROF_PCIE_RX_BYTES", &GpmMetrics::pcie_rx_mib_s, false);
  prof("cgov_gpu_nvlink_transmit_bytes_per_second", "NVLink bytes sent per second.",
       "DCGM_FI_PROF_NVLINK_TX_BYTES", &GpmMetrics::nvlink_tx_mib_s, false);
  prof("cgov_gpu_nvlink_receive_bytes_per_second", "NVLink bytes received per second.",
       "DCGM_FI_PROF_NVLINK_RX_BYTES", &GpmMetrics::nvlink_rx_mib_s, false);
}

void RenderMemoryHealth(const GaugeWriter& g) {
  const MetricsTick& t = g.t;
  // Memory health: remapped rows (Ampere and later) or retired pages (the GPUs before).
  auto health = [&](std::string_view name, std::string_view dcgm_name, std::string_view help,
                    bool rows, double (*value_of)(const MemoryHealth&),
                    MetricType dcgm_type = MetricType::kGauge) {
    ValueOf v = [&t, rows, value_of](size_t i) -> std::optional<double> {
      if (i >= t.memory_health.size() || !t.memory_health[i] ||
          t.memory_health[i]->row_remapping != rows) {
        return std::nullopt;
      }
      return value_of(*t.memory_health[i]);
    };
    g.Render({name, help, dcgm_name, help, MetricType::kGauge, false, v, v, dcgm_type});
  };
  // dcgm-exporter types the row and page counts as counters (etc/default-counters.csv).
  const MetricType counter = MetricType::kCounter;
  health(
      "cgov_gpu_remapped_rows_correctable", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
      "Rows remapped for correctable errors.", true,
      [](const MemoryHealth& h) { return static_cast<double>(h.remapped_correctable); }, counter);
  health(
      "cgov_gpu_remapped_rows_uncorrectable", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
      "Rows remapped for uncorrectable errors.", true,
      [](const MemoryHealth& h) { return static_cast<double>(h.remapped_uncorrectable); }, counter);
  health("cgov_gpu_row_remap_pending", "DCGM_FI_DEV_ROW_REMAP_PENDING",
         "1 when rows wait for a GPU reset to be remapped.", true,
         [](const MemoryHealth& h) { return h.remap_pending ? 1.0 : 0.0; });
  health("cgov_gpu_row_remap_failure", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
         "1 when a row remapping has failed.", true,
         [](const MemoryHealth& h) { return h.remap_failure ? 1.0 : 0.0; });
  health(
      "cgov_gpu_retired_pages_sbe", "DCGM_FI_DEV_RETIRED_SBE",
      "Pages retired for repeated single-bit ECC errors.", false,
      [](const MemoryHealth& h) { return static_cast<double>(h.retired_sbe); }, counter);
  health(
      "cgov_gpu_retired_pages_dbe", "DCGM_FI_DEV_RETIRED_DBE",
      "Pages retired for double-bit ECC errors.", false,
      [](const MemoryHealth& h) { return static_cast<double>(h.retired_dbe); }, counter);
  health(
      "cgov_gpu_retired_pages_pending", "DCGM_FI_DEV_RETIRED_PENDING",
      "1 when pages wait for a reboot to be retired.", false,
      [](const MemoryHealth& h) { return h.retired_pending ? 1.0 : 0.0; }, counter);
}

void RenderXidsAndEnergy(const GaugeWriter& g) {
  const MetricsTick& t = g.t;
  const ValueOf last_xid = [&t](size_t i) -> std::optional<double> {
    if (!t.gpus[i].xid_errors) return std::nullopt;
    return static_cast<double>(t.gpus[i].last_xid.value_or(0));
  };
  g.Render({"cgov_gpu_last_xid",
            "Code of the last Xid critical error (0: none since cgov started).",
            "DCGM_FI_DEV_XID_ERRORS",
            "Value of the last XID error encountered (0: none since cgov started).",
            MetricType::kGauge, true, last_xid, last_xid});
  g.Emit("cgov_gpu_xid_errors_total", "Xid critical errors the driver reported since cgov started.",
         MetricType::kCounter, true, Scaled(t, &GpuFastSample::xid_errors, 1));
  g.Render({"cgov_gpu_energy_joules_total", "Energy used since the driver was last loaded (J).",
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "Total energy consumption since the driver was last loaded (in mJ).",
            MetricType::kCounter, false, Scaled(t, &GpuFastSample::energy_mj, 1000),
            Scaled(t, &GpuFastSample::energy_mj, 1)});
}

}  // namespace

void DaemonMetrics::RenderGpuGauges(ExpositionWriter& w, const std::deque<GpuLabels>& labels,
                                    int64_t now_ms) const {
  // A reading is served only from a fresh tick that has it: unknown is absent, never stale.
  if (!Fresh(now_ms)) return;
  GaugeWriter g{w, *last_, gpus_, {}, {}, options_.dcgm_names};
  // dcgm-exporter's pod labels: the pod holding the GPU, empty when none holds it or several
  // share it (DCGM_FI_PROF_GR_ENGINE_ACTIVE is then served per holder).
  std::vector<Labels> dcgm_labels;
  dcgm_labels.reserve(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    g.labels.push_back(&labels[i].labels);
    const MetricsGpuPod* pod = i < last_->gpu_pods.size() && last_->gpu_pods[i].size() == 1
                                   ? &last_->gpu_pods[i][0]
                                   : nullptr;
    Labels& l = dcgm_labels.emplace_back(labels[i].labels);
    l.insert(l.end(), {{"container", pod ? std::string_view(pod->container) : ""},
                       {"namespace", pod ? std::string_view(pod->namespace_name) : ""},
                       {"pod", pod ? std::string_view(pod->pod) : ""}});
  }
  for (const Labels& l : dcgm_labels) g.dcgm_labels.push_back(&l);
  RenderUsage(g);
  RenderProfiling(g);
  RenderMemoryHealth(g);
  RenderXidsAndEnergy(g);
}

void DaemonMetrics::RenderCounters(ExpositionWriter& w, const std::deque<GpuLabels>& labels,
                                   const std::vector<GpuCounters>& counters) const {
  if (gpus_.empty()) return;
  w.Family("cgov_gpu_phase_seconds_total", MetricType::kCounter,
           "GPU-seconds by phase (truly_idle, idle_held, underutilized, productive, "
           "compute_bound; unknown: no utilization reading).");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    for (size_t p = 0; p <= kPhaseCount; ++p) {
      w.Sample(labels[i].With("phase", PhaseKeyAt(p)), counters[i].ms[p] / 1000.0);
    }
  }
  w.Family("cgov_gpu_busy_seconds_total", MetricType::kCounter,
           "GPU-seconds x utilization / 100 (effective GPU-seconds), by phase.");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    for (size_t p = 0; p < kPhaseCount; ++p) {
      w.Sample(labels[i].With("phase", PhaseKeyAt(p)), counters[i].util_ms_x100[p] / 1e5);
    }
  }
  w.Family("cgov_gpu_pattern_seconds_total", MetricType::kCounter,
           "GPU-seconds in each utilization pattern the findings read (low, high, band, "
           "graphics_only, thermal, power_capped, memory_pressure, cpu_bound, iowait; with NVML "
           "GPM: gpm, tensor and bound_* times, *_active as seconds x ratio).");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const GpuUsage& u = counters[i].usage;
    for (const UsagePattern& p : kUsagePatterns) {
      if (p.gpm && u.gpm_ms == 0) continue;
      w.Sample(labels[i].With("pattern", p.key),
               static_cast<double>(u.*p.field) / (p.x100 ? 1e5 : 1e3));
    }
  }
  w.Family("cgov_gpu_phase_energy_joules_total", MetricType::kCounter,
           "Energy by phase: power x time (J) while the power reading was known (unknown: no "
           "utilization reading); the truly_idle and idle_held series are the idle energy.");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const GpuUsage& u = counters[i].usage;
    for (size_t p = 0; p <= kPhaseCount; ++p) {
      const int64_t mj = p < kPhaseCount ? u.energy_mj[p] : u.energy_unknown_mj;
      w.Sample(labels[i].With("phase", PhaseKeyAt(p)), static_cast<double>(mj) / 1000.0);
    }
  }
  w.Family("cgov_gpu_energy_seconds_total", MetricType::kCounter,
           "GPU-seconds whose energy is known, by basis: power (a power reading, so power x time), "
           "counter (inside windows the driver's energy counter measured, whose energy is the "
           "counter's). The two overlap: do not add them.");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const GpuUsage& u = counters[i].usage;
    w.Sample(labels[i].With("basis", "power"), static_cast<double>(u.energy_known_ms) / 1000.0);
    w.Sample(labels[i].With("basis", "counter"), static_cast<double>(u.energy_metered_ms) / 1000.0);
  }
  w.Family("cgov_gpu_swings_total", MetricType::kCounter,
           "Swings of utilization between a trough (< 50 %) and high (>= 70 %), as the bursty "
           "input-pipeline finding counts them.");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    w.Sample(labels[i].labels, static_cast<double>(counters[i].usage.transitions));
  }
  bool priced = false;
  for (const MetricsGpu& g : gpus_) priced = priced || g.price_per_gpu_hour.has_value();
  if (!priced) return;
  w.Family(
      "cgov_gpu_cost_usd_total", MetricType::kCounter,
      "Estimated cost of the GPU-seconds by phase: seconds x price per GPU-hour / 3600 (USD).");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i].price_per_gpu_hour) continue;
    for (size_t p = 0; p <= kPhaseCount; ++p) {
      w.Sample(labels[i].With("phase", PhaseKeyAt(p)), UsdOf(counters[i].cost_micro_usd[p]));
    }
  }
  w.Family("cgov_gpu_price_usd_per_hour", MetricType::kGauge,
           "The price per GPU-hour the cost counters use (USD); source says where it came from.");
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i].price_per_gpu_hour) continue;
    w.Sample(labels[i].With("source", gpus_[i].price_source), UsdOf(*gpus_[i].price_per_gpu_hour));
  }
}

void DaemonMetrics::RenderProcesses(
    ExpositionWriter& w, int64_t now_ms,
    const std::map<IdentityKey, IdentityCounters>& identities) const {
  auto identity_labels = [&](const IdentityKey& k) {
    Labels l{{"Hostname", options_.hostname}, {"user", k.user},
             {"project", k.project},          {"team", k.team},
             {"namespace", k.namespace_name}, {"pod", k.pod},
             {"container", k.container},      {"pod_uid", k.pod_uid},
             {"slurm_job", k.slurm_job}};
    if (slurm_jobs_) {
      l.insert(l.end(),
               {{"slurm_account", k.slurm_account}, {"slurm_partition", k.slurm_partition}});
    }
    return l;
  };
  if (!identities.empty()) {
    w.Family("cgov_identity_gpu_seconds_total", MetricType::kCounter,
             "GPU-seconds attributed to an identity, by phase: a GPU's time split between the "
             "identities holding compute memory on it, in proportion to their SM utilization while "
             "it is busy and NVML reports per-process utilization, evenly otherwise (adds up to "
             "the attributed GPU time).");
    for (const auto& [key, c] : identities) {
      for (size_t p = 0; p <= kPhaseCount; ++p) {
        Labels l = identity_labels(key);
        l.emplace_back("phase", PhaseKeyAt(p));
        w.Sample(l, c.attributed_ms[p] / 1000.0);
      }
    }
    w.Family(
        "cgov_identity_held_seconds_total", MetricType::kCounter,
        "GPU-seconds an identity had a process on a GPU (a shared GPU counts for each holder).");
    for (const auto& [key, c] : identities) w.Sample(identity_labels(key), c.held_ms / 1000.0);
    w.Family("cgov_identity_idle_held_seconds_total", MetricType::kCounter,
             "GPU-seconds an identity held compute memory on an idle-held GPU.");
    for (const auto& [key, c] : identities) w.Sample(identity_labels(key), c.idle_held_ms / 1000.0);
    w.Family("cgov_identity_energy_joules_total", MetricType::kCounter,
             "An identity's share of its GPUs' energy (power x time, J), split as its GPU-seconds "
             "are.");
    for (const auto& [key, c] : identities) w.Sample(identity_labels(key), c.energy_mj / 1000.0);
    w.Family("cgov_identity_idle_held_energy_joules_total", MetricType::kCounter,
             "Of an identity's energy, what its GPUs burned while idle-held (J).");
    for (const auto& [key, c] : identities) {
      w.Sample(identity_labels(key), c.idle_held_energy_mj / 1000.0);
    }
    w.Family("cgov_identity_cost_usd_total", MetricType::kCounter,
             "Estimated cost of the GPU-seconds attributed to an identity (USD).");
    for (const auto& [key, c] : identities) {
      w.Sample(identity_labels(key), UsdOf(c.cost_micro_usd));
    }
    const bool work = std::any_of(identities.begin(), identities.end(),
                                  [](const auto& i) { return !i.second.work.empty(); });
    if (work) {
      w.Family("cgov_identity_work_total", MetricType::kCounter,
               "Work an identity's jobs reported in their progress files (CGOV_PROGRESS_FILE, "
               "which cgov run sets), by unit, counted while the daemon saw them on a GPU.");
      for (const auto& [key, c] : identities) {
        for (const auto& [unit, amount] : c.work) {
          Labels l = identity_labels(key);
          l.emplace_back("unit", unit);
          w.Sample(l, amount);
        }
      }
    }
  }
  if (!Fresh(now_ms) || last_->processes.empty()) return;
  w.Family("cgov_process_gpu_memory_bytes", MetricType::kGauge,
           "GPU memory used by a process at the last sample (series leave with the process).");
  for (const MetricsProcess& p : last_->processes) {
    if (p.gpu_pos >= gpus_.size() || !p.used_memory_bytes) continue;
    const MetricsGpu& g = gpus_[p.gpu_pos];
    const std::string gpu = fmt::format("{}", g.index), pid = fmt::format("{}", p.pid);
    Labels l = {{"gpu", gpu},
                {"UUID", g.uuid},
                {"Hostname", options_.hostname},
                {"pid", pid},
                {"user", p.user},
                {"command", p.command},
                {"type", p.compute ? "compute" : "graphics"}};
    const std::string instance = g.gpu_instance_id ? fmt::format("{}", *g.gpu_instance_id) : "";
    if (g.gpu_instance_id) {
      l.emplace_back("GPU_I_PROFILE", g.mig_profile);
      l.emplace_back("GPU_I_ID", instance);
    }
    w.Sample(l, static_cast<double>(*p.used_memory_bytes));
  }
}

void DaemonMetrics::RenderSelf(ExpositionWriter& w, int64_t now_ms) const {
  const bool fresh = Fresh(now_ms);
  w.Family("cgov_collector_success", MetricType::kGauge,
           "1 when the collector's last run succeeded within the staleness limit, else 0.");
  const std::string_view host = options_.hostname;
  auto success = [&](std::string_view name, bool ok) {
    w.Sample({{"collector", name}, {"Hostname", host}}, ok ? 1 : 0);
  };
  success("sampler", fresh);
  success("nvml", fresh && last_->nvml_ok);
  success("gpu_processes", fresh && last_->processes_ok);
  success("procfs", fresh && last_->host_ok);
  success("history_db", self_.history_db_ok && self_.history_db_problem.empty());
  for (const auto& [collector, ok] : module_collectors_) success(collector, ok);
  if (!self_.collector_seconds.empty()) {
    w.Family("cgov_collector_duration_seconds", MetricType::kGauge,
             "Seconds the last tick spent in each collector (nvml: the GPUs' readings, "
             "gpu_processes, procfs, history_db) and each daemon module.");
    for (const auto& [collector, seconds] : self_.collector_seconds) {
      w.Sample({{"collector", collector}, {"Hostname", host}}, seconds);
    }
  }
  if (last_) {
    w.Family("cgov_last_sample_timestamp_seconds", MetricType::kGauge,
             "Unix time of the last sampling tick.");
    w.Sample({{"Hostname", host}}, last_->wall_ms / 1000.0);
  }
  w.Family("cgov_sample_interval_seconds", MetricType::kGauge, "The daemon's sampling interval.");
  w.Sample({{"Hostname", host}}, options_.interval_ms / 1000.0);
  w.Family("cgov_ticks_total", MetricType::kCounter, "Sampling ticks taken.");
  w.Sample({{"Hostname", host}}, static_cast<double>(self_.ticks));
  w.Family("cgov_tick_failures_total", MetricType::kCounter,
           "Sampling ticks that could not be written to the history database.");
  w.Sample({{"Hostname", host}}, static_cast<double>(self_.failed_ticks));
  if (!self_.module_failures.empty()) {
    w.Family("cgov_daemon_module_failures_total", MetricType::kCounter,
             "Ticks on which a daemon module failed (its log line names it); the others went on.");
    for (const auto& [module, failures] : self_.module_failures) {
      w.Sample({{"module", module}, {"Hostname", host}}, static_cast<double>(failures));
    }
  }
  w.Family("cgov_series_dropped_total", MetricType::kCounter,
           "Series left out because their family reached its cap: per tick for processes; for "
           "identities, each credit that went to the identity \"(other)\" instead.");
  w.Sample({{"Hostname", host}, {"metric", "cgov_process_gpu_memory_bytes"}},
           static_cast<double>(dropped_process_series_));
  w.Sample({{"Hostname", host}, {"metric", "cgov_identity_gpu_seconds_total"}},
           static_cast<double>(folded_identity_credits_));
  w.Family("cgov_build_info", MetricType::kGauge,
           "Always 1; the version, git revision and build date of cgov (and the host's "
           "--instance-id, when given).");
  if (options_.instance_id.empty()) {
    w.Sample({{"version", kBuildInfo.version},
              {"revision", kBuildInfo.revision},
              {"build_date", kBuildInfo.build_date},
              {"Hostname", host}},
             1);
  } else {
    w.Sample({{"version", kBuildInfo.version},
              {"revision", kBuildInfo.revision},
              {"build_date", kBuildInfo.build_date},
              {"Hostname", host},
              {"instance_id", options_.instance_id}},
             1);
  }
  // Fixed identity labels: a scrape that overwrites cgov's labels with the target's (Prometheus'
  // honor_labels: false, the Prometheus Operator's default) shows on this series as
  // exported_namespace/exported_pod/exported_container, which `cgov report --prometheus` checks.
  w.Family("cgov_honor_labels_check", MetricType::kGauge,
           "Always 1, with namespace, pod and container set to cgov-label-check: if Prometheus "
           "stores it with exported_pod, the scrape renamed cgov's identity labels (set "
           "honorLabels: true).");
  w.Sample({{"Hostname", host},
            {"namespace", kLabelCheck},
            {"pod", kLabelCheck},
            {"container", kLabelCheck}},
           1);
}

// The names and help of Prometheus' client libraries (client_golang's process collector), without
// labels: what a dashboard for any exporter's own cost already reads.
void DaemonMetrics::RenderProcessSelf(ExpositionWriter& w, const SelfStats& self) {
  w.Family("process_cpu_seconds_total", MetricType::kCounter,
           "Total user and system CPU time spent in seconds.");
  w.Sample({}, self.cpu_seconds);
  w.Family("process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes.");
  w.Sample({}, static_cast<double>(self.resident_bytes));
  w.Family("process_virtual_memory_bytes", MetricType::kGauge, "Virtual memory size in bytes.");
  w.Sample({}, static_cast<double>(self.virtual_bytes));
  if (self.open_fds) {
    w.Family("process_open_fds", MetricType::kGauge, "Number of open file descriptors.");
    w.Sample({}, static_cast<double>(*self.open_fds));
  }
  if (self.max_fds) {
    w.Family("process_max_fds", MetricType::kGauge, "Maximum number of open file descriptors.");
    w.Sample({}, static_cast<double>(*self.max_fds));
  }
  if (self.start_time_seconds) {
    w.Family("process_start_time_seconds", MetricType::kGauge,
             "Start time of the process since unix epoch in seconds.");
    w.Sample({}, *self.start_time_seconds);
  }
}

}  // namespace cgov
