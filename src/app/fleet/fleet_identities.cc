// The FleetBuilder's identities: each span's sums by holder, from the identity counters or the
// owners' rules.
#include "app/fleet/fleet_builder.h"

#include <array>
#include <chrono>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/time_format.h"

namespace cgov::fleet_detail {

namespace {

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

}  // namespace

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

}  // namespace cgov::fleet_detail
