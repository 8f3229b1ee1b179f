#include "app/top/top_source.h"

#include <algorithm>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "analysis/history_aggregator.h"
#include "analysis/history_summary.h"
#include "app/history/history_load.h"
#include "app/report/history_report_service.h"
#include "core/duration.h"
#include "core/text.h"
#include "core/time_format.h"
#include "os/env.h"
#include "os/file_reader.h"
#include "store/history_store.h"

namespace cgov {
namespace {

struct RecentTick {
  int64_t ts_ms = 0;
  StoredTick tick;
};

std::string WhereOf(const IdentityRecord& id) {
  if (!id.kube_pod_name.empty()) {
    return id.kube_namespace.empty() ? id.kube_pod_name
                                     : id.kube_namespace + "/" + id.kube_pod_name;
  }
  if (!id.kube_container_name.empty()) return id.kube_container_name;
  return id.container.substr(0, 12);
}

// The GPUs as the last tick saw them, with their recent utilization.
void FillGpus(const HistoryInput& in, const HistorySummary& summary,
              const std::deque<RecentTick>& recent, TopFrame* frame) {
  const StoredTick& last = recent.back().tick;
  std::map<uint32_t, const HistoryGpuRow*> rows;
  for (const HistoryGpuRow& r : summary.gpus) rows[r.gpu.id] = &r;
  std::map<uint32_t, const GpuRecord*> records;
  for (const GpuRecord& g : in.gpus) records[g.id] = &g;
  for (size_t pos = 0; pos < last.gpus.size(); ++pos) {
    const StoredGpu& sg = last.gpus[pos];
    TopGpu g;
    if (auto it = records.find(sg.gpu_id); it != records.end()) {
      g.index = it->second->index;
      g.label = SafeText(it->second->Label());
      g.name = SafeText(it->second->name);
      if (const auto total = it->second->mem_total_mib) {
        g.mem_total_mib = static_cast<double>(*total);
      }
    }
    const GpuPoint p = StoredGpuPoint(last, pos);
    g.util_pct = p.util_pct;
    g.phase = PhaseOf(p, PhaseThresholds{});
    if (auto mem = sg.get(StoredGpuField::kMemUsedMib)) g.mem_used_mib = static_cast<double>(*mem);
    if (auto power = sg.get(StoredGpuField::kPowerDw)) g.power_w = *power / 10.0;
    for (const RecentTick& r : recent) {
      std::optional<double> u;
      for (size_t i = 0; i < r.tick.gpus.size(); ++i) {
        if (r.tick.gpus[i].gpu_id != sg.gpu_id) continue;
        if (auto util = r.tick.gpus[i].get(StoredGpuField::kUtilPct)) {
          u = static_cast<double>(*util);
        }
      }
      g.util_history.push_back(u);
    }
    if (auto it = rows.find(sg.gpu_id); it != rows.end() && it->second->price.per_gpu_hour) {
      g.price_per_hour = *it->second->price.per_gpu_hour;
      frame->cost_per_hour += *g.price_per_hour;
      if (g.phase && IsIdle(*g.phase)) frame->waste_per_hour += *g.price_per_hour;
    }
    for (const StoredProcess& proc : last.processes) {
      if (proc.gpu_pos != pos) continue;
      TopHolder h;
      h.pid = proc.pid;
      h.mem_used_mib = proc.mem_used_mib;
      if (auto id = in.identities.find(proc.identity_id); id != in.identities.end()) {
        h.user = SafeText(id->second.user);
        h.project = SafeText(id->second.project);
        h.where = SafeText(WhereOf(id->second));
      }
      if (auto cmd = in.commands.find(proc.command_id); cmd != in.commands.end()) {
        h.command = SafeText(cmd->second);
      }
      g.holders.push_back(std::move(h));
    }
    frame->gpus.push_back(std::move(g));
  }
  std::sort(frame->gpus.begin(), frame->gpus.end(),
            [](const TopGpu& a, const TopGpu& b) { return a.index < b.index; });
}

// The sessions idle-held now, with the report's kind and advice for them.
// `since_summary_ms`: how much data came after the summary; an idle stretch still running has
// grown by that much (its dollars are the summary's until the next refresh).
void FillIdleHeld(const HistorySummary& summary, int64_t since_summary_ms, TopFrame* frame) {
  for (const ActionRow& a : summary.actions) {
    if (!a.ongoing || a.session.idle_streak_ms <= 0) continue;
    TopIdleHeld i;
    i.user = SafeText(a.user);
    i.command = SafeText(a.command);
    i.pid = a.session.allocation() ? 0 : a.session.pid;
    i.gpu_index = a.gpu_index;
    i.idle_for_ms = a.session.idle_streak_ms + std::max<int64_t>(since_summary_ms, 0);
    i.idle_held_cost_today = a.idle_held_cost;
    i.advice = SafeText(a.advice);
    // The report's habit for this holder: its kind and the next step for that kind.
    for (const HabitRow& h : summary.habits) {
      if (h.user != a.user || h.command != a.command || h.gpu_index != a.gpu_index) continue;
      i.kind = h.kind;
      if (!h.advice.empty()) i.advice = SafeText(h.advice);
    }
    frame->idle_held.push_back(std::move(i));
  }
}

}  // namespace

std::string PolicyVerdict(const PolicyProcess& p, const PolicyRule* rule, int64_t idle_for_ms) {
  if (!p.uid || p.user.empty()) return "never: owner unknown";
  if (rule == nullptr) return "no policy";
  if (HasRootRights(p)) return "never: root's rights";
  const int64_t left = rule->idle_held_ms - idle_for_ms;
  if (left <= 0) return rule->name + ": due";
  return fmt::format("{} in {}", rule->name, SpanOf(left));
}

std::string PolicyStepText(const PolicyActionRecord& a) {
  return fmt::format("{} {} ({})", a.action, FormatRfc3339Utc(a.ts_ms * 1'000'000).substr(11, 5),
                     a.policy);
}

void TopSource::ReadPolicy() {
  policy_processes_.clear();
  if (!policy_) return;
  std::unique_ptr<FileReader> files_reader = Env::Default()->NewFileReader(options_.host_root);
  FileReader& files = *files_reader;
  const std::string proc_root = ProcRootUnder(options_.host_root);
  for (const ActionRow& a : day_->actions) {
    if (!a.ongoing || a.session.allocation() || a.session.pid == 0) continue;
    const uint32_t pid = a.session.pid;
    if (policy_processes_.count(pid) == 0) {
      policy_processes_[pid] = ReadPolicyProcess(files, proc_root, pid, accounts_);
    }
  }
}

void TopSource::AddPolicyVerdicts(TopFrame* frame) const {
  for (TopIdleHeld& i : frame->idle_held) {
    if (i.pid == 0) continue;
    const PolicyActionRecord* last = nullptr;
    // The same pid and command (a pid reused today by another program is another process).
    // The day's steps, loaded with the day's data.
    for (const PolicyActionRecord& a : day_input_->policy_actions) {
      if (a.pid != i.pid || SafeText(a.command) != i.command) continue;
      if (last == nullptr || a.ts_ms >= last->ts_ms) last = &a;
    }
    // A --notify ladder's step (told_user, told_lead) is followed by what the policy will do.
    const bool ladder =
        last != nullptr && (last->action == "told_user" || last->action == "told_lead");
    std::string verdict;
    if (auto p = policy_processes_.find(i.pid); policy_ && p != policy_processes_.end()) {
      verdict = PolicyVerdict(p->second, policy_->RuleFor(p->second), i.idle_for_ms);
    }
    if (last != nullptr) {
      const std::string then = ladder && !verdict.empty() ? " · " + verdict : "";
      i.policy = SafeText(PolicyStepText(*last) + then);
    } else if (!verdict.empty()) {
      i.policy = SafeText(verdict);
    }
  }
}

Result<std::unique_ptr<TopSource>> TopSource::Open(const TopSourceOptions& o) {
  std::unique_ptr<TopSource> source(new TopSource);
  source->options_ = o;
  CGOV_ASSIGN_OR_RETURN(source->store_, HistoryStore::Open(o.db, HistoryStore::Mode::kRead));
  // The options `cgov report --db` takes by default; sessions idle-held for a minute already
  // count as idle-held now.
  ReportOptions r;
  r.db = o.db;
  r.idle_held_min = "1m";
  CGOV_ASSIGN_OR_RETURN(source->history_options_, HistoryOptionsFor(r, &source->catalog_));
  if (o.policy) {
    source->policy_ = std::make_unique<PolicyEngine>(*o.policy);
    std::unique_ptr<FileReader> files_reader = Env::Default()->NewFileReader(o.host_root);
    FileReader& files = *files_reader;
    // Unreadable names leave the policies scoped by them matching no one, as in the daemon.
    source->accounts_ = ReadHostAccounts(files, nullptr);
  }
  return source;
}

Result<TopFrame> TopSource::Frame(int64_t now_mono_ms) {
  const bool due = !day_ || now_mono_ms - day_read_mono_ms_ >= options_.day_refresh_ms;
  if (due && day_) {
    // Opened again with each new day summary: a database restored or replaced under the view
    // is read from then on, not the file that was removed.
    CGOV_ASSIGN_OR_RETURN(store_, HistoryStore::Open(options_.db, HistoryStore::Mode::kRead));
  }
  CGOV_ASSIGN_OR_RETURN(std::optional<int64_t> end, DataEndMs(*store_));
  if (!end) {
    return NotFound(fmt::format("{}: no ticks yet (is `cgov daemon` writing it?)", options_.db));
  }
  // The UTC day of the last tick (data ending at midnight sharp ends the day before), summarized
  // as `cgov report --db --since DAY` would.
  const int64_t day_start = (*end - 1) - ((*end - 1) % kDayMs);
  if (due || day_->since_ms != day_start) {
    CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                          LoadHistory(*store_, day_start, *end, history_options_.phases));
    CGOV_ASSIGN_OR_RETURN(HistorySummary summary, SummarizeHistory(in, history_options_));
    day_input_ = std::move(in);
    day_ = std::move(summary);
    day_end_ms_ = *end;
    day_read_mono_ms_ = now_mono_ms;
    ReadPolicy();
  }
  TopFrame frame;
  frame.source = options_.source_name;
  frame.day_start_ms = day_start;
  frame.host = SafeText(day_->hostname);
  frame.priced = day_->cost.priced;
  frame.idle_ms_today = day_->idle_ms;
  frame.idle_cost_today = day_->idle_cost;

  // The last ticks: enough of them for the sparkline, read from a little before.
  const int64_t interval = std::max<int64_t>(day_input_->interval_ms, 100);
  std::deque<RecentTick> recent;
  CGOV_RETURN_IF_ERROR(
      store_->ForEachTick(*end - interval * static_cast<int64_t>(options_.history_ticks + 2),
                          *end + 1, [&](int64_t ts, uint32_t, const StoredTick& tick) {
                            recent.push_back({ts, tick});
                            if (recent.size() > options_.history_ticks) recent.pop_front();
                            return Status::Ok();
                          }));
  if (recent.empty()) return NotFound(fmt::format("{}: no recent ticks", options_.db));
  frame.at_ms = recent.back().ts_ms;
  FillGpus(*day_input_, *day_, recent, &frame);
  frame.SetIdleShare();
  FillIdleHeld(*day_, *end - day_end_ms_, &frame);
  AddPolicyVerdicts(&frame);
  return frame;
}

Result<TopFrame> LoadTopFrame(const TopSourceOptions& options) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<TopSource> source, TopSource::Open(options));
  return source->Frame(0);
}

}  // namespace cgov
