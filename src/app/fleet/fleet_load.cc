#include "app/fleet/fleet_load.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "app/fleet/fleet_queries.h"
#include "core/time_format.h"
#include "os/env.h"

namespace cgov {
namespace {

// The daily rules summed the hourly evaluations between 24.5 h and 0.5 h before their own.
constexpr int64_t kDailyLagMs = kHourMs / 2;
// A counter that fell by more than this (a millisecond of a seconds counter) was reset; less is
// the rounding of floating-point values summed in another order.
constexpr double kFallMargin = 1e-3;
// Auto reads the rules for windows of a day or more: shorter ones are cheap from raw counters.
constexpr int64_t kAutoRulesMinWindowMs = 24 * kHourMs;

// Times this close to now (when the report starts) are read by instant queries only, never in a
// range query. VictoriaMetrics leaves out, or replaces with earlier ones, the points of a range
// query that fall within its -search.latencyOffset (30 s by default) of now, nocache=1 or not
// (version 1.79.5, issue 50); an instant query with nocache=1 is answered for the time it names.
// Five minutes leaves room for a larger offset.
constexpr int64_t kRecentMs = 5 * 60'000;

// A stretch of the window read one way: the raw counters over (from, to], or a run of
// consecutive hourly rule evaluations at first, first + 1h, ..., last (covering
// (first - 1h, last]), with the owners' identity rules in each evaluation of it or in none.
// A daily run is a run of hourly evaluations whose sums come from the daily rules evaluated
// at first_day, first_day + 24h, ..., last_day, which summed exactly those hours.
struct Span {
  bool rules = false;
  bool owner_rules = false;
  bool daily = false;
  int64_t from_ms = 0, to_ms = 0;
  int64_t first_day_ms = 0, last_day_ms = 0;
  int64_t Hours() const { return (to_ms - from_ms) / kHourMs; }
  bool recent = false;  // it ends within kRecentMs of now
  // A raw span of at most an hour, not recent: read at its two ends in one range query, its
  // identities and ticks always (SpanSumRequests()) and its GPU counters where the window has
  // rule runs too (Build(): RawSpanJob() with `whole`).
  bool OneRead() const { return !rules && !recent && to_ms - from_ms <= kHourMs; }
};

// Dollars a server answered as micro-dollars: 0 for a negative or non-finite value, at most a
// trillion dollars (never an overflow).
MicroUsd DollarsFromOutside(double usd) {
  if (!(usd > 0)) return 0;
  return static_cast<MicroUsd>(std::llround(std::min(usd, 1e12) * 1e6));
}

int64_t Ms(double seconds) { return std::llround(std::max(0.0, seconds) * 1000); }
// Joules a server answered as millijoules: 0 for a negative or non-finite value, at most 1 TJ a
// series (45 years of a 700 W GPU), so that thousands of them add up without overflow.
int64_t Mj(double joules) {
  if (!(joules > 0)) return 0;
  return std::llround(std::min(joules, 1e12) * 1000);
}
double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000; }
int64_t HourOf(int64_t ms) { return ms >= 0 ? ms / kHourMs : (ms - kHourMs + 1) / kHourMs; }

std::optional<size_t> PhaseSlot(const std::string& key) {
  if (std::optional<Phase> p = PhaseFromKey(key)) return static_cast<size_t>(*p);
  if (key == "unknown") return kPhaseCount;
  return std::nullopt;
}

// The kinds the fleet's hours (the heatmap) are read in: time and busy time by phase.
constexpr GpuCounterKind kHeatmapKinds[] = {GpuCounterKind::kPhase, GpuCounterKind::kBusy};

// Where a GPU counter's series goes in a GpuUsage: its phase (kPhaseCount: unknown; busy time
// only for a known phase), its pattern's place in kUsagePatterns, or 0 for swings. None: a label
// this build does not know (a newer daemon's), left out.
std::optional<size_t> SlotOf(GpuCounterKind kind, const PromSeries& s) {
  switch (kind) {
    case GpuCounterKind::kPhase:
      return PhaseSlot(s.Label("phase"));
    case GpuCounterKind::kBusy: {
      std::optional<size_t> slot = PhaseSlot(s.Label("phase"));
      if (slot && *slot < kPhaseCount) return slot;
      return std::nullopt;
    }
    case GpuCounterKind::kPattern: {
      const std::string key = s.Label("pattern");
      for (size_t i = 0; i < std::size(kUsagePatterns); ++i) {
        if (key == kUsagePatterns[i].key) return i;
      }
      return std::nullopt;
    }
    case GpuCounterKind::kSwings:
      return 0;
    case GpuCounterKind::kEnergy:
      return PhaseSlot(s.Label("phase"));
    case GpuCounterKind::kEnergyTime: {
      const std::string basis = s.Label("basis");
      if (basis == "power") return 0;
      if (basis == "counter") return 1;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Memory and power: the window's mean reading, over the GPU's held time. Over recording rules,
// the mean of their hourly means (a raw mean over a month reads every sample of it), and where
// days came from the daily rules, the mean of their daily means (a GPU without one: its hourly
// means of the last two days).
struct WindowMean {
  const char* metric;
  const char* rule;
  const char* daily_rule;
  double scale;  // to MiB / 0.1 W
  bool memory;
};
// cgov's own names: a dcgm-exporter on the same node serves its readings under DCGM_FI_*.
constexpr std::array<WindowMean, 2> kWindowMeans = {
    WindowMean{"cgov_gpu_memory_used_bytes", "cgov:gpu_memory_used_bytes:avg1h",
               "cgov:gpu_memory_used_bytes:avg1d", 1.0 / 1048576, true},
    WindowMean{"cgov_gpu_power_watts", "cgov:gpu_power_watts:avg1h", "cgov:gpu_power_watts:avg1d",
               10, false}};

class FleetBuilder {
 public:
  FleetBuilder(const PromQuery& prometheus, int64_t since_ms, int64_t until_ms,
               FleetOptions options)
      : prom_(prometheus),
        since_ms_(since_ms),
        until_ms_(until_ms),
        options_(options),
        range_before_ms_(Env::Default()->WallMs() - kRecentMs) {}

  Result<HistoryInput> Build();

 private:
  // SpanSum(): its requests (one over rules, the owners' rule with `owners`; over raw counters,
  // the span's end and start, or for a span of one read, both ends by `key` in one range
  // query), then the sums from their answers. `key`: `by` and the labels that tell the
  // counter's series apart beyond it (pod and container), "" for `by` itself.
  static std::vector<PromRequest> SpanSumRequests(const char* counter, const std::string& by,
                                                  const Span& span, bool owners = false,
                                                  const std::string& key = "");
  Result<std::vector<PromSeries>> SpanSum(const char* counter, const std::string& by,
                                          const Span& span, std::vector<PromSeries> end,
                                          std::vector<PromSeries> start,
                                          const std::set<std::string>& restarted);
  const char* IdentityLabels() const {
    return options_.pods ? kIdentityLabels : kIdentityLabelsWithoutPods;
  }
  uint32_t GpuId(const PromSeries& s);
  uint32_t IdentityId(const PromSeries& s);
  Status CheckHonorLabels();
  Result<std::vector<Span>> PlanSpans();
  int64_t CountRuleHours(const std::vector<Span>& spans);
  std::vector<Span> WithDays(std::vector<Span> spans, const std::vector<int64_t>& evaluations,
                             const std::vector<std::pair<int64_t, double>>& days) const;
  // A part of the report: its queries, and what is made of their answers. Build() asks every
  // part's queries in one batch (QueryEach) and each part takes its answers, in order, as soon as
  // they are in, while later parts' queries are being answered.
  struct Job {
    std::vector<PromRequest> requests;
    std::function<Status(std::vector<std::vector<PromSeries>>)> process;
  };
  Status RunJobs(std::vector<Job> jobs);
  Job RawSpanJob(int64_t from_ms, int64_t to_ms, bool whole);
  Status AddRawStretches(GpuCounterKind kind, std::vector<PromSeries> read_values,
                         const std::vector<int64_t>& times,
                         std::vector<std::set<std::string>> again,
                         const std::function<int64_t(size_t)>& hour_of_stretch,
                         const std::function<std::optional<size_t>(double)>& index_of);
  Job RuleRunJob(const Span& run);
  void AddGpuPoint(const PromSeries& s, int64_t hour, double value, GpuCounterKind kind);
  Status AfterGpus();
  Job IdentitiesJob(const Span& span, bool early);
  Job WindowFiguresJob();
  void TakeMeans(const std::vector<std::vector<PromSeries>>& answers,
                 const std::vector<std::pair<size_t, size_t>>& mean_answers);
  void TakePrices(const std::vector<std::vector<PromSeries>>& answers, size_t build_info_at,
                  size_t prices_at, size_t opencost_at);
  Status AddOpenCostPrices(const std::vector<PromSeries>& costs);

  const PromQuery& prom_;
  int64_t since_ms_, until_ms_;
  FleetOptions options_;
  int64_t range_before_ms_;  // times after it are recent (kRecentMs): read by instant queries
  HistoryInput in_;
  // (host, UUID, GPU_I_ID): a MIG instance carries its parent's UUID, as in dcgm-exporter
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> gpu_ids_;
  std::map<std::string, uint32_t> host_gpu_;  // host -> its first GPU id
  // (host, user, project, team, namespace, pod, container, pod_uid, slurm_job)
  std::map<std::tuple<std::string, std::string, std::string, std::string, std::string, std::string,
                      std::string, std::string, std::string>,
           uint32_t>
      identity_ids_;
  std::map<int64_t, HourBucket> hours_;
  // Per-GPU totals of the rule runs too long to read by the hour, and the fleet's hours in them.
  std::map<uint32_t, GpuHour> run_totals_;
  std::map<int64_t, GpuUsage> fleet_hours_;
  int64_t rule_hours_ = 0;
  int64_t daily_hours_ = 0;                // those of rule_hours_ from the daily rules
  std::set<int64_t> pattern_evaluations_;  // hourly evaluations that recorded the pattern rules
  std::set<int64_t> energy_evaluations_;   // and the energy rules
};

// `slot`: SlotOf(kind, the series).
void AddToUsage(GpuCounterKind kind, size_t slot, double value, GpuUsage* u) {
  switch (kind) {
    case GpuCounterKind::kPhase:
      if (slot == kPhaseCount) {
        u->unknown_ms += Ms(value);
      } else {
        u->phase_ms[slot] += Ms(value);
        u->waste_ms_x100[slot] += Ms(value) * 100;
      }
      return;
    case GpuCounterKind::kBusy:
      u->util_ms_x100 += Ms(value) * 100;
      u->waste_ms_x100[slot] -= Ms(value) * 100;
      return;
    case GpuCounterKind::kPattern: {
      const UsagePattern& p = kUsagePatterns[slot];
      // Seconds, or seconds x ratio: ms, or ms x percent (a store's answer is at most 1e15:
      // bounded again here so that ms x percent cannot overflow).
      u->*p.field += std::llround(std::clamp(value, 0.0, 1e12) * (p.x100 ? 1e5 : 1e3));
      return;
    }
    case GpuCounterKind::kSwings: {
      const int64_t swings =
          static_cast<int64_t>(u->transitions) + std::llround(std::clamp(value, 0.0, 1e9));
      u->transitions = static_cast<int>(std::min<int64_t>(swings, INT32_MAX));
      return;
    }
    case GpuCounterKind::kEnergy:
      (slot == kPhaseCount ? u->energy_unknown_mj : u->energy_mj[slot]) += Mj(value);
      return;
    case GpuCounterKind::kEnergyTime:
      (slot == 0 ? u->energy_known_ms : u->energy_metered_ms) += Ms(value);
      return;
  }
}

uint32_t FleetBuilder::GpuId(const PromSeries& s) {
  const std::string host = s.Label("Hostname"), uuid = s.Label("UUID");
  const std::string instance = s.Label("GPU_I_ID");
  auto [it, added] = gpu_ids_.emplace(std::tuple{host, uuid, instance}, gpu_ids_.size() + 1);
  if (added) {
    GpuRecord g;
    g.id = it->second;
    g.uuid = instance.empty() ? uuid : fmt::format("{}/GI{}", uuid, instance);
    g.host = host;
    g.name = s.Label("modelName");
    g.pci_bus_id = s.Label("pci_bus_id");
    const std::string index = s.Label("gpu");
    g.index = index.empty() ? -1 : std::strtoll(index.c_str(), nullptr, 10);
    if (!instance.empty()) {
      MigInstance mig;  // priced by the daemon's cgov_gpu_price_usd_per_hour (its share)
      mig.gpu_instance_id = static_cast<unsigned>(std::strtoul(instance.c_str(), nullptr, 10));
      mig.profile = s.Label("GPU_I_PROFILE");
      mig.parent_uuid = uuid;
      mig.parent_name = g.name;
      g.mig = std::move(mig);
    }
    in_.gpus.push_back(g);
    host_gpu_.emplace(host, g.id);
  }
  return it->second;
}

uint32_t FleetBuilder::IdentityId(const PromSeries& s) {
  auto key = std::make_tuple(s.Label("Hostname"), s.Label("user"), s.Label("project"),
                             s.Label("team"), s.Label("namespace"), s.Label("pod"),
                             s.Label("container"), s.Label("pod_uid"), s.Label("slurm_job"));
  auto [it, added] = identity_ids_.emplace(key, identity_ids_.size() + 1);
  if (added) {
    IdentityRecord r;
    r.id = it->second;
    std::string pod_name;
    std::tie(r.host, r.user, r.project, r.team, r.kube_namespace, pod_name, r.kube_container_name,
             r.pod, r.slurm_job) = key;
    // A daemon before issue 47 put a pod's UID in `pod` when it had no names (no pod_uid).
    if (r.pod.empty() && r.kube_namespace.empty()) r.pod = pod_name;
    // A daemon with --kubernetes labels pods by name, within their namespace (summed over its
    // pods when they were not asked for: still a described pod, for "(unlabelled)").
    if (!r.kube_namespace.empty()) r.kube_pod_name = options_.pods ? pod_name : "(pods)";
    in_.identities[r.id] = r;
  }
  return it->second;
}

void FleetBuilder::AddGpuPoint(const PromSeries& s, int64_t hour, double value,
                               GpuCounterKind kind) {
  const std::optional<size_t> slot = SlotOf(kind, s);
  if (!slot || std::isnan(value)) return;
  HourBucket& b = hours_[hour];
  b.hour = hour;
  AddToUsage(kind, *slot, value, &b.gpus[GpuId(s)].usage);
}

// `metric` restricted to the given hosts (a PromQL regex of their names, each one literal).
// Raw counters over (from, to]. Each series' value at `from`, at every hour boundary inside the
// span and at `to` (its last scraped value up to then, up to an hour back) comes from one range
// query for the boundaries, each sample read once, and an instant one at either end; the values
// are differenced here, carried over hours without a scrape, each difference filed under the
// clock hour its stretch starts in. With `whole` (an edge of a rule run, at most an hour), the
// span is one stretch, read at its two ends in one range query and filed under the clock hour
// holding most of it, as a rule's hour is: each GPU series is read once, not twice. A stretch
// in which a host's daemon restarted (its counters reset: its tick counter's resets, or a
// counter that fell) is read for that host with Increase(), which handles resets.
FleetBuilder::Job FleetBuilder::RawSpanJob(int64_t from_ms, int64_t to_ms, bool whole) {
  std::vector<int64_t> times = {from_ms};
  for (int64_t b = (HourOf(from_ms) + 1) * kHourMs; b < to_ms && !whole; b += kHourMs) {
    times.push_back(b);
  }
  times.push_back(to_ms);
  const size_t n = times.size() - 1;  // stretch k is (times[k - 1], times[k]]
  // Each read: the times from the first (with `stretches`, the second) on, each run of them
  // evenly spaced in one range query (one pass over each series, whatever the run's length: the
  // window's hours; an edge's two ends) and any other, or any recent one (kRecentMs), alone.
  // With `stretches`, a run's stretches are as long as its step, for a query whose range is the
  // stretch before each time.
  std::vector<PromRequest> requests;
  auto reads = [&](bool stretches, const std::function<std::string(int64_t range_ms)>& query) {
    const size_t first = requests.size();
    for (size_t i = stretches ? 1 : 0, j = i; i <= n; i = j + 1) {
      const int64_t step = i < n ? times[i + 1] - times[i] : 0;
      j = i;
      // A run ends before the recent times (kRecentMs): those are read alone.
      if (step > 0 && times[i + 1] <= range_before_ms_ &&
          (!stretches || times[i] - times[i - 1] == step)) {
        for (j = i + 1;
             j < n && times[j + 1] - times[j] == step && times[j + 1] <= range_before_ms_;) {
          ++j;
        }
      }
      const std::string expr = query(stretches ? times[i] - times[i - 1] : 0);
      if (j == i) {
        requests.push_back({.expr = expr, .time_s = Seconds(times[i])});
      } else {
        requests.push_back({.expr = expr,
                            .start_s = Seconds(times[i]),
                            .end_s = Seconds(times[j]),
                            .step_s = Seconds(step)});
      }
    }
    return std::pair(first, requests.size());
  };
  // The restarts in each stretch, seen against the last scrape up to 5 min before it; then each
  // counter's values. All asked at once.
  const auto resets_at =
      reads(true, [](int64_t range_ms) { return Restarts(range_ms + 5 * 60'000); });
  std::array<std::pair<size_t, size_t>, kGpuCounterKindCount> values_at;
  for (GpuCounterKind kind : kGpuCounterKinds) {
    values_at[static_cast<size_t>(kind)] = reads(
        false, [&](int64_t) { return LastValues(kGpuCounterLabels, GpuCounter(kind), "1h"); });
  }
  Job job;
  job.requests = requests;
  job.process = [this, from_ms, to_ms, whole, times, n, requests, resets_at,
                 values_at](std::vector<std::vector<PromSeries>> answers) -> Status {
    auto hour_of_stretch = [&](size_t k) {
      return whole ? HourOf(from_ms + (to_ms - from_ms) / 2) : HourOf(times[k - 1]);
    };
    auto index_of = [&](double t) -> std::optional<size_t> {
      auto it = std::lower_bound(times.begin(), times.end(), std::llround(t * 1000));
      if (it == times.end() || *it != std::llround(t * 1000)) return std::nullopt;
      return static_cast<size_t>(it - times.begin());
    };
    // The series of the requests [from, to) as one list.
    auto collect = [&](std::pair<size_t, size_t> at) {
      std::vector<PromSeries> out;
      for (size_t r = at.first; r < at.second; ++r) {
        for (PromSeries& s : answers[r]) {
          if (requests[r].step_s == 0) {
            // An instant answer's point is filed at the time asked for, whatever it carries.
            for (auto& point : s.points) point.first = requests[r].time_s;
          }
          out.push_back(std::move(s));
        }
        std::vector<PromSeries>().swap(answers[r]);
      }
      return out;
    };
    const std::vector<PromSeries> resets = collect(resets_at);
    std::vector<std::set<std::string>> restarted(n + 1);
    for (const PromSeries& s : resets) {
      for (const auto& [t, value] : s.points) {
        if (std::optional<size_t> k = index_of(t)) restarted[*k].insert(s.Label("Hostname"));
      }
    }
    for (GpuCounterKind kind : kGpuCounterKinds) {
      CGOV_RETURN_IF_ERROR(AddRawStretches(kind, collect(values_at[static_cast<size_t>(kind)]),
                                           times, restarted, hour_of_stretch, index_of));
    }
    return Status::Ok();
  };
  return job;
}

// One GPU counter's values at a raw span's times (`read_values`), differenced into its
// stretches and filed by hour; a host that restarted in a stretch (`again`, and any counter
// that fell) is read for it with Increase(), which handles resets.
Status FleetBuilder::AddRawStretches(GpuCounterKind kind, std::vector<PromSeries> read_values,
                                     const std::vector<int64_t>& times,
                                     std::vector<std::set<std::string>> again,
                                     const std::function<int64_t(size_t)>& hour_of_stretch,
                                     const std::function<std::optional<size_t>(double)>& index_of) {
  const size_t n = times.size() - 1;
  // Each series' values by time index (NaN: none read).
  std::map<std::string, std::pair<PromSeries, std::vector<double>>> by;
  for (PromSeries& s : read_values) {
    auto [it, added] = by.try_emplace(s.LabelKey());
    if (added) it->second.second.assign(n + 1, std::nan(""));
    for (const auto& [t, value] : s.points) {
      if (std::optional<size_t> k = index_of(t)) it->second.second[*k] = value;
    }
    if (added) it->second.first = std::move(s);
  }
  for (const auto& [labels, series] : by) {
    const auto& [s, values] = series;
    const std::string host = s.Label("Hostname");
    std::optional<double> before;     // the last value, carried over stretches unscraped
    std::optional<size_t> before_at;  // the time index it was read at
    for (size_t k = 0; k <= n; ++k) {
      const double value = values[k];
      if (std::isnan(value)) continue;
      if (k == 0 || again[k].count(host)) {
        before = value, before_at = k;
        continue;
      }
      double base = before.value_or(0);
      if (value < base - kFallMargin) {
        if (before_at == k - 1) {  // it fell within the stretch: a restart the ticks missed
          again[k].insert(host);
          before = value, before_at = k;
          continue;
        }
        base = 0;  // restarted while unscraped: all of it since its start
      }
      // The stretches since the last value read had no scrape: nothing in them.
      AddGpuPoint(s, hour_of_stretch(k), value - base, kind);
      before = value, before_at = k;
    }
  }
  for (size_t k = 1; k <= n; ++k) {
    if (again[k].empty()) continue;
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> result,
                          prom_.Query(Increase(OnHosts(GpuCounter(kind), again[k]),
                                               kGpuCounterLabels, times[k] - times[k - 1]),
                                      Seconds(times[k])));
    for (const PromSeries& s : result) {
      if (again[k].count(s.Label("Hostname")) && !s.points.empty()) {
        AddGpuPoint(s, hour_of_stretch(k), s.points[0].second, kind);
      }
    }
  }
  return Status::Ok();
}

// The window's stretches: runs of consecutive hourly rule evaluations where they are to be read,
// and raw counters around and between them.
Result<std::vector<Span>> FleetBuilder::PlanSpans() {
  const int64_t window = until_ms_ - since_ms_;
  const bool want = options_.rules == RecordingRules::kOn ||
                    (options_.rules == RecordingRules::kAuto && window >= kAutoRulesMinWindowMs);
  std::vector<int64_t> evaluations;
  std::set<int64_t> owner_evaluations;  // those that recorded the owners' identity rules
  // The daily evaluations in the window and how many hourly ones each summed (read where the
  // owners' rules are: without pods, over windows of more than a day).
  std::vector<std::pair<int64_t, double>> days;
  if (want && window > kHourMs) {
    // The evaluations in the window, and the rule file's version at each.
    std::vector<PromRequest> requests;
    for (const char* marker : {kEvaluations, kRulesVersion, kDailyEvaluations, kDailyHours}) {
      if (requests.size() == 2 && (options_.pods || window <= kDayMs)) break;
      requests.push_back({.expr = MarkerSamples(marker, window), .time_s = Seconds(until_ms_)});
    }
    CGOV_ASSIGN_OR_RETURN(std::vector<std::vector<PromSeries>> answers, prom_.QueryAll(requests));
    // A time within the window, in ms (a store's answer is not trusted to be a sane time, so
    // it is compared as a double first).
    auto in_window = [&](double t) -> std::optional<int64_t> {
      const double ms = t * 1000;
      const auto lo = static_cast<double>(since_ms_ + kHourMs);
      if (!(ms >= lo && ms <= static_cast<double>(until_ms_))) return std::nullopt;
      return std::llround(ms);
    };
    for (const PromSeries& s : answers[0]) {
      for (const auto& [t, value] : s.points) {
        if (std::optional<int64_t> ms = in_window(t)) evaluations.push_back(*ms);
      }
    }
    for (const PromSeries& s : answers[1]) {
      for (const auto& [t, value] : s.points) {
        std::optional<int64_t> ms = in_window(t);
        if (ms && value >= kOwnerRulesVersion) owner_evaluations.insert(*ms);
        if (ms && value >= kPatternRulesVersion) pattern_evaluations_.insert(*ms);
        if (ms && value >= kEnergyRulesVersion) energy_evaluations_.insert(*ms);
      }
    }
    if (answers.size() == 4) {
      std::map<int64_t, double> hours;  // at each daily evaluation (0: none recorded)
      for (const PromSeries& s : answers[2]) {
        for (const auto& [t, value] : s.points) {
          if (std::optional<int64_t> ms = in_window(t)) hours.emplace(*ms, 0);
        }
      }
      for (const PromSeries& s : answers[3]) {
        for (const auto& [t, value] : s.points) {
          std::optional<int64_t> ms = in_window(t);
          if (ms && hours.count(*ms)) hours[*ms] = value;
        }
      }
      days.assign(hours.begin(), hours.end());
    }
    std::sort(evaluations.begin(), evaluations.end());
    evaluations.erase(std::unique(evaluations.begin(), evaluations.end()), evaluations.end());
  }
  // Where the report reads identities without pods, a run ends where the owners' rules begin
  // or end (a rule file upgraded, or downgraded, within the window).
  auto owner_rules = [&](size_t k) {
    return !options_.pods && owner_evaluations.count(evaluations[k]) > 0;
  };
  std::vector<Span> spans;
  int64_t cursor = since_ms_;
  for (size_t i = 0; i < evaluations.size();) {
    if (evaluations[i] - kHourMs < cursor) {  // overlaps the run before (the schedule moved)
      ++i;
      continue;
    }
    size_t j = i;
    while (j + 1 < evaluations.size() && evaluations[j + 1] - evaluations[j] == kHourMs &&
           owner_rules(j + 1) == owner_rules(i)) {
      ++j;
    }
    if (evaluations[i] - kHourMs > cursor) {
      spans.push_back({.rules = false, .from_ms = cursor, .to_ms = evaluations[i] - kHourMs});
    }
    spans.push_back({.rules = true,
                     .owner_rules = owner_rules(i),
                     .from_ms = evaluations[i] - kHourMs,
                     .to_ms = evaluations[j]});
    cursor = evaluations[j];
    i = j + 1;
  }
  if (options_.rules == RecordingRules::kOn && spans.empty()) {
    return NotFound(fmt::format(
        "--recording-rules on: {} has no evaluation of the hourly rules ({}) between {} and {}: "
        "load deploy/prometheus/cgov-rules.yml (group cgov-hourly) into it, or pass "
        "--recording-rules off",
        prom_.url(), kEvaluations, FormatRfc3339Utc(since_ms_ * 1'000'000),
        FormatRfc3339Utc(until_ms_ * 1'000'000)));
  }
  if (until_ms_ > cursor) spans.push_back({.rules = false, .from_ms = cursor, .to_ms = until_ms_});
  return days.empty() ? spans : WithDays(std::move(spans), evaluations, days);
}

// The runs of the owners' rules with the days the daily rules summed carved out of them. A
// daily evaluation stands for the hourly ones it summed when it found 24 (those between 24.5 h
// and 0.5 h before it), each an hour after the one before and all in one run; consecutive days
// (daily evaluations 24 h apart, with no other daily evaluation within half a day before the
// first, which the run's sum would take in) make one daily run. The rest of the run stays
// hourly.
std::vector<Span> FleetBuilder::WithDays(
    std::vector<Span> spans, const std::vector<int64_t>& evaluations,
    const std::vector<std::pair<int64_t, double>>& days) const {
  // The hours a day stands for, as a span of its own, and the run it is in; none where it
  // stands for none.
  auto day_span = [&](int64_t day) -> std::optional<std::pair<Span, size_t>> {
    auto first =
        std::upper_bound(evaluations.begin(), evaluations.end(), day - kDayMs - kDailyLagMs);
    auto end = std::upper_bound(first, evaluations.end(), day - kDailyLagMs);
    if (end - first != 24) return std::nullopt;
    for (auto it = first; it + 1 != end; ++it) {
      if (*(it + 1) - *it != kHourMs) return std::nullopt;
    }
    const int64_t from = *first - kHourMs, to = *(end - 1);
    for (size_t i = 0; i < spans.size(); ++i) {
      const Span& s = spans[i];
      if (s.rules && s.owner_rules && s.from_ms <= from && to <= s.to_ms) {
        return std::pair(Span{.rules = true,
                              .owner_rules = true,
                              .daily = true,
                              .from_ms = from,
                              .to_ms = to,
                              .first_day_ms = day,
                              .last_day_ms = day},
                         i);
      }
    }
    return std::nullopt;
  };
  std::vector<std::pair<Span, size_t>> daily;  // the daily runs and their runs, in order
  for (size_t k = 0; k < days.size(); ++k) {
    const auto day = days[k].second == 24 ? day_span(days[k].first) : std::nullopt;
    if (!day) continue;
    const Span& d = day->first;
    if (!daily.empty() && daily.back().second == day->second &&
        days[k - 1].first == daily.back().first.last_day_ms &&
        d.first_day_ms - daily.back().first.last_day_ms == kDayMs &&
        d.from_ms == daily.back().first.to_ms) {
      daily.back().first.to_ms = d.to_ms;
      daily.back().first.last_day_ms = d.last_day_ms;
    } else if (k == 0 || d.first_day_ms - days[k - 1].first > kDayMs / 2) {
      daily.push_back(*day);
    }
  }
  if (daily.empty()) return spans;
  std::vector<Span> out;
  auto next = daily.begin();
  for (size_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    int64_t cursor = s.from_ms;
    for (; next != daily.end() && next->second == i; ++next) {
      const Span& d = next->first;
      if (d.from_ms > cursor) {
        out.push_back({.rules = true, .owner_rules = true, .from_ms = cursor, .to_ms = d.from_ms});
      }
      out.push_back(d);
      cursor = d.to_ms;
    }
    if (cursor == s.from_ms) {
      out.push_back(s);
    } else if (s.to_ms > cursor) {
      out.push_back({.rules = true, .owner_rules = true, .from_ms = cursor, .to_ms = s.to_ms});
    }
  }
  return out;
}

// A run of hourly rule evaluations. Each evaluation's hour is filed under the clock hour holding
// most of it (the same hour when Prometheus evaluates on the hour, as a backfill does).
FleetBuilder::Job FleetBuilder::RuleRunJob(const Span& run) {
  const double first = Seconds(run.from_ms + kHourMs), last = Seconds(run.to_ms);
  // The fleet's hours by phase, for the heatmap when the GPUs come as totals: from the fleet
  // rules (a few series by GPU model), or where a rule file predates them, from the GPUs' rules.
  // Each evaluation of the run, of a rule's series as recorded at it: within the half hour before
  // each point, so that an hour the rule recorded nothing in (its `> 0`) reads as nothing. A bare
  // selector would do in Prometheus (5 minutes' lookback), but VictoriaMetrics' range queries
  // look back as far as the series' own spacing (an hour) and would repeat the hour before.
  auto hourly = [first, last](const std::string& rule) -> PromRequest {
    return {.expr = RuleHour(rule), .start_s = first, .end_s = last, .step_s = 3600};
  };
  // (By phase: the heatmap's figures, time and busy time.)
  auto fleet_hours = [first, last](GpuCounterKind kind, bool fleet_rule) -> PromRequest {
    return {.expr = RuleHour(RuleOf(GpuCounter(kind), fleet_rule), true),
            .start_s = first,
            .end_s = last,
            .step_s = 3600};
  };
  // Asked at once: the GPUs' totals over the run (each kind), and the fleet's hours (cheap).
  Job job;
  for (GpuCounterKind kind : kGpuCounterKinds) {
    job.requests.push_back(SpanSumRequests(GpuCounter(kind), kGpuCounterLabels, run)[0]);
  }
  for (GpuCounterKind kind : kHeatmapKinds) job.requests.push_back(fleet_hours(kind, true));
  job.process = [this, run, first, last, hourly,
                 fleet_hours](std::vector<std::vector<PromSeries>> totals) -> Status {
    const int64_t hours = run.Hours();
    std::set<std::tuple<std::string, std::string, std::string>> gpus;
    for (size_t k = 0; k < kGpuCounterKindCount; ++k) {
      for (const PromSeries& s : totals[k]) {
        gpus.emplace(s.Label("Hostname"), s.Label("UUID"), s.Label("GPU_I_ID"));
      }
    }
    // A point's hour; none for a time outside the run (a store's answer is not trusted to stay
    // in range, nor to be a number).
    auto hour_of = [&](double t) -> std::optional<int64_t> {
      if (!(t >= first && t <= last)) return std::nullopt;
      return HourOf(std::llround(t * 1000) - kHourMs / 2);
    };
    if (static_cast<int64_t>(gpus.size()) * hours <= options_.hourly_point_budget) {
      std::vector<PromRequest> requests;
      for (GpuCounterKind kind : kGpuCounterKinds) {
        requests.push_back(hourly(RuleOf(GpuCounter(kind))));
      }
      CGOV_ASSIGN_OR_RETURN(std::vector<std::vector<PromSeries>> results, prom_.QueryAll(requests));
      for (GpuCounterKind kind : kGpuCounterKinds) {
        for (const PromSeries& s : results[static_cast<size_t>(kind)]) {
          for (const auto& [t, value] : s.points) {
            if (std::optional<int64_t> hour = hour_of(t)) AddGpuPoint(s, *hour, value, kind);
          }
        }
      }
      return Status::Ok();
    }
    // Some phase has time in every hour a GPU was watched, so a fleet rule that misses an hour of
    // the run (a rule file older than the fleet rules, or changed within the run) is not used.
    std::set<int64_t> fleet_rule_hours;
    for (const PromSeries& s : totals[kGpuCounterKindCount]) {
      for (const auto& [t, value] : s.points) {
        if (std::optional<int64_t> hour = hour_of(t)) fleet_rule_hours.insert(*hour);
      }
    }
    std::array<std::vector<PromSeries>, 2> fleet = {std::move(totals[kGpuCounterKindCount]),
                                                    std::move(totals[kGpuCounterKindCount + 1])};
    if (static_cast<int64_t>(fleet_rule_hours.size()) < hours) {
      CGOV_ASSIGN_OR_RETURN(std::vector<std::vector<PromSeries>> by_gpu,
                            prom_.QueryAll({fleet_hours(kHeatmapKinds[0], false),
                                            fleet_hours(kHeatmapKinds[1], false)}));
      fleet = {std::move(by_gpu[0]), std::move(by_gpu[1])};
    }
    for (GpuCounterKind kind : kGpuCounterKinds) {
      for (const PromSeries& s : totals[static_cast<size_t>(kind)]) {
        const std::optional<size_t> slot = SlotOf(kind, s);
        if (!slot || s.points.empty() || std::isnan(s.points[0].second)) continue;
        AddToUsage(kind, *slot, s.points[0].second, &run_totals_[GpuId(s)].usage);
      }
    }
    for (size_t k = 0; k < std::size(kHeatmapKinds); ++k) {
      for (const PromSeries& s : fleet[k]) {
        const std::optional<size_t> slot = SlotOf(kHeatmapKinds[k], s);
        if (!slot) continue;
        for (const auto& [t, value] : s.points) {
          std::optional<int64_t> hour = hour_of(t);
          if (hour && !std::isnan(value)) {
            AddToUsage(kHeatmapKinds[k], *slot, value, &fleet_hours_[*hour]);
          }
        }
      }
    }
    return Status::Ok();
  };
  return job;
}

// What `counter` added over `span`, summed by `by`, where it added something. Over rules, the
// run's evaluations summed in the store. Over raw counters, each sum's last value at the span's
// end less its last value at its start (both up to an hour back: read once, not per function as
// Increase() does), or for a span of one read each series' (by `key`), summed here; except on
// the hosts whose daemon restarted in it (`restarted`, and any whose sum or series fell):
// there, Increase().
std::vector<PromRequest> FleetBuilder::SpanSumRequests(const char* counter, const std::string& by,
                                                       const Span& span, bool owners,
                                                       const std::string& key) {
  const int64_t range = span.to_ms - span.from_ms;
  if (span.daily) {
    // The run's daily evaluations, with half a day's margin before the first (no other daily
    // evaluation is that close: WithDays()).
    return {{.expr = RuleSum(by, DailyRuleOf(counter),
                             span.last_day_ms - span.first_day_ms + kDayMs / 2),
             .time_s = Seconds(span.last_day_ms)}};
  }
  if (span.rules) {
    // The run's evaluations and none before: half an hour's margin either side of the first
    // one, whether the store's ranges include their start (Prometheus 2) or not (3).
    return {
        {.expr = RuleSum(by, owners ? OwnerRuleOf(counter) : RuleOf(counter), range - kHourMs / 2),
         .time_s = Seconds(span.to_ms)}};
  }
  if (span.OneRead()) {
    // Both ends in one pass over the series, each series by itself (a sum by `by` would take
    // in, at the start, series that ended more than an hour before it and are not in the end's
    // sum): the range reaches an hour before the start from the end, as the end's read below.
    return {
        {.expr = LastValues(key.empty() ? by : key, counter, fmt::format("{}ms", range + kHourMs)),
         .start_s = Seconds(span.from_ms),
         .end_s = Seconds(span.to_ms),
         .step_s = Seconds(range)}};
  }
  return {{.expr = LastValues(by, counter, fmt::format("{}ms", range + kHourMs)),
           .time_s = Seconds(span.to_ms)},
          {.expr = LastValues(by, counter, "1h"), .time_s = Seconds(span.from_ms)}};
}

// `end` and `start`: the answers of SpanSumRequests() (over rules, the one answer and none).
Result<std::vector<PromSeries>> FleetBuilder::SpanSum(const char* counter, const std::string& by,
                                                      const Span& span, std::vector<PromSeries> end,
                                                      std::vector<PromSeries> start,
                                                      const std::set<std::string>& restarted) {
  if (span.rules) return end;
  const int64_t range = span.to_ms - span.from_ms;
  std::set<std::string> hosts = restarted;
  std::vector<PromSeries> out;
  if (span.OneRead()) {
    // Each series' value at the start (none: born in the span) and at the end (none: it ended
    // an hour or more before the start), differenced, then summed by `by`.
    std::vector<std::string> names;
    for (size_t at = 0; at < by.size();) {
      size_t comma = by.find(',', at);
      if (comma == std::string::npos) comma = by.size();
      std::string_view name = std::string_view(by).substr(at, comma - at);
      while (name.starts_with(' ')) name.remove_prefix(1);
      names.emplace_back(name);
      at = comma + 1;
    }
    std::vector<std::pair<PromSeries, double>> differences;
    for (const PromSeries& s : end) {
      std::optional<double> from, to;
      for (const auto& [t, value] : s.points) {
        const int64_t ms = std::llround(t * 1000);
        if (ms == span.from_ms) from = value;
        if (ms == span.to_ms) to = value;
      }
      if (!to) continue;
      if (*to < from.value_or(0) - kFallMargin) hosts.insert(s.Label("Hostname"));
      PromSeries sum;
      for (const std::string& name : names) {
        if (std::string value = s.Label(name); !value.empty()) sum.AddLabel(name, value);
      }
      differences.emplace_back(std::move(sum), *to - from.value_or(0));
    }
    std::unordered_map<std::string, size_t> at;  // a sum's place in `out`
    for (auto& [sum, value] : differences) {
      if (hosts.count(sum.Label("Hostname"))) continue;
      auto [it, added] = at.try_emplace(sum.LabelKey(), out.size());
      if (added) {
        sum.points = {{Seconds(span.to_ms), 0.0}};
        out.push_back(std::move(sum));
      }
      out[it->second].points[0].second += value;
    }
    std::erase_if(out, [](const PromSeries& s) { return !(s.points[0].second > 0); });
  } else {
    std::unordered_map<std::string, double> base;
    for (const PromSeries& s : start) {
      if (!s.points.empty()) base[s.LabelKey()] = s.points[0].second;
    }
    auto base_of = [&](const PromSeries& s) {
      auto it = base.find(s.LabelKey());
      return it == base.end() ? 0.0 : it->second;
    };
    for (const PromSeries& s : end) {
      if (!s.points.empty() && s.points[0].second < base_of(s) - kFallMargin) {
        hosts.insert(s.Label("Hostname"));
      }
    }
    for (PromSeries& s : end) {
      if (s.points.empty() || hosts.count(s.Label("Hostname"))) continue;
      s.points[0].second -= base_of(s);
      if (s.points[0].second > 0) out.push_back(std::move(s));
    }
  }
  if (hosts.empty()) return out;
  CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> again,
                        prom_.Query(AboveZero(Increase(OnHosts(counter, hosts), by.c_str(), range)),
                                    Seconds(span.to_ms)));
  for (PromSeries& s : again) {
    if (hosts.count(s.Label("Hostname"))) out.push_back(std::move(s));
  }
  return out;
}

// IdentitiesJob()'s sums, in the order it asks them.
enum IdentitySum : size_t {
  kAttributedSum,
  kHeldSum,
  kIdleHeldSum,
  kTicksSum,
  kCostSum,
  kEnergySum,
  kIdleHeldEnergySum
};

// A value of sum `k` (but the attributed time and the ticks) into its identity's figure: its
// dollars as its daemon priced them when it credited the time (used where every GPU's price is
// its daemon's: Build()); its energy, and what of it its GPUs burned while idle-held (issue 62).
void AddIdentityFigure(size_t k, double value, IdentityHour* h) {
  switch (k) {
    case kHeldSum:
      h->held_ms += Ms(value);
      return;
    case kIdleHeldSum:
      h->idle_held_ms += Ms(value);
      return;
    case kCostSum:
      h->cost = AddUsd(h->cost, DollarsFromOutside(value));
      return;
    case kEnergySum:
      h->energy_mj += Mj(value);
      return;
    case kIdleHeldEnergySum:
      h->idle_held_energy_mj += Mj(value);
      return;
    default:
      return;
  }
}

// Identities and ticks over one span, into the window's first hour. `early`: its identity GPU
// read is sent with the batch's first queries (PromRequest::early).
FleetBuilder::Job FleetBuilder::IdentitiesJob(const Span& span, bool early) {
  const double at = Seconds(span.to_ms);
  // Asked at once: the restarts in the span (over raw counters), and each counter's sums.
  struct Sum {
    const char* counter;
    std::string by;
    std::string key;   // its series apart, for a span of one read (SpanSumRequests())
    size_t first = 0;  // its requests' place in the batch
  };
  std::array<Sum, 7> sums = {
      // in IdentitySum's order
      Sum{"cgov_identity_gpu_seconds_total", fmt::format("{}, phase", IdentityLabels()),
          fmt::format("{}, phase", kIdentityLabels)},
      Sum{"cgov_identity_held_seconds_total", IdentityLabels(), kIdentityLabels},
      Sum{"cgov_identity_idle_held_seconds_total", IdentityLabels(), kIdentityLabels},
      Sum{"cgov_ticks_total", "Hostname", "Hostname"},
      Sum{"cgov_identity_cost_usd_total", IdentityLabels(), kIdentityLabels},
      Sum{"cgov_identity_energy_joules_total", IdentityLabels(), kIdentityLabels},
      Sum{"cgov_identity_idle_held_energy_joules_total", IdentityLabels(), kIdentityLabels}};
  // Without pods, a run's identities come from the owners' rules where the rule file records
  // them: their series grow with the users a host sees, not with every pod of the window.
  const bool owners = span.owner_rules && !options_.pods;
  std::vector<PromRequest> requests;
  if (!span.rules) {
    requests.push_back({.expr = Restarts(span.to_ms - span.from_ms + 5 * 60'000), .time_s = at});
  }
  for (Sum& sum : sums) {
    sum.first = requests.size();
    const bool identity = std::string_view(sum.counter).starts_with("cgov_identity_");
    const bool owner_rule = owners && identity;
    for (PromRequest& r : SpanSumRequests(sum.counter, sum.by, span, owner_rule, sum.key)) {
      r.early = early && &sum == &sums[kAttributedSum];
      requests.push_back(std::move(r));
    }
  }
  Job job;
  job.requests = std::move(requests);
  job.process = [this, span, sums](std::vector<std::vector<PromSeries>> answers) -> Status {
    HourBucket& first = hours_[HourOf(since_ms_)];
    first.hour = HourOf(since_ms_);
    std::set<std::string> restarted;
    if (!span.rules) {
      for (const PromSeries& s : answers[0]) restarted.insert(s.Label("Hostname"));
    }
    // Sum k's figures from its answers.
    auto sum_of = [&](size_t k) {
      const Sum& sum = sums[k];
      const bool one_answer = span.rules || span.OneRead();
      return SpanSum(sum.counter, sum.by, span, std::move(answers[sum.first]),
                     one_answer ? std::vector<PromSeries>() : std::move(answers[sum.first + 1]),
                     restarted);
    };
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> attributed, sum_of(kAttributedSum));
    auto identity_hour = [&](const PromSeries& s) -> IdentityHour* {
      auto gpu = host_gpu_.find(s.Label("Hostname"));
      if (gpu == host_gpu_.end()) return nullptr;
      IdentityHour& h = first.identities[{IdentityId(s), gpu->second}];
      h.samples = std::max<int64_t>(h.samples, 1);
      return &h;
    };
    for (const PromSeries& s : attributed) {
      const std::optional<size_t> slot = PhaseSlot(s.Label("phase"));
      IdentityHour* h = slot && !s.points.empty() ? identity_hour(s) : nullptr;
      if (h == nullptr) continue;
      if (*slot == kPhaseCount) {
        h->attributed_unknown_ms += Ms(s.points[0].second);
      } else {
        h->attributed_ms[*slot] += Ms(s.points[0].second);
      }
    }
    // Held and idle-held time, dollars and energy, each into its figure.
    for (size_t k : {kHeldSum, kIdleHeldSum, kCostSum, kEnergySum, kIdleHeldEnergySum}) {
      CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> result, sum_of(k));
      for (const PromSeries& s : result) {
        IdentityHour* h = s.points.empty() ? nullptr : identity_hour(s);
        if (h != nullptr) AddIdentityFigure(k, s.points[0].second, h);
      }
    }
    // Samples: the ticks each host took (at least one where there is data).
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> ticks, sum_of(kTicksSum));
    std::map<std::string, std::vector<uint32_t>> host_gpus;
    for (const auto& [key, id] : gpu_ids_) host_gpus[std::get<0>(key)].push_back(id);
    for (const PromSeries& s : ticks) {
      auto gpus = host_gpus.find(s.Label("Hostname"));
      if (s.points.empty() || gpus == host_gpus.end()) continue;
      for (uint32_t id : gpus->second) {
        first.gpus[id].samples += std::llround(std::max(0.0, s.points[0].second));
      }
    }
    return Status::Ok();
  };
  return job;
}

// What is read once for the whole window: memory, power, prices, instance ids (after each span's
// identities: IdentitiesJob()).
FleetBuilder::Job FleetBuilder::WindowFiguresJob() {
  const int64_t window = until_ms_ - since_ms_;
  const double at = Seconds(until_ms_);
  const std::array<WindowMean, 2>& means = kWindowMeans;
  // All asked at once: the means; the instance ids the daemons were given (--instance-id), for
  // --billing (which reads raw counters only); each daemon's price as of the end of the window
  // (the raw gauge's last value, and over recording rules for a GPU gone before the last two
  // hours, the rule's last hourly value, or where days came from the daily rules, its last
  // hourly value of the last two days, else its last daily one); OpenCost's prices when asked
  // for.
  std::vector<PromRequest> requests;
  const int64_t two_days = std::min(window, 2 * kDayMs);
  std::vector<std::pair<size_t, size_t>> mean_answers;  // (mean, request), in order of preference
  for (size_t k = 0; k < means.size(); ++k) {
    auto ask = [&](const char* metric, int64_t range) {
      mean_answers.emplace_back(k, requests.size());
      requests.push_back({.expr = GpuMean(metric, range), .time_s = at});
    };
    if (daily_hours_ > 0) ask(means[k].daily_rule, window);
    ask(rule_hours_ > 0 ? means[k].rule : means[k].metric, daily_hours_ > 0 ? two_days : window);
  }
  const size_t build_info_at = requests.size();
  const int64_t recent = rule_hours_ > 0 ? std::min(window, 2 * kHourMs) : window;
  requests.push_back({.expr = InstanceIds(recent), .time_s = at});
  const size_t prices_at = requests.size();
  requests.push_back({.expr = Prices("cgov_gpu_price_usd_per_hour", recent), .time_s = at});
  if (rule_hours_ > 0) {
    requests.push_back(
        {.expr = Prices("cgov:gpu_price_usd_per_hour:last1h", daily_hours_ > 0 ? two_days : window),
         .time_s = at});
  }
  if (daily_hours_ > 0) {
    requests.push_back(
        {.expr = Prices("cgov:gpu_price_usd_per_hour:last1d", window), .time_s = at});
  }
  const size_t opencost_at = requests.size();
  if (options_.opencost_prices) {
    requests.push_back({.expr = OpenCostPrices(window), .time_s = at});
  }
  Job job;
  job.requests = std::move(requests);
  job.process = [this, mean_answers, build_info_at, prices_at,
                 opencost_at](std::vector<std::vector<PromSeries>> answers) -> Status {
    TakeMeans(answers, mean_answers);
    TakePrices(answers, build_info_at, prices_at, opencost_at);
    if (options_.opencost_prices) CGOV_RETURN_IF_ERROR(AddOpenCostPrices(answers[opencost_at]));
    return Status::Ok();
  };
  return job;
}

// The window's mean memory and power of each GPU (WindowFiguresJob), in the first hour, over
// the GPU's held time; the first answer that has a GPU wins.
void FleetBuilder::TakeMeans(const std::vector<std::vector<PromSeries>>& answers,
                             const std::vector<std::pair<size_t, size_t>>& mean_answers) {
  const std::array<WindowMean, 2>& means = kWindowMeans;
  HourBucket& first = hours_[HourOf(since_ms_)];
  first.hour = HourOf(since_ms_);
  std::map<uint32_t, GpuHour> held = run_totals_;  // per GPU over the window
  for (const auto& [hour, b] : hours_) {
    for (const auto& [id, g] : b.gpus) MergeInto(g, &held[id]);
  }
  for (const auto& [key, id] : gpu_ids_) {
    int64_t& samples = first.gpus[id].samples;
    samples = std::max<int64_t>(samples, 1);  // a GPU with data is never "no samples"
  }
  std::array<std::set<uint32_t>, 2> have_mean;  // the GPUs each mean was found for
  for (const auto& [k, r] : mean_answers) {
    const WindowMean& m = means[k];
    for (const PromSeries& s : answers[r]) {
      auto id = gpu_ids_.find({s.Label("Hostname"), s.Label("UUID"), s.Label("GPU_I_ID")});
      if (id == gpu_ids_.end() || s.points.empty() || !have_mean[k].insert(id->second).second) {
        continue;
      }
      const int64_t ms = held[id->second].usage.HeldMs();
      GpuHour& g = first.gpus[id->second];
      // A reading past any GPU's (10 TB of memory, 10 kW) is a server's, not a GPU's: held
      // there, so that value × held time cannot overflow.
      const double bound = m.memory ? 1e7 : 1e5;
      const auto value =
          static_cast<int64_t>(std::llround(std::clamp(s.points[0].second * m.scale, 0.0, bound)));
      (m.memory ? g.mem_used_mib_ms : g.power_dw_ms) += value * ms;
      (m.memory ? g.mem_known_ms : g.power_known_ms) += ms;
    }
  }
}

// The daemons' instance ids (--instance-id) and their prices as of the window's end.
void FleetBuilder::TakePrices(const std::vector<std::vector<PromSeries>>& answers,
                              size_t build_info_at, size_t prices_at, size_t opencost_at) {
  for (const PromSeries& s : answers[build_info_at]) {
    if (s.Label("instance_id").empty()) continue;
    in_.resource_hosts[s.Label("instance_id")] = s.Label("Hostname");
  }
  for (size_t k = prices_at; k < opencost_at; ++k) {
    for (const PromSeries& s : answers[k]) {
      auto id = gpu_ids_.find({s.Label("Hostname"), s.Label("UUID"), s.Label("GPU_I_ID")});
      if (id == gpu_ids_.end() || s.points.empty() || in_.gpu_prices.count(id->second)) continue;
      ResolvedPrice p;
      p.per_gpu_hour = PriceFromUsd(s.points[0].second);
      p.source = fmt::format("the daemon on {}: {}", s.Label("Hostname"), s.Label("source"));
      // The daemon's description marks a spot price so (docs/metrics.md).
      p.is_spot = s.Label("source").find(" (spot)") != std::string::npos;
      in_.gpu_prices[id->second] = p;
    }
  }
}

// OpenCost's node_gpu_hourly_cost ("hourly cost per GPU on this node", labelled `node`) as the
// price of each whole GPU of the host of that name. A MIG instance keeps its daemon's price (its
// share of the GPU's), and a host OpenCost does not price keeps its daemon's, said in a note.
Status FleetBuilder::AddOpenCostPrices(const std::vector<PromSeries>& costs) {
  if (costs.empty()) {
    return NotFound(
        "--opencost-prices: no node_gpu_hourly_cost in this Prometheus for the window (is OpenCost "
        "scraped here?)");
  }
  std::map<std::string, double> by_node;
  for (const PromSeries& s : costs) {
    if (!s.points.empty() && std::isfinite(s.points[0].second) && s.points[0].second >= 0) {
      by_node[s.Label("node")] = s.points[0].second;
    }
  }
  std::set<std::string> unpriced;
  for (const auto& [key, id] : gpu_ids_) {
    const auto& [host, uuid, instance] = key;
    auto cost = by_node.find(host);
    if (cost == by_node.end()) {
      unpriced.insert(host);
      continue;
    }
    if (!instance.empty()) continue;  // a MIG instance: its daemon's share stays
    ResolvedPrice p;
    p.per_gpu_hour = PriceFromUsd(cost->second);
    p.source = fmt::format("OpenCost: node_gpu_hourly_cost{{node=\"{}\"}}", host);
    in_.gpu_prices[id] = p;
  }
  if (!unpriced.empty()) {
    std::string hosts;
    for (const std::string& h : unpriced) hosts += (hosts.empty() ? "" : ", ") + h;
    in_.notes.push_back(
        fmt::format("--opencost-prices: OpenCost prices no GPU of {} (no node_gpu_hourly_cost with "
                    "that node): its daemon's price is used",
                    hosts));
  }
  return Status::Ok();
}

// The jobs' queries as one batch; each job takes its answers (and frees them) once its last one
// is in, in the order of the jobs, a job without queries right after the one before it.
Status FleetBuilder::RunJobs(std::vector<Job> jobs) {
  std::vector<PromRequest> requests;
  std::vector<size_t> ends;  // each job's requests end here
  for (Job& job : jobs) {
    for (PromRequest& r : job.requests) requests.push_back(std::move(r));
    ends.push_back(requests.size());
  }
  std::vector<std::vector<PromSeries>> answers(requests.size());
  size_t next = 0;                               // the next job to run
  auto run_ready = [&](size_t have) -> Status {  // the jobs whose answers are all in
    for (; next < jobs.size() && ends[next] <= have; ++next) {
      const size_t begin = next == 0 ? 0 : ends[next - 1];
      std::vector<std::vector<PromSeries>> mine(
          std::make_move_iterator(answers.begin() + static_cast<ptrdiff_t>(begin)),
          std::make_move_iterator(answers.begin() + static_cast<ptrdiff_t>(ends[next])));
      CGOV_RETURN_IF_ERROR(jobs[next].process(std::move(mine)));
      jobs[next].process = nullptr;  // what it held goes with it
    }
    return Status::Ok();
  };
  CGOV_RETURN_IF_ERROR(run_ready(0));
  CGOV_RETURN_IF_ERROR(prom_.QueryEach(requests, [&](size_t i, std::vector<PromSeries> answer) {
    answers[i] = std::move(answer);
    return run_ready(i + 1);
  }));
  return run_ready(requests.size());
}

// Once every span's GPU figures are in: a clear error where the window has none, and the
// heatmap's hours.
Status FleetBuilder::AfterGpus() {
  if (gpu_ids_.empty()) {
    // Say which: our metrics are missing altogether, or only this window has none.
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> any,
                          prom_.Query(PhaseCountersNow(), Seconds(until_ms_)));
    // Up to the window's end, and up to now: a window before the data is not "no metrics".
    const std::string ever_query = PhaseCountersWithinAYear();
    CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> ever,
                          prom_.Query(ever_query, Seconds(until_ms_)));
    if (ever.empty()) {
      const int64_t now_ms = Env::Default()->WallMs();
      CGOV_ASSIGN_OR_RETURN(ever, prom_.Query(ever_query, Seconds(std::max(now_ms, until_ms_))));
    }
    if (any.empty() && ever.empty()) {
      return NotFound(fmt::format(
          "--prometheus {}: no cgov metrics (cgov_gpu_phase_seconds_total) in this Prometheus: "
          "are the nodes running `cgov daemon --listen` and is Prometheus scraping them? "
          "(deploy/prometheus/ has a scrape config)",
          prom_.url()));
    }
    return NotFound(
        fmt::format("--prometheus {}: no cgov data between {} and {} (the metrics exist, but not "
                    "in this window; widen --since)",
                    prom_.url(), FormatRfc3339Utc(since_ms_ * 1'000'000),
                    FormatRfc3339Utc(until_ms_ * 1'000'000)));
  }
  if (!run_totals_.empty()) {
    // The heatmap reads the fleet's hours: the runs' and the raw counters' own.
    in_.heatmap_hours = std::move(fleet_hours_);
    for (const auto& [hour, b] : hours_) {
      for (const auto& [id, g] : b.gpus) MergeInto(g.usage, &in_.heatmap_hours[hour]);
    }
  }
  return Status::Ok();
}

// A scrape that overwrote cgov's identity labels with the target's (Prometheus' honor_labels:
// false, the Prometheus Operator's default) would hand every pod's GPU time to cgov's own pod:
// the original labels then sit in exported_namespace / exported_pod / exported_container, on the
// daemon's cgov_honor_labels_check series (always) and on its identity series. Refused, naming
// the hosts and the fix, rather than misattributed.
Status FleetBuilder::CheckHonorLabels() {
  CGOV_ASSIGN_OR_RETURN(std::vector<PromSeries> renamed,
                        prom_.Query(RenamedLabels(std::max<int64_t>(1, until_ms_ - since_ms_)),
                                    static_cast<double>(until_ms_) / 1e3));
  if (renamed.empty()) return Status::Ok();
  std::set<std::string> hosts, jobs;
  for (const PromSeries& s : renamed) {
    hosts.insert(s.Label("Hostname"));
    jobs.insert(s.Label("job"));
  }
  auto list = [](const std::set<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  return InvalidArgument(fmt::format(
      "{}: the scrape of job {} (host {}) renamed cgov's namespace/pod/container labels to "
      "exported_namespace/exported_pod/exported_container, so every pod's GPU time would go to "
      "cgov's own pod: set `honorLabels: true` on the ServiceMonitor or PodMonitor "
      "(`honor_labels: true` in a scrape config) as deploy/kubernetes's ServiceMonitor does "
      "(docs/kubernetes.md, \"Scraping\"); series scraped before the fix keep the wrong labels, "
      "so start the window after it",
      prom_.url(), list(jobs), list(hosts)));
}

// The rule runs' hours (rule_hours_, daily_hours_), and a note for those of a rule file older
// than the pattern rules (their number, returned) or the energy rules.
int64_t FleetBuilder::CountRuleHours(const std::vector<Span>& spans) {
  int64_t without_patterns = 0, without_energy = 0;
  for (const Span& span : spans) {
    if (!span.rules) continue;
    rule_hours_ += span.Hours();
    if (span.daily) daily_hours_ += span.Hours();
    for (int64_t t = span.from_ms + kHourMs; t <= span.to_ms; t += kHourMs) {
      without_patterns += pattern_evaluations_.count(t) == 0 ? 1 : 0;
      without_energy += energy_evaluations_.count(t) == 0 ? 1 : 0;
    }
  }
  auto note = [&](int64_t hours, double version, const char* missing) {
    if (hours <= 0) return;
    in_.notes.push_back(fmt::format(
        "{} hour{} of the window came from recording rules older than version {} "
        "(deploy/prometheus/cgov-rules.yml): they carry no {}; load the current rule file.",
        hours, hours == 1 ? "" : "s", version, missing));
  };
  note(without_energy, kEnergyRulesVersion,
       "energy, so the energy figures leave those hours out (the share of GPU-time with a power "
       "reading says how much)");
  note(without_patterns, kPatternRulesVersion,
       "utilization patterns or swings, so the findings that read them (a bursty input pipeline, "
       "throttling, host CPU or I/O, precision) do not see those hours");
  return without_patterns;
}

Result<HistoryInput> FleetBuilder::Build() {
  CGOV_RETURN_IF_ERROR(CheckHonorLabels());
  in_.since_ms = since_ms_;
  in_.until_ms = until_ms_;
  in_.has_sessions = false;
  CGOV_ASSIGN_OR_RETURN(std::vector<Span> spans, PlanSpans());
  for (Span& span : spans) span.recent = span.to_ms > range_before_ms_;
  const int64_t without_patterns = CountRuleHours(spans);
  // Every span's GPU figures, then (once the GPUs are known) every span's identities and the
  // window's figures, asked as one batch: a span's answers are taken while the next span's
  // queries are being answered.
  std::vector<Job> jobs;
  // Around and between rule runs, a raw span of at most an hour is one stretch, as the rules'
  // hours are (reading it at an hour boundary inside it too would read every series twice).
  const bool any_rules =
      std::any_of(spans.begin(), spans.end(), [](const Span& s) { return s.rules; });
  for (const Span& span : spans) {
    jobs.push_back(span.rules ? RuleRunJob(span)
                              : RawSpanJob(span.from_ms, span.to_ms, any_rules && span.OneRead()));
  }
  jobs.push_back({.requests = {},
                  .process = [this](std::vector<std::vector<PromSeries>>) { return AfterGpus(); }});
  // With rules, each span's identity GPU read is the slowest of its queries (at an edge, every
  // pod's series: SpanSumRequests(); over a run, the owners' rule by phase), and the last span's
  // came last: the batch sends them with its first queries, so that the window's end does not
  // wait on one query the server's other cores cannot share. Without rules, a span an hour:
  // their answers would all be held at once.
  for (const Span& span : spans) jobs.push_back(IdentitiesJob(span, any_rules));
  jobs.push_back(WindowFiguresJob());
  CGOV_RETURN_IF_ERROR(RunJobs(std::move(jobs)));
  // An identity's counters do not say which GPU of its host its time was on, so its dollars are
  // its daemon's cost counter where every GPU is priced by its daemon (not OpenCost) and every
  // rule hour has the owners' cost rule (version 3); else its time at its host's first GPU's
  // price, said in a note when the host's GPUs differ in price.
  in_.identity_costs = without_patterns == 0 && !options_.opencost_prices &&
                       in_.gpu_prices.size() == in_.gpus.size();
  std::map<std::string, int> gpus_of_host;
  for (const GpuRecord& g : in_.gpus) ++gpus_of_host[g.host];
  const bool several = std::any_of(gpus_of_host.begin(), gpus_of_host.end(),
                                   [](const auto& h) { return h.second > 1; });
  if (!in_.identity_costs && several) {
    in_.notes.push_back(
        "Who's dollars are each holder's time at the price of its host's first GPU (the identity "
        "counters do not say which GPU of a host the time was on): exact where a host's GPUs share "
        "a price; the daemons' own cost counters are used where every GPU is priced by its daemon "
        "and the rule file is version 3 or later.");
  }
  HourBucket& first = hours_[HourOf(since_ms_)];
  for (const auto& [id, g] : run_totals_) MergeInto(g, &first.gpus[id]);
  for (auto& [hour, b] : hours_) in_.hours.push_back(std::move(b));
  std::set<std::string> hosts;
  for (const GpuRecord& g : in_.gpus) hosts.insert(g.host);
  std::string names;
  size_t n = 0;
  for (const std::string& h : hosts) {
    if (n++ == 5) {
      names += ", …";
      break;
    }
    names += (names.empty() ? "" : ", ") + h;
  }
  in_.hostname = fmt::format("{} host{} ({})", hosts.size(), hosts.size() == 1 ? "" : "s", names);
  std::sort(in_.gpus.begin(), in_.gpus.end(), [](const GpuRecord& a, const GpuRecord& b) {
    return std::tie(a.host, a.index, a.uuid) < std::tie(b.host, b.index, b.uuid);
  });
  in_.notes.push_back(fmt::format(
      "From Prometheus at {}: the scraped counters of each daemon, not extrapolated; the last "
      "scrape interval and tick before the window's end are not in yet.",
      prom_.url()));
  if (rule_hours_ > 0) {
    const int64_t window_hours = (until_ms_ - since_ms_ + kHourMs - 1) / kHourMs;
    in_.notes.push_back(fmt::format(
        "{} of the window's {} hours from the hourly recording rules (cgov-hourly{}), the rest "
        "from the raw counters{}; mean memory and power are the rules' {} means.",
        rule_hours_, window_hours,
        daily_hours_ > 0 ? fmt::format(", {} of them summed by day in cgov-daily", daily_hours_)
                         : "",
        run_totals_.empty() ? "" : " (each GPU's figures as totals, the heatmap by the hour)",
        daily_hours_ > 0 ? "daily" : "hourly"));
  }
  return std::move(in_);
}

}  // namespace

std::optional<RecordingRules> ParseRecordingRules(std::string_view text) {
  if (text == "auto") return RecordingRules::kAuto;
  if (text == "on") return RecordingRules::kOn;
  if (text == "off") return RecordingRules::kOff;
  return std::nullopt;
}

Result<HistoryInput> LoadFleet(const PromQuery& prometheus, int64_t since_ms, int64_t until_ms,
                               FleetOptions options) {
  return FleetBuilder(prometheus, since_ms, until_ms, options).Build();
}

}  // namespace cgov
