#include "app/fleet/fleet_builder.h"

#include <array>
#include <chrono>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "core/time_format.h"

namespace cgov::fleet_detail {

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

}  // namespace cgov::fleet_detail
