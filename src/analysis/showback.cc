#include "analysis/showback.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <numeric>

#include <fmt/format.h>

#include "core/tags.h"
#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

// Exact products of a price and a weight: micro-dollars x milliseconds pass 2^63.
__extension__ typedef __int128 Int128;
constexpr const char* kUnknownKey = "(unknown)";
constexpr const char* kUnlabelledKey = "(unlabelled)";

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The host a billed resource is, or "" when none of `hosts` is.
std::string HostOf(const std::string& resource, const std::map<std::string, std::string>& map,
                   const std::map<std::string, std::string>& recorded,
                   const std::map<std::string, std::vector<uint32_t>>& hosts) {
  if (auto it = map.find(resource); it != map.end()) return it->second;
  if (auto it = recorded.find(resource); it != recorded.end()) return it->second;
  std::string_view last = resource;
  if (const size_t slash = last.rfind('/'); slash != std::string_view::npos) {
    last.remove_prefix(slash + 1);
  }
  for (const auto& [host, gpus] : hosts) {
    if (host == resource || (!last.empty() && SameName(host, last))) return host;
  }
  return "";
}

void Finish(Showback* s) {
  MicroUsd rows = 0;
  for (const ShowbackRow& r : s->rows) rows += r.micro_usd;
  s->billed_total = rows + s->idle + s->unmatched;
  std::vector<int64_t> micro;
  for (const ShowbackRow& r : s->rows) micro.push_back(r.micro_usd);
  micro.push_back(s->idle);
  micro.push_back(s->unmatched);
  std::vector<int64_t> cents;
  if (s->idle_pinned_cents && s->idle != 0) {
    // The idle line is a figure the summary already rounded (the truly idle phase): its cents
    // stay, the rest of the total is allocated over the other lines.
    micro[s->rows.size()] = *s->idle_pinned_cents * kMicroPerCent;
    std::vector<int64_t> others = micro;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(s->rows.size()));
    cents = AllocateCents(others, s->billed_total - *s->idle_pinned_cents * kMicroPerCent);
    cents.insert(cents.begin() + static_cast<std::ptrdiff_t>(s->rows.size()),
                 *s->idle_pinned_cents);
  } else {
    cents = AllocateCents(micro, s->billed_total);
  }
  for (size_t i = 0; i < s->rows.size(); ++i) s->rows[i].cents = cents[i];
  s->idle_cents = cents[s->rows.size()];
  s->unmatched_cents = cents[s->rows.size() + 1];
  s->billed_total_cents = std::accumulate(cents.begin(), cents.end(), int64_t{0});
  auto share = [&](MicroUsd amount) {
    return s->billed_total != 0
               ? 100.0 * static_cast<double>(amount) / static_cast<double>(s->billed_total)
               : 0.0;
  };
  for (ShowbackRow& r : s->rows) r.share_pct = share(r.micro_usd);
  s->idle_share_pct = share(s->idle);
  s->unmatched_share_pct = share(s->unmatched);
  std::sort(s->rows.begin(), s->rows.end(), [](const ShowbackRow& a, const ShowbackRow& b) {
    return a.micro_usd != b.micro_usd ? a.micro_usd > b.micro_usd : a.key < b.key;
  });
}

// The idle cost policy: leave idle as its own line, spread it over the rows by their GPU time,
// or charge it to one owner.
void ApplyPolicy(HistoryBy by, Showback* s) {
  if (s->idle == 0) return;
  if (s->policy.kind == IdleCostPolicy::Kind::kProportional) {
    std::vector<int64_t> weights;
    for (const ShowbackRow& r : s->rows) weights.push_back(std::max<int64_t>(0, r.attributed_ms));
    if (std::accumulate(weights.begin(), weights.end(), int64_t{0}) == 0) {
      s->notes.push_back("idle cost stays unallocated: no one held a GPU in the billed spans");
      return;
    }
    const std::vector<int64_t> shares = LargestRemainder(s->idle, weights);
    for (size_t i = 0; i < s->rows.size(); ++i) s->rows[i].micro_usd += shares[i];
    s->idle = 0;
  } else if (s->policy.kind == IdleCostPolicy::Kind::kOwner) {
    const char* by_name = HistoryByName(by);
    const std::string key =
        s->policy.key == by_name ? s->policy.value : s->policy.key + "=" + s->policy.value;
    auto it = std::find_if(s->rows.begin(), s->rows.end(),
                           [&](const ShowbackRow& r) { return r.key == key; });
    if (it == s->rows.end()) {
      s->rows.push_back({key, 0, 0, 0, 0});
      it = s->rows.end() - 1;
    }
    it->micro_usd += s->idle;
    s->idle = 0;
  }
}

}  // namespace

std::string HistoryKey(HistoryBy by, const IdentityRecord& r, const std::string& hostname) {
  // A pod the API server described but whose labels name no project (team, user): shown as
  // such, so that who breaks the tagging policy is seen with the GPU-hours it carries.
  const bool described_pod = !r.kube_pod_name.empty();
  auto labelled = [&](const std::string& value) {
    return value.empty() && described_pod ? std::string(kUnlabelledKey) : value;
  };
  const std::string pod = described_pod ? r.kube_namespace + "/" + r.kube_pod_name : r.pod;
  switch (by) {
    case HistoryBy::kHost:
      return r.host.empty() ? hostname : r.host;
    case HistoryBy::kUser:
      return labelled(r.user);
    // A database written before CGOV_TAGS named them keeps them only in the tags.
    case HistoryBy::kProject:
      return labelled(!r.project.empty() || described_pod ? r.project : TagOf(r.tags, "project"));
    case HistoryBy::kTeam:
      return labelled(!r.team.empty() || described_pod ? r.team : TagOf(r.tags, "team"));
    case HistoryBy::kPod:
      return pod;
    case HistoryBy::kSlurmJob:
      return r.slurm_job;
    case HistoryBy::kAccount:
      return r.slurm_account;
    case HistoryBy::kNamespace:
      return r.kube_namespace;
    // A pod's container within its pod; a Docker or Podman container by its own name.
    case HistoryBy::kContainer:
      if (r.kube_container_name.empty()) return r.container;
      return described_pod ? pod + "/" + r.kube_container_name : r.kube_container_name;
  }
  return "";
}

std::string IdleCostPolicy::Name() const {
  switch (kind) {
    case Kind::kUnallocated:
      return "unallocated";
    case Kind::kProportional:
      return "proportional";
    case Kind::kOwner:
      return "owner:" + key + "=" + value;
  }
  return "?";
}

Result<IdleCostPolicy> ParseIdleCostPolicy(std::string_view text) {
  IdleCostPolicy p;
  if (text == "unallocated") return p;
  if (text == "proportional") {
    p.kind = IdleCostPolicy::Kind::kProportional;
    return p;
  }
  if (text.starts_with("owner:")) {
    const std::string_view kv = text.substr(6);
    const size_t eq = kv.find('=');
    if (eq != std::string_view::npos && eq > 0 && eq + 1 < kv.size()) {
      p.kind = IdleCostPolicy::Kind::kOwner;
      p.key = std::string(kv.substr(0, eq));
      p.value = std::string(kv.substr(eq + 1));
      return p;
    }
  }
  return InvalidArgument(fmt::format(
      "--idle-cost {}: expected unallocated, proportional or owner:KEY=VALUE (owner:team=platform)",
      SafeText(text)));
}

std::vector<int64_t> LargestRemainder(int64_t total, const std::vector<int64_t>& weights) {
  std::vector<int64_t> out(weights.size(), 0);
  Int128 sum = 0;
  for (int64_t w : weights) sum += w;
  if (sum <= 0 || total == 0) return out;
  const bool negative = total < 0;
  const Int128 magnitude = negative ? -static_cast<Int128>(total) : total;
  Int128 given = 0;
  std::vector<std::pair<Int128, size_t>> remainders;
  for (size_t i = 0; i < weights.size(); ++i) {
    const Int128 exact = magnitude * weights[i];
    out[i] = static_cast<int64_t>(exact / sum);
    given += out[i];
    remainders.emplace_back(exact % sum, i);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < magnitude && k < remainders.size(); ++k, ++given) {
    ++out[remainders[k].second];
  }
  if (negative) {
    for (int64_t& v : out) v = -v;
  }
  return out;
}

namespace {

bool OnHost(const std::map<uint32_t, std::string>& host_of_gpu, uint32_t gpu_id,
            const std::string& host) {
  auto it = host_of_gpu.find(gpu_id);
  return it != host_of_gpu.end() && it->second == host;
}

// The GPU time of `host` inside a bill line's span, by holder (`by`), and in all (*total): each
// hour's data in the share of its time the span covers (rollups are hourly: a span that cuts an
// hour takes that part of it, pro rata). An hour's data covers the hour within the report's
// window.
std::map<std::string, int64_t> HeldInSpan(const HistoryInput& in, HistoryBy by,
                                          const std::string& host,
                                          const std::map<uint32_t, std::string>& host_of_gpu,
                                          const BilledLine& line, int64_t* total) {
  std::map<std::string, int64_t> held;  // by key
  for (const HourBucket& b : in.hours) {
    int64_t bucket_from = b.hour * kHourMs, bucket_to = (b.hour + 1) * kHourMs;
    if (in.until_ms > in.since_ms) {
      bucket_from = std::max(bucket_from, in.since_ms);
      bucket_to = std::min(bucket_to, in.until_ms);
    }
    const int64_t from = std::max(line.start_ms, bucket_from);
    const int64_t to = std::min(line.end_ms, bucket_to);
    if (to <= from) continue;
    const int64_t overlap = to - from, span = bucket_to - bucket_from;
    for (const auto& [id, g] : b.gpus) {
      if (!OnHost(host_of_gpu, id, host)) continue;
      *total += static_cast<int64_t>(Int128{g.usage.HeldMs()} * overlap / span);
    }
    for (const auto& [key, ih] : b.identities) {
      if (!OnHost(host_of_gpu, key.second, host)) continue;
      int64_t ms = ih.attributed_unknown_ms;
      for (int64_t p : ih.attributed_ms) ms += p;
      auto record = in.identities.find(key.first);
      std::string who = record == in.identities.end() ? "" : HistoryKey(by, record->second, host);
      if (who.empty()) who = kUnknownKey;
      held[who] += static_cast<int64_t>(Int128{ms} * overlap / span);
    }
  }
  return held;
}

}  // namespace

Showback BillShowback(const HistoryInput& in, HistoryBy by, const Bill& bill,
                      const std::map<std::string, std::string>& resource_host,
                      const IdleCostPolicy& policy) {
  Showback s;
  s.estimate = false;
  s.policy = policy;
  s.lines = static_cast<int>(bill.lines.size());
  s.source = fmt::format("{} {} ({} line{})", BillFormatName(bill.format), bill.file, s.lines,
                         s.lines == 1 ? "" : "s");
  std::map<std::string, std::vector<uint32_t>> hosts;
  std::map<uint32_t, std::string> host_of_gpu;
  for (const GpuRecord& g : in.gpus) {
    const std::string host = g.host.empty() ? in.hostname : g.host;
    hosts[host].push_back(g.id);
    host_of_gpu[g.id] = host;
  }
  std::map<std::string, ShowbackRow> rows;
  std::map<std::string, int> unmatched_why;  // reason -> lines
  std::map<std::string, int64_t> unmatched_example;
  auto unmatched = [&](const BilledLine& line, const std::string& why) {
    s.unmatched += line.cost_micro_usd;
    if (unmatched_why[why]++ == 0) unmatched_example[why] = line.line;
  };
  for (const BilledLine& line : bill.lines) {
    const std::string host = HostOf(line.resource, resource_host, in.resource_hosts, hosts);
    if (host.empty()) {
      unmatched(line, line.resource.empty()
                          ? std::string("no resource id (taxes, support, credits)")
                          : fmt::format("resource {}: no host cgov saw (map it with "
                                        "--billing-map)",
                                        SafeText(line.resource)));
      continue;
    }
    int64_t total = 0;
    const std::map<std::string, int64_t> held = HeldInSpan(in, by, host, host_of_gpu, line, &total);
    int64_t attributed = 0;
    for (const auto& [who, ms] : held) attributed += ms;
    const int64_t idle_ms = std::max<int64_t>(0, total - attributed);
    if (attributed + idle_ms == 0) {
      unmatched(line, fmt::format("host {}: no GPU time recorded in the line's span (outside the "
                                  "report window, or the daemon was not running)",
                                  SafeText(host)));
      continue;
    }
    ++s.matched_lines;
    std::vector<int64_t> weights;
    for (const auto& [who, ms] : held) weights.push_back(ms);
    weights.push_back(idle_ms);
    const std::vector<int64_t> shares = LargestRemainder(line.cost_micro_usd, weights);
    size_t i = 0;
    for (const auto& [who, ms] : held) {
      ShowbackRow& row = rows[who];
      row.key = who;
      row.micro_usd += shares[i++];
      row.attributed_ms += ms;
    }
    s.idle += shares[i];
    s.idle_ms += idle_ms;
  }
  for (auto& [key, row] : rows) {
    if (row.attributed_ms != 0 || row.micro_usd != 0) s.rows.push_back(row);
  }
  std::vector<std::pair<int64_t, std::string>> by_line;  // the reasons in the file's order
  for (const auto& [why, n] : unmatched_why) {
    by_line.emplace_back(unmatched_example[why],
                         fmt::format("unmatched: {} line{} ({}, first at line {})", n,
                                     n == 1 ? "" : "s", why, unmatched_example[why]));
  }
  std::sort(by_line.begin(), by_line.end());
  for (auto& [line, note] : by_line) s.notes.push_back(std::move(note));
  ApplyPolicy(by, &s);
  Finish(&s);
  if (s.billed_total != bill.total_micro_usd) {  // cannot happen: every line went somewhere
    s.notes.push_back(fmt::format("internal: the showback adds up to {} µ$, the bill to {} µ$",
                                  s.billed_total, bill.total_micro_usd));
  }
  return s;
}

Showback EstimateShowback(const HistorySummary& summary, const IdleCostPolicy& policy) {
  Showback s;
  s.estimate = true;
  s.policy = policy;
  s.source = "estimate: GPU time x the resolved prices (bring the bill with --billing)";
  if (!summary.cost.priced) {
    s.notes.push_back("no price for these GPUs: the showback needs --price-per-gpu-hour or a bill");
  } else {
    for (const WhoRow& w : summary.who) {
      if (w.AttributedMs() == 0 && w.cost == 0) continue;  // a graphics-only holder
      s.rows.push_back({w.key.empty() ? kUnknownKey : w.key, w.cost, 0, w.AttributedMs(), 0});
    }
    s.idle = summary.unattributed_cost;
    s.idle_ms = summary.unattributed_ms;
    const size_t truly_idle = static_cast<size_t>(Phase::kTrulyIdle);
    const MicroUsd phase = summary.cost.phase_cost[truly_idle];  // whole cents
    if (summary.unattributed_ms > 0 && summary.unattributed_ms == summary.phase_ms[truly_idle] &&
        summary.usage.UnknownMs() == 0 &&
        std::abs(summary.unattributed_cost - phase) < kMicroPerCent) {
      s.idle_pinned_cents = summary.cost.phase_cost[truly_idle] / kMicroPerCent;
    }
  }
  ApplyPolicy(summary.by, &s);
  Finish(&s);
  return s;
}

}  // namespace cgov
