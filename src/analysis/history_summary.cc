#include "analysis/history_summary.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/showback.h"
#include "core/duration.h"
#include "core/time_format.h"

namespace cgov {
namespace {

int UtcSlot(int64_t hour) {
  const int64_t days = hour >= 0 ? hour / 24 : (hour - 23) / 24;
  const int weekday = static_cast<int>(((days % 7) + 7 + 3) % 7);  // 1970-01-01 was a Thursday
  return weekday * 24 + static_cast<int>(hour - days * 24);
}

// Each GPU's hourly means, in hour order, as chart series.
void AddHourlySeries(const HistoryInput& in, HistorySummary* s) {
  std::map<uint32_t, HistoryGpuRow*> rows;
  for (HistoryGpuRow& row : s->gpus) rows[row.gpu.id] = &row;
  std::vector<const HourBucket*> hours;
  for (const HourBucket& b : in.hours) hours.push_back(&b);
  std::stable_sort(hours.begin(), hours.end(),
                   [](const HourBucket* a, const HourBucket* b) { return a->hour < b->hour; });
  for (const HourBucket* b : hours) {
    for (const auto& [id, g] : b->gpus) {
      auto it = rows.find(id);
      if (it == rows.end()) continue;
      HistoryGpuRow& row = *it->second;
      if (std::optional<double> util = g.usage.MeanUtilPct()) row.util_series.Add(b->hour, *util);
      if (g.mem_known_ms > 0 && row.gpu.mem_total_mib && *row.gpu.mem_total_mib > 0) {
        const double mib =
            static_cast<double>(g.mem_used_mib_ms) / static_cast<double>(g.mem_known_ms);
        row.mem_series.Add(b->hour, 100.0 * mib / static_cast<double>(*row.gpu.mem_total_mib));
      }
    }
  }
}

// The report prices with the data's own prices: it was given no price flag (`--spot` asks for
// the catalog's spot price, as a report without a daemon's price gets it: issue 57, 5).
bool UsesDataPrices(const HistoryOptions& o) {
  return !o.price.price_per_gpu_hour && o.price.instance_type.empty() && !o.price.spot;
}

// The daemon's own price when the data came with one and the report uses the data's prices.
Result<ResolvedPrice> GpuPrice(const HistoryInput& in, const HistoryOptions& o,
                               const GpuRecord& gpu, const PriceCatalog& catalog) {
  auto given = in.gpu_prices.find(gpu.id);
  if (given != in.gpu_prices.end() && UsesDataPrices(o)) {
    ResolvedPrice p = given->second;
    if (!p.on_demand && !p.spot) {
      // A price read from Prometheus carries no catalog references (a history database keeps
      // the daemon's): the report's catalog gives them, so that the spot finding reads the same
      // prices from either source (issue 57, 7).
      Result<ResolvedPrice> reference =
          ResolveUnitPrice(PriceOptions{}, gpu.name, gpu.mig, catalog, gpu.mem_total_mib);
      if (reference.ok()) {
        p.on_demand = reference->on_demand;
        p.spot = reference->spot;
      }
    }
    return p;
  }
  return ResolveUnitPrice(o.price, gpu.name, gpu.mig, catalog, gpu.mem_total_mib);
}

Status BuildGpuRows(const HistoryInput& in, const HistoryOptions& o, HistorySummary* s) {
  std::map<uint32_t, GpuHour> totals;
  for (const HourBucket& b : in.hours) {
    for (const auto& [id, g] : b.gpus) MergeInto(g, &totals[id]);
  }
  const PriceCatalog& catalog = o.catalog != nullptr ? *o.catalog : BuiltinCatalog();
  for (const GpuRecord& gpu : in.gpus) {
    auto it = totals.find(gpu.id);
    if (it == totals.end() || it->second.samples == 0) continue;
    HistoryGpuRow row;
    row.gpu = gpu;
    row.label = gpu.host.empty() ? gpu.Label() : fmt::format("{}/{}", gpu.host, gpu.Label());
    row.totals = it->second;
    CGOV_ASSIGN_OR_RETURN(row.price, GpuPrice(in, o, gpu, catalog));
    const GpuUsage& u = row.totals.usage;
    row.share_pct = SharesPct(u.phase_ms);
    row.mean_util_pct = u.MeanUtilPct();
    if (row.totals.mem_known_ms > 0) {
      row.mean_mem_used_mib = static_cast<double>(row.totals.mem_used_mib_ms) /
                              static_cast<double>(row.totals.mem_known_ms);
    }
    if (row.totals.power_known_ms > 0) {
      row.mean_power_w = static_cast<double>(row.totals.power_dw_ms) /
                         static_cast<double>(row.totals.power_known_ms) / 10.0;
    }
    if (u.gpm_ms > 0) {
      row.mean_sm_active_pct =
          static_cast<double>(u.sm_active_ms_x100) / static_cast<double>(u.gpm_ms);
    }
    if (u.tensor_ms > 0) {
      row.mean_tensor_active_pct =
          static_cast<double>(u.tensor_active_ms_x100) / static_cast<double>(u.tensor_ms);
    }
    if (row.price.per_gpu_hour) row.cost = CostOf(*row.price.per_gpu_hour, u.HeldMs());
    s->gpus.push_back(std::move(row));
  }
  std::sort(s->gpus.begin(), s->gpus.end(), [](const HistoryGpuRow& a, const HistoryGpuRow& b) {
    return std::tie(a.gpu.host, a.gpu.index, a.gpu.uuid) <
           std::tie(b.gpu.host, b.gpu.index, b.gpu.uuid);
  });
  // Not over per-GPU totals of long spans (heatmap_hours): a chart needs the GPU's own hours.
  if (s->gpus.size() <= kMaxChartedGpus && in.heatmap_hours.empty()) AddHourlySeries(in, s);
  return Status::Ok();
}

// The per-GPU rows by GPU id: a fleet's report has thousands, looked up once an identity-hour.
class GpuIndex {
 public:
  explicit GpuIndex(const HistorySummary& s) {
    for (const HistoryGpuRow& g : s.gpus) rows_.emplace(g.gpu.id, &g);  // the first row an id
  }
  const HistoryGpuRow* Find(uint32_t id) const {
    const auto it = rows_.find(id);
    return it != rows_.end() ? it->second : nullptr;
  }

 private:
  std::unordered_map<uint32_t, const HistoryGpuRow*> rows_;
};

MicroUsd PriceOf(const HistoryGpuRow* g, int64_t ms) {
  return g != nullptr && g->price.per_gpu_hour ? CostOf(*g->price.per_gpu_hour, ms) : 0;
}

// `data_prices`: the report prices with the data's own prices (UsesDataPrices).
void BuildWho(const HistoryInput& in, bool data_prices, HistorySummary* s) {
  const bool priced_by_source = in.identity_costs && data_prices;
  std::map<std::string, WhoRow> rows;
  std::map<std::string, std::set<std::string>> users;
  int64_t attributed = 0;
  const GpuIndex gpus(*s);
  for (const HourBucket& b : in.hours) {
    for (const auto& [key, h] : b.identities) {
      auto id = in.identities.find(key.first);
      const IdentityRecord none;
      const IdentityRecord& record = id != in.identities.end() ? id->second : none;
      WhoRow& row = rows[HistoryKey(s->by, record, in.hostname)];
      const HistoryGpuRow* gpu = gpus.Find(key.second);
      row.held_ms += h.held_ms;
      row.idle_held_ms += h.idle_held_ms;
      for (size_t p = 0; p < kPhaseCount; ++p) row.attributed_ms[p] += h.attributed_ms[p];
      row.attributed_unknown_ms += h.attributed_unknown_ms;
      row.energy_mj += h.energy_mj;
      row.idle_held_energy_mj += h.idle_held_energy_mj;
      s->shared_by_util_ms += h.shared_by_util_ms;
      s->shared_evenly_ms += h.shared_evenly_ms;
      int64_t mine = h.attributed_unknown_ms;
      for (int64_t ms : h.attributed_ms) mine += ms;
      attributed += mine;
      const int64_t idle_held = h.attributed_ms[static_cast<size_t>(Phase::kIdleHeld)];
      if (priced_by_source) {
        // Its share of the dollars its time was credited with, in proportion to the time.
        row.cost = AddUsd(row.cost, h.cost);
        if (mine > 0) {
          row.idle_held_cost += static_cast<MicroUsd>(
              std::llround(static_cast<double>(h.cost) * static_cast<double>(idle_held) /
                           static_cast<double>(mine)));
        }
      } else {
        row.cost = AddUsd(row.cost, PriceOf(gpu, mine));
        row.idle_held_cost += PriceOf(gpu, idle_held);
      }
      if (!record.user.empty()) users[HistoryKey(s->by, record, in.hostname)].insert(record.user);
    }
  }
  const int64_t total = s->usage.HeldMs();
  for (auto& [key, row] : rows) {
    row.key = key;
    row.users.assign(users[key].begin(), users[key].end());
    row.share_pct =
        total > 0 ? 100.0 * static_cast<double>(row.AttributedMs()) / static_cast<double>(total)
                  : 0;
    s->who.push_back(row);
  }
  std::sort(s->who.begin(), s->who.end(), [](const WhoRow& a, const WhoRow& b) {
    if (a.AttributedMs() != b.AttributedMs()) return a.AttributedMs() > b.AttributedMs();
    if (a.held_ms != b.held_ms) return a.held_ms > b.held_ms;
    return a.key < b.key;
  });
  int64_t attributed_energy = 0;
  for (const WhoRow& r : s->who) attributed_energy += r.energy_mj;
  s->energy.unattributed_mj = std::max<int64_t>(0, s->energy.total_mj - attributed_energy);
  s->unattributed_ms = std::max<int64_t>(0, total - attributed);
  s->unattributed_share_pct =
      total > 0 ? 100.0 * static_cast<double>(s->unattributed_ms) / static_cast<double>(total) : 0;
  s->unattributed_cost = s->cost.priced ? std::max<MicroUsd>(
                                              0, s->cost.total -
                                                     [&] {
                                                       MicroUsd sum = 0;
                                                       for (const WhoRow& r : s->who) sum += r.cost;
                                                       return sum;
                                                     }())
                                        : 0;
}

std::pair<std::string, std::string> KindOf(const ActionRow& a, const std::string& who,
                                           bool ongoing);

std::string Advice(const ActionRow& a) {
  const std::string who = a.user.empty() ? "the owner (unknown user: a system or container "
                                           "process?)"
                                         : a.user;
  std::string advice = KindOf(a, who, false).second;
  if (a.ongoing && a.session.allocation()) {
    return fmt::format(
        "still allocated: the pod {} holds GPU {} by its GPU request, with nothing running on it; "
        "delete it (`kubectl delete pod -n {}`) or scale its owner down; then: {}",
        a.pod_name, a.gpu_index, a.pod_name_for_kubectl, advice);
  }
  if (a.ongoing) {
    advice = fmt::format(
        "still holding: check `nvidia-smi -i {}`, ask {} to free it or end pid {} (`kill {}`); "
        "then: {}",
        a.gpu_index, who, a.session.pid, a.session.pid, advice);
  }
  return advice;
}

void BuildActions(const HistoryInput& in, int64_t min_ms, HistorySummary* s) {
  const GpuIndex gpus(*s);
  for (const SessionRecord& session : in.sessions) {
    // Unbroken idle-held time: a starved loader's seconds-long dips are a different finding.
    if (session.idle_streak_max_ms < min_ms) continue;
    ActionRow a;
    a.session = session;
    const HistoryGpuRow* gpu = gpus.Find(session.gpu_id);
    for (const GpuRecord& g : in.gpus) {
      if (g.id == session.gpu_id) {
        a.gpu_index = g.index;
        a.gpu_uuid = g.uuid;
      }
    }
    if (auto id = in.identities.find(session.identity_id); id != in.identities.end()) {
      a.user = id->second.user;
      a.pod = id->second.pod;
      a.slurm_job = id->second.slurm_job;
      if (!id->second.kube_pod_name.empty()) {
        a.pod_name = id->second.kube_namespace + "/" + id->second.kube_pod_name;
        a.pod_name_for_kubectl = id->second.kube_namespace + " " + id->second.kube_pod_name;
      }
    }
    if (session.allocation()) {
      // No process: the container the kubelet gave the GPU to.
      if (a.pod_name.empty()) a.pod_name = a.pod_name_for_kubectl = a.pod;
      a.command = "(allocated to " + a.pod_name + ")";
    } else if (auto c = in.commands.find(session.command_id); c != in.commands.end()) {
      a.command = c->second;
    }
    a.ongoing = session.open && in.data_end_ms && session.end_ms >= *in.data_end_ms;
    a.idle_held_cost = PriceOf(gpu, session.idle_held_share_ms);
    a.advice = Advice(a);
    s->actions.push_back(std::move(a));
  }
  std::sort(s->actions.begin(), s->actions.end(), [](const ActionRow& a, const ActionRow& b) {
    return std::make_tuple(-a.idle_held_cost, -a.session.idle_held_share_ms, a.session.start_ms,
                           a.session.gpu_id, a.session.pid) <
           std::make_tuple(-b.idle_held_cost, -b.session.idle_held_share_ms, b.session.start_ms,
                           b.session.gpu_id, b.session.pid);
  });
}

// An inference server, by its process name.
bool IsInferenceServer(const std::string& command) {
  // Process names as /proc shows them (15 characters: "triton_python_b" is Triton's Python
  // backend stub).
  for (const char* n : {"triton", "vllm", "text-generation", "uvicorn", "gunicorn", "torchserve",
                        "sglang", "ollama"}) {
    if (command.find(n) != std::string::npos) return true;
  }
  return false;
}

// What kind of holder a process name is, and the one step that fits it.
std::pair<std::string, std::string> KindOf(const ActionRow& a, const std::string& who,
                                           bool ongoing) {
  const std::string& command = a.command;
  const int64_t gpu_index = a.gpu_index;
  auto has = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      if (command.find(n) != std::string::npos) return true;
    }
    return false;
  };
  const std::string now =
      ongoing ? fmt::format(" Now: check `nvidia-smi -i {}` and ask {} to free it.", gpu_index, who)
              : "";
  if (a.session.allocation()) {
    return {"allocated pod",
            fmt::format(
                "the pod asked for a GPU and runs nothing on it: release the GPU when the work is "
                "done (Jobs: activeDeadlineSeconds, ttlSecondsAfterFinished), scale idle "
                "deployments to zero (KEDA), or cull idle notebook pods.{}",
                ongoing ? fmt::format(" Now: `kubectl delete pod -n {}`, or scale its owner down.",
                                      a.pod_name_for_kubectl)
                        : "")};
  }
  if (has({"ipykernel", "jupyter"})) {
    return {"notebook", fmt::format("ask {} to shut kernels down when done, or set an idle "
                                    "timeout (Jupyter MappingKernelManager.cull_idle_timeout, "
                                    "e.g. 1 h) so the kernel frees its GPU memory.{}",
                                    who, now)};
  }
  if (IsInferenceServer(command)) {
    return {"inference server",
            fmt::format("an inference server idles between requests: scale it to zero off-hours "
                        "(autoscaling on request rate), or share the GPU (MIG, MPS) with other "
                        "replicas.{}",
                        now)};
  }
  if (has({"bash", "zsh", "sh", "tmux", "screen", "fish"}) && command.size() <= 6) {
    return {
        "interactive shell",
        fmt::format("a shell kept a GPU process alive: ask {} to end it when the session ends.{}",
                    who, now)};
  }
  if (!a.slurm_job.empty()) {
    return {"Slurm job",
            fmt::format("Slurm job {} keeps its GPU allocation while idle: end the batch script "
                        "when the work ends (scancel an interactive salloc when done; give "
                        "interactive partitions a short time limit).{}",
                        a.slurm_job, now)};
  }
  if (!a.pod.empty()) {
    return {"Kubernetes pod", fmt::format("the pod keeps its GPU while idle: let Jobs finish "
                                          "(activeDeadlineSeconds, ttlSecondsAfterFinished), "
                                          "scale idle deployments to zero (KEDA), or cull idle "
                                          "notebook pods.{}",
                                          now)};
  }
  if (has({"python", "torchrun", "accelerate", "deepspeed", "srun"})) {
    return {"batch job", fmt::format("the job stopped computing but kept its memory: ask {} to "
                                     "exit when training ends (no trailing evaluation on an idle "
                                     "GPU, checkpoint and exit instead of waiting).{}",
                                     who, now)};
  }
  return {"process",
          fmt::format("ask {} why the process keeps GPU memory while idle.{}", who, now)};
}

void BuildHabits(const HistoryInput& in, HistorySummary* s) {
  const int64_t kDay = 86'400'000;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const ActionRow*>> by;
  for (const ActionRow& a : s->actions) by[{a.user, a.command, a.gpu_uuid}].push_back(&a);
  for (const auto& [key, rows] : by) {
    HabitRow h;
    h.user = rows.front()->user;
    h.command = rows.front()->command;
    if (rows.front()->session.allocation()) h.pod_name = rows.front()->pod_name;
    h.gpu_index = rows.front()->gpu_index;
    h.gpu_uuid = rows.front()->gpu_uuid;
    h.window_days = static_cast<int>((in.until_ms - in.since_ms + kDay - 1) / kDay);
    std::set<int64_t> days;
    std::map<int, int> start_hours;
    std::vector<int64_t> stretches;
    for (const ActionRow* a : rows) {
      ++h.sessions;
      h.idle_held_ms += a->session.idle_held_share_ms;
      h.idle_held_cost += a->idle_held_cost;
      h.ongoing = h.ongoing || a->ongoing;
      days.insert(a->session.idle_streak_max_start_ms / kDay);
      ++start_hours[static_cast<int>(a->session.idle_streak_max_start_ms % kDay / 3'600'000)];
      stretches.push_back(a->session.idle_streak_max_ms);
    }
    h.days = static_cast<int>(days.size());
    int best = 0;
    for (const auto& [hour, n] : start_hours) {
      if (n > best) {
        best = n;
        h.typical_start_hour = hour;
      }
    }
    std::sort(stretches.begin(), stretches.end());
    h.typical_stretch_ms = stretches[stretches.size() / 2];
    const std::string who = h.user.empty() ? "the owner" : h.user;
    std::tie(h.kind, h.advice) = KindOf(*rows.front(), who, h.ongoing);
    s->habits.push_back(std::move(h));
  }
  std::sort(s->habits.begin(), s->habits.end(), [](const HabitRow& a, const HabitRow& b) {
    return std::make_tuple(-a.idle_held_cost, -a.idle_held_ms, a.gpu_index, a.user, a.command) <
           std::make_tuple(-b.idle_held_cost, -b.idle_held_ms, b.gpu_index, b.user, b.command);
  });
}

// The history knows who held each GPU: a steadily low GPU held by an inference server gets the
// advice for one (batching, autoscaling, sharing), not the training advice (batch size, AMP).
void AdviseByHolder(const HistoryInput& in, HistorySummary* s) {
  std::map<uint32_t, std::map<std::string, int64_t>> held;  // GPU id -> command -> held ms
  for (const SessionRecord& x : in.sessions) {
    auto c = in.commands.find(x.command_id);
    if (c != in.commands.end()) held[x.gpu_id][c->second] += x.held_ms;
  }
  auto main_command = [&](unsigned row) -> std::string {
    if (row >= s->gpus.size()) return "";
    const auto& by = held[s->gpus[row].gpu.id];
    std::string best;
    int64_t most = 0;
    for (const auto& [command, ms] : by) {
      if (ms > most) {
        most = ms;
        best = command;
      }
    }
    return best;
  };
  for (Finding& f : s->findings) {
    if (f.id != "steady_underutilization" || f.gpus.empty()) continue;
    bool serving = true;
    std::string command;
    for (unsigned g : f.gpus) {
      command = main_command(g);
      serving = serving && IsInferenceServer(command);
    }
    if (!serving) continue;
    f.recommendation = fmt::format(
        "GPU {} serve{} inference ({}) at {:.0f} % on average: the load follows the requests. "
        "Batch requests on the server (dynamic batching, continuous batching), autoscale replicas "
        "on request rate (down to zero off-hours), or pack several models or replicas onto the "
        "GPU with MIG instances or CUDA MPS.",
        f.gpu_names.empty() ? "?" : [&] {
          std::string names;
          for (const std::string& n : f.gpu_names) names += (names.empty() ? "" : ",") + n;
          return names;
        }(), f.gpus.size() == 1 ? "s" : "", command, f.observed);
    f.remediations = {"larger_batch", "mig", "cuda_mps"};
  }
}

int64_t IdleMsOf(const GpuUsage& u) {
  return u.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)] +
         u.phase_ms[static_cast<size_t>(Phase::kIdleHeld)];
}

// `ms` of a GPU at `per_hour` (0 when unpriced), before rounding to cents.
MicroUsd PriceOf(const std::optional<MicroUsd>& per_hour, int64_t ms) {
  return per_hour ? CostOf(*per_hour, ms) : 0;
}

// The summary's idle cost split over `rows` (days, hosts) in proportion to `parts`, in cents
// allocated once: the rows add up to it.
template <typename Row>
void AllocateIdleCost(const HistorySummary& s, const std::vector<MicroUsd>& parts,
                      std::vector<Row>* rows) {
  if (!s.cost.priced || parts.empty()) return;
  const std::vector<int64_t> cents = AllocateCents(parts, s.idle_cost);
  for (size_t i = 0; i < cents.size(); ++i) (*rows)[i].idle_cost = cents[i] * kMicroPerCent;
}

void BuildIdleByDay(const HistoryInput& in, HistorySummary* s) {
  if (!in.heatmap_hours.empty()) return;  // hours that stand for longer spans
  std::map<uint32_t, std::optional<MicroUsd>> price;
  for (const HistoryGpuRow& g : s->gpus) price[g.gpu.id] = g.price.per_gpu_hour;
  std::map<int64_t, IdleDay> days;
  std::map<int64_t, MicroUsd> cost_parts;
  for (const HourBucket& b : in.hours) {
    const int64_t day = b.hour * kHourMs / kDayMs * kDayMs;
    IdleDay& d = days[day];
    d.day_start_ms = day;
    for (const auto& [gpu_id, hour] : b.gpus) {
      const int64_t idle = IdleMsOf(hour.usage);
      d.idle_ms += idle;
      if (auto p = price.find(gpu_id); p != price.end())
        cost_parts[day] += PriceOf(p->second, idle);
    }
  }
  std::vector<MicroUsd> parts;
  for (auto& [day, d] : days) {
    parts.push_back(cost_parts[day]);
    s->idle_by_day.push_back(d);
  }
  AllocateIdleCost(*s, parts, &s->idle_by_day);
}

void BuildIdleByHost(HistorySummary* s) {
  std::map<std::string, IdleHost> hosts;
  std::map<std::string, MicroUsd> cost_parts;
  for (const HistoryGpuRow& g : s->gpus) {
    if (g.gpu.host.empty()) return;  // one host's database
    IdleHost& h = hosts[g.gpu.host];
    h.host = g.gpu.host;
    ++h.gpus;
    const int64_t idle = IdleMsOf(g.totals.usage);
    h.idle_ms += idle;
    cost_parts[g.gpu.host] += PriceOf(g.price.per_gpu_hour, idle);
  }
  std::vector<MicroUsd> parts;
  for (auto& [name, h] : hosts) {
    parts.push_back(cost_parts[name]);
    s->idle_by_host.push_back(h);
  }
  AllocateIdleCost(*s, parts, &s->idle_by_host);
}

void BuildHeatmap(const HistoryInput& in, const HistoryOptions& o, HistorySummary* s) {
  std::array<int64_t, 7 * 24> util{}, known{};
  auto add = [&](int64_t hour, const GpuUsage& u) {
    const int slot = o.slot_of_hour ? o.slot_of_hour(hour) : UtcSlot(hour);
    if (slot < 0 || slot >= 7 * 24) return;
    util[slot] += u.util_ms_x100;
    known[slot] += u.KnownMs();
  };
  if (!in.heatmap_hours.empty()) {
    for (const auto& [hour, u] : in.heatmap_hours) add(hour, u);
  } else {
    for (const HourBucket& b : in.hours) {
      for (const auto& [id, g] : b.gpus) add(b.hour, g.usage);
    }
  }
  for (int slot = 0; slot < 7 * 24; ++slot) {
    if (known[slot] > 0) {
      s->heatmap[slot / 24][slot % 24] =
          static_cast<double>(util[slot]) / static_cast<double>(known[slot]);
    }
  }
}

}  // namespace

int64_t WhoRow::AttributedMs() const {
  int64_t sum = attributed_unknown_ms;
  for (int64_t ms : attributed_ms) sum += ms;
  return sum;
}

const char* HistoryByName(HistoryBy by) {
  switch (by) {
    case HistoryBy::kUser:
      return "user";
    case HistoryBy::kProject:
      return "project";
    case HistoryBy::kTeam:
      return "team";
    case HistoryBy::kPod:
      return "pod";
    case HistoryBy::kHost:
      return "host";
    case HistoryBy::kSlurmJob:
      return "slurm_job";
    case HistoryBy::kAccount:
      return "account";
    case HistoryBy::kNamespace:
      return "namespace";
    case HistoryBy::kContainer:
      return "container";
  }
  return "";
}

std::optional<HistoryBy> ParseHistoryBy(std::string_view text) {
  for (HistoryBy by :
       {HistoryBy::kUser, HistoryBy::kProject, HistoryBy::kTeam, HistoryBy::kPod, HistoryBy::kHost,
        HistoryBy::kSlurmJob, HistoryBy::kAccount, HistoryBy::kNamespace, HistoryBy::kContainer}) {
    if (text == HistoryByName(by)) return by;
  }
  return std::nullopt;
}

namespace {

// The estimate's showback allocates each holder's cents once (largest remainder over the total):
// the "Who" table shows the same cents, so a holder costs one figure in every table.
void ShowWhoInShowbackCents(HistorySummary* s) {
  const Showback& b = s->showback;
  if (!b.estimate || b.policy.kind != IdleCostPolicy::Kind::kUnallocated) {
    // Who is not Showback's split then (Showback spreads the idle cost, or a bill): its own
    // cents, allocated once over its rows and the unattributed part, so that they add up to the
    // total to the cent (issue 57, 4: $1,956.61 against $1,956.60 with --idle-cost proportional).
    if (!s->cost.priced) return;
    std::vector<MicroUsd> parts;
    for (const WhoRow& w : s->who) parts.push_back(w.cost);
    parts.push_back(s->unattributed_cost);
    const std::vector<int64_t> cents = AllocateCents(parts, s->cost.total);
    for (size_t i = 0; i < s->who.size(); ++i) s->who[i].cost = cents[i] * kMicroPerCent;
    s->unattributed_cost = cents.back() * kMicroPerCent;
    return;
  }
  if (s->cost.priced) s->unattributed_cost = b.idle_cents * kMicroPerCent;
  for (WhoRow& w : s->who) {
    const std::string key = w.key.empty() ? "(unknown)" : w.key;
    for (const ShowbackRow& row : b.rows) {
      if (row.key == key) w.cost = row.cents * kMicroPerCent;
    }
  }
}

// The right-size plan's rows and findings (--plan): identities named as --by names them (with
// their id where two share a name), each one's attributed time read from the window's hours.
void AddPlan(const HistoryInput& in, const HistoryOptions& o, HistorySummary* s) {
  PlanContext c;
  c.input = &*in.plan;
  c.gpus = &in.gpus;
  for (size_t i = 0; i < s->gpus.size(); ++i) {
    c.report_gpus.push_back({s->gpus[i].gpu.id, s->gpus[i].label, s->usage.gpus[i].KnownMs(),
                             s->usage.gpus[i].util_ms_x100 / 100});
  }
  std::map<std::string, int> uses;
  for (const auto& [id, identity] : in.identities) ++uses[HistoryKey(o.by, identity, in.hostname)];
  for (const auto& [id, identity] : in.identities) {
    std::string key = HistoryKey(o.by, identity, in.hostname);
    if (key.empty()) key = "(unknown)";
    c.identity_names[id] = uses[HistoryKey(o.by, identity, in.hostname)] > 1
                               ? fmt::format("{} [identity {}]", key, id)
                               : key;
  }
  for (const HourBucket& b : in.hours) {
    for (const auto& [key, h] : b.identities) c.attributed_ms[key] += h.AttributedMs();
  }
  c.known_ms = s->usage.KnownMs();
  c.command_names = in.commands;
  // The catalog's priced models with a throughput figure, and each GPU's own model in it.
  const PriceCatalog& catalog = o.catalog != nullptr ? *o.catalog : BuiltinCatalog();
  for (const GpuModelPrice& m : catalog.gpu_models) {
    const std::optional<double> tflops = DenseTensorTflops(m.model);
    if (!tflops || !m.memory_gb || !m.on_demand.median) continue;
    c.skus.push_back({m.model, m.label, static_cast<uint64_t>(*m.memory_gb) * 1024, *tflops,
                      *m.on_demand.median});
  }
  for (const GpuRecord& g : in.gpus) {
    std::string why;
    if (const GpuModelPrice* m = FindModel(catalog, g.name, g.mem_total_mib, &why)) {
      c.catalog_model[g.id] = m->model;
    }
  }
  s->plan = BuildPlan(c, &s->findings);
  std::stable_sort(s->findings.begin(), s->findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
}

void ReconcileIdleHeld(HistorySummary* s) {
  IdleHeldParts& p = s->idle_held;
  p = SplitIdleHeld(s->usage);
  for (const ActionRow& a : s->actions) p.in_actions_ms += a.session.idle_held_share_ms;
}

}  // namespace

Result<HistorySummary> SummarizeHistory(const HistoryInput& in, const HistoryOptions& o) {
  HistorySummary s;
  s.since_ms = in.since_ms;
  s.until_ms = in.until_ms;
  s.hostname = in.hostname;
  s.by = o.by;
  s.tz_name = o.tz_name;
  s.notes = in.notes;
  s.idle_held_min_ms = o.idle_held_min_ms;
  CGOV_RETURN_IF_ERROR(BuildGpuRows(in, o, &s));
  for (const PolicyActionRecord& a : in.policy_actions) {
    HistorySummary::PolicyAction& row = s.policy_actions.emplace_back();
    row.record = a;
    for (const GpuRecord& g : in.gpus) {
      if (g.id == a.gpu_id) row.gpu_index = static_cast<int>(g.index);
    }
  }
  std::vector<ResolvedPrice> prices;
  s.gpu_count = s.gpus.size();
  for (const HistoryGpuRow& g : s.gpus) {
    s.usage.gpus.push_back(g.totals.usage);
    GpuUsage& u = s.usage.gpus.back();
    for (const GpuEventRecord& e : in.events) {
      if (e.kind != "xid" || e.gpu_id != g.gpu.id) continue;
      if (u.xid_errors++ == 0) u.first_xid_ms = std::max<int64_t>(0, e.ts_ms - in.since_ms);
      u.last_xid = static_cast<uint32_t>(e.code);
    }
    s.usage.gap_ms += g.totals.gap_ms;
    s.usage.covered_ms = std::max(s.usage.covered_ms, g.totals.usage.HeldMs());
    prices.push_back(g.price);
  }
  s.usage.interval_ms = in.interval_ms;
  s.phase_ms = s.usage.PhaseMs();
  s.phase_share_pct = SharesPct(s.phase_ms);
  s.cost = ComputeCost(s.usage, prices, std::nullopt, "");
  for (const HistoryGpuRow& g : s.gpus) {
    const int64_t idle = g.totals.usage.phase_ms[static_cast<size_t>(Phase::kTrulyIdle)] +
                         g.totals.usage.phase_ms[static_cast<size_t>(Phase::kIdleHeld)];
    s.idle_ms += idle;
  }
  // Each GPU's cost in cents that add up to the total's (one allocation, every view).
  if (s.cost.priced) {
    std::vector<MicroUsd> parts;
    for (const HistoryGpuRow& g : s.gpus) parts.push_back(g.cost);
    const std::vector<int64_t> cents = AllocateCents(parts, s.cost.total);
    for (size_t i = 0; i < s.gpus.size(); ++i) s.gpus[i].cost = cents[i] * kMicroPerCent;
  }
  // Idle is the truly idle and idle-held phases: their cents, as allocated once.
  s.idle_cost = AddUsd(s.cost.phase_cost[static_cast<size_t>(Phase::kTrulyIdle)],
                       s.cost.phase_cost[static_cast<size_t>(Phase::kIdleHeld)]);
  s.energy = EnergyBlock::Of(s.usage, o.grid_g_per_kwh);
  s.energy.price_per_kwh = o.energy_price_per_kwh;
  if (s.usage.KnownMs() > 0) {
    s.idle_pct = 100.0 * static_cast<double>(s.idle_ms) / static_cast<double>(s.usage.KnownMs());
  }
  if (s.usage.covered_ms > 0) {
    s.mean_idle_gpus = static_cast<double>(s.idle_ms) / static_cast<double>(s.usage.covered_ms);
  }
  BuildWho(in, UsesDataPrices(o), &s);
  BuildActions(in, o.idle_held_min_ms, &s);
  BuildHabits(in, &s);
  s.sessions_known = in.has_sessions;
  BuildHeatmap(in, o, &s);
  BuildIdleByDay(in, &s);
  BuildIdleByHost(&s);
  std::vector<std::string> names;                   // as the per-GPU table names them
  std::vector<std::optional<MemoryHealth>> health;  // as last recorded before the window's end
  for (const HistoryGpuRow& g : s.gpus) {
    names.push_back(g.label);
    health.emplace_back();
    for (const GpuEventRecord& e : in.memory_health) {
      if (e.gpu_id == g.gpu.id) health.back() = DecodeMemoryHealth(e.code);
    }
  }
  s.findings = Recommend(s.usage, s.cost, prices, o.phases, names, health);
  AdviseByHolder(in, &s);
  if (in.plan) AddPlan(in, o, &s);
  s.savings = CombineSavings(s.findings, s.cost, s.usage, names);
  SpendFractionsOntoFindings(s.savings, &s.findings);
  if (in.plan) PricePlan(s.savings, s.cost, &s.plan);
  s.showback = EstimateShowback(s, o.idle_cost);
  ShowWhoInShowbackCents(&s);
  ReconcileIdleHeld(&s);
  return s;
}

Result<std::map<uint32_t, MicroUsd>> GpuHourlyPrices(const HistoryInput& in,
                                                     const HistoryOptions& options) {
  std::set<uint32_t> sampled;
  for (const HourBucket& b : in.hours) {
    for (const auto& [id, g] : b.gpus) {
      if (g.samples > 0) sampled.insert(id);
    }
  }
  const PriceCatalog& catalog = options.catalog != nullptr ? *options.catalog : BuiltinCatalog();
  std::map<uint32_t, MicroUsd> prices;
  for (const GpuRecord& gpu : in.gpus) {
    if (!sampled.count(gpu.id)) continue;
    CGOV_ASSIGN_OR_RETURN(ResolvedPrice price, GpuPrice(in, options, gpu, catalog));
    if (price.per_gpu_hour) prices[gpu.id] = *price.per_gpu_hour;
  }
  return prices;
}

}  // namespace cgov
