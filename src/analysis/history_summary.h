// The summary of a window of history (one host's database): where the GPU-time went, what it
// cost, who held it, which idle-held sessions to act on, the time-of-day pattern, and the
// findings. Every renderer of `cgov report` reads this value; none computes a number of its own.
#ifndef CGOV_ANALYSIS_HISTORY_SUMMARY_H_
#define CGOV_ANALYSIS_HISTORY_SUMMARY_H_

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/budget.h"
#include "analysis/cost.h"
#include "analysis/findings.h"
#include "analysis/history_by.h"
#include "analysis/history_rollup.h"
#include "analysis/plan_summary.h"
#include "analysis/rightsize.h"
#include "analysis/savings.h"
#include "analysis/series.h"
#include "store/records.h"

namespace cgov {

// What the report reads of the database for its window (cli/history_load.h fills it).
struct HistoryInput {
  int64_t since_ms = 0;
  int64_t until_ms = 0;
  std::string hostname;
  std::vector<GpuRecord> gpus;
  std::map<uint32_t, IdentityRecord> identities;
  std::map<uint32_t, std::string> commands;
  std::vector<HourBucket> hours;              // the window's hours, each GPU and identity once
  std::vector<SessionRecord> sessions;        // overlapping the window
  std::vector<GpuEventRecord> events;         // in the window (Xid errors), oldest first
  std::vector<GpuEventRecord> memory_health;  // each GPU's latest state before the window's end
  std::vector<PolicyActionRecord> policy_actions;  // in the window (cgov daemon --policy)
  std::optional<int64_t> data_end_ms;  // the end of the last tick's time in the database
  int64_t interval_ms = 0;             // the sampling interval of the window's data (the
                                       // longest of its recorders'); 0: unknown
  std::vector<std::string> notes;      // what the loader had to round or skip
  // Prices that came with the data (the fleet report: each daemon's own), by GPU id. Used
  // unless the report was given --price-per-gpu-hour or --instance-type.
  std::map<uint32_t, ResolvedPrice> gpu_prices;
  // The cloud instance or resource id each daemon was told it is billed as (--instance-id), and
  // its host: a bill's line for that resource is that host's (docs/billing.md).
  std::map<std::string, std::string> resource_hosts;
  // False when the source has no per-session data (Prometheus): no action list, a note instead.
  bool has_sessions = true;
  // The identities' dollars came with the data, priced when their time was credited
  // (IdentityHour::cost; the fleet report, whose identity counters do not say which GPU of a
  // host the time was on): used with the data's own prices, as gpu_prices are.
  bool identity_costs = false;
  // The whole fleet's usage by hour, when `hours` holds per-GPU totals of spans longer than an
  // hour (the fleet report over recording rules): the heatmap reads these instead.
  std::map<int64_t, GpuUsage> heatmap_hours;
  // `cgov report --plan`: the right-size plan's loads and replayed packings (app/history/
  // plan_load.h); nullopt without the flag.
  std::optional<PlanInput> plan;
};

// What to do with the cost of GPU time no one held.
struct IdleCostPolicy {
  enum class Kind { kUnallocated, kProportional, kOwner };
  Kind kind = Kind::kUnallocated;
  std::string key, value;    // kOwner: "team", "platform"
  std::string Name() const;  // "unallocated", "proportional", "owner:team=platform"
};

struct ShowbackRow {
  std::string key;  // the --by value ("(unknown)" when the processes' identity did not say)
  MicroUsd micro_usd = 0;
  int64_t cents = 0;          // micro_usd rounded so that every row's cents add up
  int64_t attributed_ms = 0;  // the GPU time its processes held, in billed spans
  double share_pct = 0;       // of the billed total
};

struct Showback {
  bool estimate = true;  // false: from a bill
  std::string source;    // "aws-cur cur.csv (12 lines)", "estimate: resolved prices"
  IdleCostPolicy policy;
  std::vector<ShowbackRow> rows;  // by dollars, descending
  MicroUsd billed_total = 0, idle = 0, unmatched = 0;
  int64_t billed_total_cents = 0, idle_cents = 0, unmatched_cents = 0;
  // Set when the idle line is a figure the summary already rounded to the cent (the estimate's
  // idle capacity is the truly idle phase): those cents are reused, never rounded again.
  std::optional<int64_t> idle_pinned_cents;
  double idle_share_pct = 0, unmatched_share_pct = 0;  // of the billed total, as rows' share_pct
  int64_t idle_ms = 0;                                 // GPU time no one held, in billed spans
  int lines = 0, matched_lines = 0;
  std::vector<std::string> notes;  // why lines went unmatched (the first few, by kind)
};

struct HistoryOptions {
  HistoryBy by = HistoryBy::kUser;
  PriceOptions price;
  const PriceCatalog* catalog = nullptr;  // nullptr: the built-in one
  PhaseThresholds phases;
  // An action needs an unbroken idle-held stretch this long.
  int64_t idle_held_min_ms = 30 * 60 * 1000;
  // Weekday (0 = Monday) x 24 + hour of day, for the Unix hour `hour`; default UTC.
  std::function<int(int64_t hour)> slot_of_hour;
  std::string tz_name = "UTC";
  IdleCostPolicy idle_cost;  // --idle-cost: who pays for the GPU time no one held
  // --grid-intensity: grams of CO2e a kWh; none assumed (no CO2e figure without it).
  std::optional<double> grid_g_per_kwh;
  // --energy-price: dollars a kWh; none assumed (no energy cost without it).
  std::optional<MicroUsd> energy_price_per_kwh;
};

struct HistoryGpuRow {
  GpuRecord gpu;
  std::string label;  // how the report names it: the NVML index, or host/index for a fleet
  GpuHour totals;
  ResolvedPrice price;
  std::array<double, kPhaseCount> share_pct{};
  std::optional<double> mean_util_pct;
  std::optional<double> mean_mem_used_mib;
  std::optional<double> mean_power_w;
  std::optional<double> mean_sm_active_pct;  // NVML GPM, over the time it was known
  std::optional<double> mean_tensor_active_pct;
  MicroUsd cost = 0;  // held time x price (0 when unpriced)
  // The time its utilization histogram covers (totals.util_band_ms): 0 from a source that keeps
  // none (Prometheus, rollups written before version 3).
  int64_t UtilBandMs() const {
    int64_t ms = 0;
    for (int64_t b : totals.util_band_ms) ms += b;
    return ms;
  }
  // Mean utilization and memory used (% of total) of each hour, by Unix hour, for charts (the
  // HTML report); empty when the window has more than kMaxChartedGpus GPUs.
  MinMaxSeries util_series{1}, mem_series{1};
};

// Beyond this many GPUs a report draws no per-GPU charts (the table still lists every GPU).
inline constexpr size_t kMaxChartedGpus = 64;

struct WhoRow {
  std::string key;      // the --by value; "" when unknown (rendered "(unknown)")
  int64_t held_ms = 0;  // time its processes held GPUs (a shared GPU counts for each holder)
  int64_t idle_held_ms = 0;
  std::array<int64_t, kPhaseCount> attributed_ms{};  // its share of the GPU time, by phase
  int64_t attributed_unknown_ms = 0;
  double share_pct = 0;             // attributed time / all GPU time in the window
  MicroUsd cost = 0;                // attributed time x price
  MicroUsd idle_held_cost = 0;      // its share of idle-held time x price
  int64_t energy_mj = 0;            // its share of the energy (split as the time is)
  int64_t idle_held_energy_mj = 0;  // of which burned while the GPU was idle-held
  std::vector<std::string> users;   // the users behind it (for --by project/team/pod)
  int64_t AttributedMs() const;
};

struct ActionRow {
  SessionRecord session;
  int64_t gpu_index = -1;
  std::string gpu_uuid;
  std::string user;
  std::string command;
  std::string pod, slurm_job;        // the holder's Kubernetes pod UID / Slurm job, when known
  std::string pod_name;              // "namespace/name", when known
  std::string pod_name_for_kubectl;  // "namespace name"
  // A session.allocation(): `command` is "(allocated to namespace/name)", the pid no process.
  bool ongoing = false;  // still holding at the end of the data
  MicroUsd idle_held_cost = 0;
  std::string advice;  // what to do, one line
};

// The idle-held sessions of one holder, process name and GPU together: a habit to change
// ("bob's ipykernel on GPU 4: idle-held 40 h on 5 of 7 days").
struct HabitRow {
  std::string user;
  std::string command;
  int64_t gpu_index = -1;
  std::string gpu_uuid;
  // "notebook", "inference server", "interactive shell", "Slurm job", "Kubernetes pod",
  // "batch job", "process", "allocated pod" (a GPU the kubelet gave a pod: no process)
  std::string kind;
  std::string pod_name;  // "namespace/name" of an allocated pod
  int sessions = 0;
  int days = 0;         // days (UTC) on which one of its idle-held stretches began
  int window_days = 0;  // days the window spans
  int64_t idle_held_ms = 0;
  MicroUsd idle_held_cost = 0;
  int typical_start_hour = -1;     // UTC hour its longest idle stretches most often begin
  int64_t typical_stretch_ms = 0;  // the median of those stretches
  bool ongoing = false;            // one of them still holds at the end of the data
  std::string advice;              // the one next step for this kind of holder
};

// One UTC day's idle GPU time (truly idle + idle-held) and its cost.
struct IdleDay {
  int64_t day_start_ms = 0;
  int64_t idle_ms = 0;
  MicroUsd idle_cost = 0;  // cents allocated once: the days add up to the summary's idle_cost
};

// A host's idle GPU-time in a fleet's window.
struct IdleHost {
  std::string host;
  size_t gpus = 0;
  int64_t idle_ms = 0;
  MicroUsd idle_cost = 0;  // cents allocated once: the hosts add up to the summary's idle_cost
};

struct HistorySummary {
  static constexpr int kSchemaVersion = 1;
  int64_t since_ms = 0, until_ms = 0;
  std::string hostname;
  HistoryBy by = HistoryBy::kUser;
  std::string tz_name;
  std::vector<HistoryGpuRow> gpus;
  UsageTotals usage;
  std::array<int64_t, kPhaseCount> phase_ms{};
  std::array<double, kPhaseCount> phase_share_pct{};
  CostBlock cost;
  int64_t idle_ms = 0;  // truly idle + idle held
  // The window's idle time by UTC day, oldest first; the days add up to idle_ms and idle_cost.
  // Empty when the source's hours are longer spans (the fleet report over recording rules).
  std::vector<IdleDay> idle_by_day;
  // A fleet's idle time by host (GpuRecord::host), by host name; the hosts add up to idle_ms and
  // idle_cost. Empty for one host's database.
  std::vector<IdleHost> idle_by_host;
  double idle_pct = 0;  // of the GPU-time with a known utilization
  MicroUsd idle_cost = 0;
  double mean_idle_gpus = 0;  // idle GPU-time / covered wall time
  size_t gpu_count = 0;
  std::vector<WhoRow> who;            // by attributed time, descending
  int64_t unattributed_ms = 0;        // GPU time no compute process held
  double unattributed_share_pct = 0;  // of all GPU time, like WhoRow::share_pct
  MicroUsd unattributed_cost = 0;
  EnergyBlock energy;
  // Of the attributed time, what came from GPUs shared by several compute holders: split by
  // their per-process SM utilization (a busy GPU with readings), or evenly (SplitRule).
  int64_t shared_by_util_ms = 0, shared_evenly_ms = 0;
  IdleHeldParts idle_held;
  std::vector<ActionRow> actions;  // by idle-held dollars (then time), descending
  std::vector<HabitRow> habits;    // the actions grouped, by dollars (then time), descending
  bool sessions_known = true;      // false: the source keeps no sessions (Prometheus)
  int64_t idle_held_min_ms = 0;
  // Mean utilization by weekday (0 = Monday) and hour of day; unknown where there is no data.
  std::array<std::array<std::optional<double>, 24>, 7> heatmap{};
  std::vector<Finding> findings;
  SavingsBlock savings;
  std::vector<std::string> notes;
  // Who pays for what: from a bill when the report was given one (set by the caller with
  // BillShowback), else estimated from the resolved prices (analysis/showback.h).
  Showback showback;
  // --budgets FILE: each budget's period to date and forecast (set by the caller with
  // EvaluateBudgets over its periods' data, not this window's); empty without the flag.
  std::vector<BudgetStatus> budgets;
  // What `cgov daemon --policy` did in the window, oldest first, with the GPU's index (-1
  // unknown); empty for a source without them (Prometheus).
  struct PolicyAction {
    PolicyActionRecord record;
    int gpu_index = -1;
  };
  std::vector<PolicyAction> policy_actions;
  std::string budgets_file;
  int budget_forecast_days = 0;
  // --plan: the right-size plan (computed = false without the flag).
  PlanSummary plan;
};

// Each sampled GPU's price per GPU-hour as SummarizeHistory prices it (a GPU it cannot price is
// left out). Pure.
Result<std::map<uint32_t, MicroUsd>> GpuHourlyPrices(const HistoryInput& input,
                                                     const HistoryOptions& options);

// Pure: prices, phases, attribution, actions, heatmap and findings of the input's window.
Result<HistorySummary> SummarizeHistory(const HistoryInput& input, const HistoryOptions& options);

}  // namespace cgov

#endif  // CGOV_ANALYSIS_HISTORY_SUMMARY_H_
