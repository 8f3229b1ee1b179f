// The fleet report's builder (fleet_load.h's LoadFleet), private to src/app/fleet/: the spans a
// window is read in, and one FleetBuilder whose parts live in four files — fleet_builder.cc (the
// GPUs and identities it numbers, the batch of jobs, the checks and Build()), fleet_spans.cc
// (which stretches come from raw counters and which from the recording rules, and their GPU
// figures), fleet_identities.cc (each span's sums by holder) and fleet_window.cc (what is read
// once for the window: means, prices, instance ids). Its PromQL is fleet_queries.h's.
#ifndef CGOV_APP_FLEET_FLEET_BUILDER_H_
#define CGOV_APP_FLEET_FLEET_BUILDER_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "app/fleet/fleet_load.h"
#include "app/fleet/fleet_queries.h"
#include "core/time_format.h"
#include "os/env.h"

namespace cgov::fleet_detail {

// The daily rules summed the hourly evaluations between 24.5 h and 0.5 h before their own.
inline constexpr int64_t kDailyLagMs = kHourMs / 2;
// A counter that fell by more than this (a millisecond of a seconds counter) was reset; less is
// the rounding of floating-point values summed in another order.
inline constexpr double kFallMargin = 1e-3;
// Auto reads the rules for windows of a day or more: shorter ones are cheap from raw counters.
inline constexpr int64_t kAutoRulesMinWindowMs = 24 * kHourMs;

// Times this close to now (when the report starts) are read by instant queries only, never in a
// range query. VictoriaMetrics leaves out, or replaces with earlier ones, the points of a range
// query that fall within its -search.latencyOffset (30 s by default) of now, nocache=1 or not
// (version 1.79.5, issue 50); an instant query with nocache=1 is answered for the time it names.
// Five minutes leaves room for a larger offset.
inline constexpr int64_t kRecentMs = 5 * 60'000;

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
inline MicroUsd DollarsFromOutside(double usd) {
  if (!(usd > 0)) return 0;
  return static_cast<MicroUsd>(std::llround(std::min(usd, 1e12) * 1e6));
}

inline int64_t Ms(double seconds) { return std::llround(std::max(0.0, seconds) * 1000); }
// Joules a server answered as millijoules: 0 for a negative or non-finite value, at most 1 TJ a
// series (45 years of a 700 W GPU), so that thousands of them add up without overflow.
inline int64_t Mj(double joules) {
  if (!(joules > 0)) return 0;
  return std::llround(std::min(joules, 1e12) * 1000);
}
inline double Seconds(int64_t ms) { return static_cast<double>(ms) / 1000; }
inline int64_t HourOf(int64_t ms) { return ms >= 0 ? ms / kHourMs : (ms - kHourMs + 1) / kHourMs; }

inline std::optional<size_t> PhaseSlot(const std::string& key) {
  if (std::optional<Phase> p = PhaseFromKey(key)) return static_cast<size_t>(*p);
  if (key == "unknown") return kPhaseCount;
  return std::nullopt;
}

// The kinds the fleet's hours (the heatmap) are read in: time and busy time by phase.
inline constexpr GpuCounterKind kHeatmapKinds[] = {GpuCounterKind::kPhase, GpuCounterKind::kBusy};

// Where a GPU counter's series goes in a GpuUsage: its phase (kPhaseCount: unknown; busy time
// only for a known phase), its pattern's place in kUsagePatterns, or 0 for swings. None: a label
// this build does not know (a newer daemon's), left out.
std::optional<size_t> SlotOf(GpuCounterKind kind, const PromSeries& s);

// `slot`: SlotOf(kind, the series).
void AddToUsage(GpuCounterKind kind, size_t slot, double value, GpuUsage* u);

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

}  // namespace cgov::fleet_detail

#endif  // CGOV_APP_FLEET_FLEET_BUILDER_H_
