#include "app/top/fleet_top_source.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/text.h"
#include "core/time_format.h"
#include "core/url.h"
#include "os/clock.h"
#include "os/env.h"
#include "store/prometheus_source.h"

namespace cgov {
namespace {

// "Now" over Prometheus: counters' irate (their last two scrapes within this range: four
// scrapes at 30 s), gauges as last scraped within the lookback.
constexpr char kNowRange[] = "2m";

// A GPU (or MIG instance) of the fleet: host, UUID, instance.
using GpuKey = std::tuple<std::string, std::string, std::string>;
GpuKey KeyOf(const PromSeries& s) {
  return {s.Label("Hostname"), s.Label("UUID"), s.Label("GPU_I_ID")};
}

struct NowGpu {
  int64_t index = -1;
  int64_t instance = -1;
  std::optional<Phase> phase;
  double phase_rate = 0;
  std::optional<double> util_pct, power_w;
  std::optional<MicroUsd> price;
};

int64_t IntLabel(const PromSeries& s, std::string_view name) {
  const std::string v = s.Label(name);
  if (v.empty() || v.size() > 9 || !std::all_of(v.begin(), v.end(), ::isdigit)) return -1;
  return std::stoll(v);
}

double Value(const PromSeries& s) { return s.points.empty() ? NAN : s.points.back().second; }

}  // namespace

std::vector<std::string> FleetNowQueries() {
  return {
      fmt::format("sum by (Hostname, UUID, GPU_I_ID, gpu, phase) "
                  "(irate(cgov_gpu_phase_seconds_total[{}]))",
                  kNowRange),
      "cgov_gpu_utilization_ratio",
      "cgov_gpu_power_watts",
      "cgov_gpu_price_usd_per_hour",
      "max by (Hostname) (time() - cgov_last_sample_timestamp_seconds)",
      fmt::format("sum by (Hostname, user) (irate(cgov_identity_idle_held_seconds_total[{}])) > 0",
                  kNowRange),
  };
}

void FillFleetNow(const std::vector<std::vector<PromSeries>>& answers, TopFrame* frame) {
  std::map<GpuKey, NowGpu> gpus;
  auto gpu = [&](const PromSeries& s) -> NowGpu& {
    NowGpu& g = gpus[KeyOf(s)];
    if (g.index < 0) g.index = IntLabel(s, "gpu");
    if (g.instance < 0) g.instance = IntLabel(s, "GPU_I_ID");
    return g;
  };
  for (const PromSeries& s : answers[0]) {
    const std::optional<Phase> p = PhaseFromKey(s.Label("phase"));
    const double rate = Value(s);
    NowGpu& g = gpu(s);
    // The phase it spent most of its last scrape interval in; "unknown" (no reading) is no
    // phase.
    if (p && std::isfinite(rate) && rate > g.phase_rate) {
      g.phase = p;
      g.phase_rate = rate;
    }
  }
  for (const PromSeries& s : answers[1]) {
    if (std::isfinite(Value(s))) gpu(s).util_pct = 100 * Value(s);
  }
  for (const PromSeries& s : answers[2]) {
    if (std::isfinite(Value(s))) gpu(s).power_w = Value(s);
  }
  for (const PromSeries& s : answers[3]) {
    if (std::isfinite(Value(s)) && Value(s) >= 0) {
      gpu(s).price = PriceFromUsd(Value(s));
    }
  }
  std::map<std::string, TopNode> nodes;
  for (TopNode& n : frame->nodes) nodes[n.host] = std::move(n);
  // Each node's GPUs by index (a MIG instance after its GPU's others, by instance id).
  std::map<std::string, std::vector<std::pair<std::pair<int64_t, int64_t>, const NowGpu*>>> by_host;
  for (const auto& [key, g] : gpus) {
    if (std::get<0>(key).empty()) continue;
    by_host[std::get<0>(key)].push_back({{g.index, g.instance}, &g});
  }
  for (auto& [host, list] : by_host) {
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    TopNode& n = nodes[host];
    n.host = SafeText(host);
    n.phases.clear();
    double util = 0;
    int utils = 0;
    for (const auto& [order, g] : list) {
      n.phases.push_back(g->phase);
      if (g->util_pct) {
        util += *g->util_pct;
        ++utils;
      }
      if (g->power_w) n.power_w = n.power_w.value_or(0) + *g->power_w;
      if (g->price) {
        n.cost_per_hour += *g->price;
        if (g->phase && IsIdle(*g->phase)) n.waste_per_hour += *g->price;
      }
    }
    if (utils > 0) n.mean_util_pct = util / utils;
  }
  for (const PromSeries& s : answers[4]) {
    const std::string host = s.Label("Hostname");
    if (!host.empty() && std::isfinite(Value(s))) {
      nodes[host].host = SafeText(host);
      nodes[host].sample_age_s = std::max(0.0, Value(s));
    }
  }
  frame->nodes.clear();
  frame->cost_per_hour = frame->waste_per_hour = 0;
  for (auto& [host, n] : nodes) {
    frame->cost_per_hour += n.cost_per_hour;
    frame->waste_per_hour += n.waste_per_hour;
    frame->nodes.push_back(std::move(n));
  }
  frame->SetIdleShare();
  // Who holds idle GPUs now, and where.
  std::map<std::string, size_t> waster_at;
  for (size_t i = 0; i < frame->wasters.size(); ++i) waster_at[frame->wasters[i].user] = i;
  std::map<std::string, std::set<std::string>> hosts;
  for (const PromSeries& s : answers[5]) {
    const std::string user = SafeText(s.Label("user"));
    if (!std::isfinite(Value(s)) || Value(s) <= 0) continue;
    auto [it, fresh] = waster_at.try_emplace(user, frame->wasters.size());
    if (fresh) {
      // Idle-held for a moment too short to show in the day's figures yet.
      TopWaster w;
      w.user = user;
      frame->wasters.push_back(std::move(w));
    }
    frame->wasters[it->second].idle_held_gpus_now += Value(s);
    hosts[user].insert(SafeText(s.Label("Hostname")));
  }
  for (TopWaster& w : frame->wasters) {
    w.hosts.assign(hosts[w.user].begin(), hosts[w.user].end());
  }
}

Result<std::unique_ptr<FleetTopSource>> FleetTopSource::Open(const FleetTopOptions& o) {
  std::unique_ptr<FleetTopSource> source(new FleetTopSource);
  source->options_ = o;
  source->options_.report.idle_held_min = "1m";
  CGOV_ASSIGN_OR_RETURN(source->history_options_,
                        HistoryOptionsFor(source->options_.report, &source->catalog_));
  CGOV_ASSIGN_OR_RETURN(PrometheusSource prometheus, OpenReportPrometheus(o.report));
  source->prometheus_ = std::make_unique<PrometheusSource>(std::move(prometheus));
  return source;
}

Result<TopFrame> FleetTopSource::Frame(int64_t now_mono_ms) {
  const int64_t now_ms = options_.wall_ms ? options_.wall_ms() : Env::Default()->WallMs();
  const int64_t day_start = (now_ms - 1) - ((now_ms - 1) % kDayMs);
  if (!day_ || now_mono_ms - day_read_mono_ms_ >= options_.day_refresh_ms ||
      day_->since_ms != day_start) {
    CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                          LoadReportWindow(options_.report, history_options_, day_start, now_ms));
    CGOV_ASSIGN_OR_RETURN(HistorySummary summary, SummarizeHistory(in, history_options_));
    day_ = std::move(summary);
    day_read_mono_ms_ = now_mono_ms;
  }
  TopFrame frame;
  frame.source = "prometheus";
  frame.host = RedactedUrl(options_.report.prometheus);
  frame.at_ms = now_ms;
  frame.day_start_ms = day_start;
  frame.priced = day_->cost.priced;
  frame.idle_ms_today = day_->idle_ms;
  frame.idle_cost_today = day_->idle_cost;
  for (const IdleHost& h : day_->idle_by_host) {
    TopNode n;
    n.host = SafeText(h.host);
    n.idle_ms_today = h.idle_ms;
    n.idle_cost_today = h.idle_cost;
    frame.nodes.push_back(std::move(n));
  }
  for (const WhoRow& w : day_->who) {
    if (w.idle_held_ms <= 0) continue;
    TopWaster t;
    t.user = SafeText(w.key);
    t.idle_held_ms_today = w.idle_held_ms;
    t.idle_held_cost_today = w.idle_held_cost;
    frame.wasters.push_back(std::move(t));
  }
  std::stable_sort(frame.wasters.begin(), frame.wasters.end(),
                   [](const TopWaster& a, const TopWaster& b) {
                     return std::tie(a.idle_held_cost_today, a.idle_held_ms_today) >
                            std::tie(b.idle_held_cost_today, b.idle_held_ms_today);
                   });
  std::vector<PromRequest> requests;
  for (const std::string& q : FleetNowQueries()) {
    requests.push_back(PromRequest{.expr = q, .time_s = static_cast<double>(now_ms) / 1e3});
  }
  CGOV_ASSIGN_OR_RETURN(std::vector<std::vector<PromSeries>> answers,
                        prometheus_->QueryAll(requests));
  FillFleetNow(answers, &frame);
  return frame;
}

}  // namespace cgov
