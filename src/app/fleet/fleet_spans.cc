// The FleetBuilder's spans: which stretches of the window the recording rules cover and
// which the raw counters, and each one's GPU figures.
#include "app/fleet/fleet_builder.h"

#include <array>
#include <chrono>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/time_format.h"

namespace cgov::fleet_detail {

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

}  // namespace cgov::fleet_detail
