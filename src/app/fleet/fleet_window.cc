// What the FleetBuilder reads once for the whole window: memory and power means, prices (the
// daemons' or OpenCost's), instance ids.
#include "app/fleet/fleet_builder.h"

#include <array>
#include <chrono>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/time_format.h"

namespace cgov::fleet_detail {

namespace {

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

}  // namespace

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

}  // namespace cgov::fleet_detail
