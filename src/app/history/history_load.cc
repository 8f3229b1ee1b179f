#include "app/history/history_load.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/history_aggregator.h"
#include "app/history/history_writer.h"
#include "core/text.h"
#include "core/time_format.h"

namespace cgov {
namespace {

int64_t FloorHour(int64_t ms) { return ms >= 0 ? ms / kHourMs : (ms - kHourMs + 1) / kHourMs; }
int64_t CeilHour(int64_t ms) { return FloorHour(ms + kHourMs - 1); }

using Runs = std::map<uint32_t, RunRecord>;

// Feeds the ticks of [from_ms, to_ms) to `aggregator`; the last one is closed at end_ms.
Status Replay(const HistoryStore& store, const Runs& runs, int64_t from_ms, int64_t to_ms,
              int64_t end_ms, HistoryAggregator* aggregator) {
  CGOV_RETURN_IF_ERROR(store.ForEachTick(
      from_ms, to_ms, [&](int64_t ts, uint32_t run_id, const StoredTick& tick) -> Status {
        auto run = runs.find(run_id);
        if (run == runs.end()) {
          return InvalidArgument(fmt::format("{}: tick {} names run {}, which does not exist",
                                             store.path(), ts, run_id));
        }
        aggregator->Add(ts, run->second, tick);
        return Status::Ok();
      }));
  aggregator->Finish(end_ms);
  return Status::Ok();
}

Status AddRaw(const HistoryStore& store, const Runs& runs, int64_t from_ms, int64_t to_ms,
              int64_t end_ms, const PhaseThresholds& phases, std::map<int64_t, HourBucket>* hours) {
  if (from_ms >= to_ms) return Status::Ok();
  HistoryAggregator aggregator(phases);
  CGOV_RETURN_IF_ERROR(Replay(store, runs, from_ms, to_ms, end_ms, &aggregator));
  for (HourBucket& b : aggregator.TakeCompleteHours()) {
    HourBucket& into = (*hours)[b.hour];
    into.hour = b.hour;
    MergeInto(b, &into);
  }
  return Status::Ok();
}

Status AddRollups(const HistoryStore& store, int64_t from_hour, int64_t to_hour,
                  std::map<int64_t, HourBucket>* hours) {
  for (bool identities : {false, true}) {
    Status read =
        store.ForEachRollup(from_hour, to_hour, identities, [&](const RollupRow& row) -> Status {
          HourBucket& b = (*hours)[row.hour];
          b.hour = row.hour;
          const std::string context =
              fmt::format("{}: rollup hour {} gpu {}", store.path(), row.hour, row.gpu_id);
          if (!identities) return DecodeGpuHour(row.data, context, &b.gpus[row.gpu_id]);
          IdentityHour h;
          CGOV_RETURN_IF_ERROR(DecodeIdentityHour(row.data, context, &h));
          MergeInto(h, &b.identities[{row.identity_id, row.gpu_id}]);
          return Status::Ok();
        });
    CGOV_RETURN_IF_ERROR(read);
  }
  return Status::Ok();
}

// Stored sessions, brought up to date with the ticks after the watermark.
Status LoadSessions(const HistoryStore& store, const Runs& runs, int64_t since_ms, int64_t until_ms,
                    const PhaseThresholds& phases, HistoryInput* in) {
  std::map<std::tuple<int64_t, uint32_t, uint32_t>, SessionRecord> sessions;
  CGOV_ASSIGN_OR_RETURN(std::vector<SessionRecord> stored, store.Sessions(since_ms, until_ms));
  for (const SessionRecord& s : stored) sessions[{s.start_ms, s.gpu_id, s.pid}] = s;
  const int64_t watermark = store.watermark_ms();
  if (until_ms > watermark) {
    HistoryAggregator aggregator(phases);
    CGOV_ASSIGN_OR_RETURN(std::vector<SessionRecord> open, store.OpenSessions());
    aggregator.SeedSessions(open);
    CGOV_RETURN_IF_ERROR(Replay(store, runs, watermark, until_ms, until_ms, &aggregator));
    for (const SessionRecord& s : aggregator.AllSessions()) {
      sessions[{s.start_ms, s.gpu_id, s.pid}] = s;
    }
  }
  for (const auto& [key, s] : sessions) {
    if (s.end_ms > since_ms && s.start_ms < until_ms) in->sessions.push_back(s);
  }
  return Status::Ok();
}

Status Load(HistoryStore& store, int64_t since_ms, int64_t until_ms, const PhaseThresholds& phases,
            HistoryInput* in) {
  in->since_ms = since_ms;
  in->until_ms = until_ms;
  CGOV_ASSIGN_OR_RETURN(in->hostname, store.Meta("hostname"));
  CGOV_ASSIGN_OR_RETURN(std::string instance_id, store.Meta("instance_id"));
  if (!instance_id.empty()) in->resource_hosts[instance_id] = in->hostname;
  CGOV_ASSIGN_OR_RETURN(in->gpus, store.Gpus());
  CGOV_ASSIGN_OR_RETURN(in->identities, store.Identities());
  CGOV_ASSIGN_OR_RETURN(in->commands, store.Commands());
  CGOV_ASSIGN_OR_RETURN(in->events, store.Events(since_ms, until_ms));
  CGOV_ASSIGN_OR_RETURN(in->memory_health, store.LatestEvents("memory_health", until_ms));
  CGOV_ASSIGN_OR_RETURN(in->policy_actions, store.PolicyActions(since_ms, until_ms));
  // The daemon's price of each GPU as of the window's end, as the fleet report reads it from
  // /metrics. One it could not price is left to the report's own resolution.
  CGOV_ASSIGN_OR_RETURN(Runs runs, store.Runs());
  // Who recorded the prices: the daemon, or `cgov run --db` when only runs wrote this database.
  const bool runs_only = !runs.empty() && std::all_of(runs.begin(), runs.end(), [](const auto& r) {
    return r.second.source == "cgov run";
  });
  // The recorders that could have written the window: a run lasts until the next one starts.
  for (auto it = runs.begin(); it != runs.end(); ++it) {
    const RunRecord& run = it->second;
    const auto next = std::next(it);
    const bool ended_before = next != runs.end() && next->second.started_ms <= since_ms;
    if (run.started_ms >= until_ms || ended_before) continue;
    in->interval_ms = std::max(in->interval_ms, run.interval_ms);
    CGOV_ASSIGN_OR_RETURN(std::string unreadable, store.Meta(EnvironMetaKey(run.id)));
    if (!unreadable.empty()) {
      in->notes.push_back(fmt::format("the recorder of this window from {} was {}",
                                      FormatMinuteUtc(run.started_ms), SafeText(unreadable)));
    }
  }
  CGOV_ASSIGN_OR_RETURN(auto prices, store.PricesAt(until_ms));
  for (const auto& [id, record] : prices) {
    if (!record.micro_usd) continue;
    ResolvedPrice price = PriceOfRecord(record);
    price.source = fmt::format("{} on {}: {}", runs_only ? "cgov run" : "the daemon",
                               in->hostname.empty() ? "this host" : in->hostname, record.source);
    in->gpu_prices[id] = std::move(price);
  }
  CGOV_ASSIGN_OR_RETURN(auto range, store.TickRange());
  CGOV_ASSIGN_OR_RETURN(in->data_end_ms, DataEndMs(store));
  const int64_t watermark_hour = FloorHour(store.watermark_ms());
  int64_t from_hour = CeilHour(since_ms);
  const int64_t to_hour = std::min(FloorHour(until_ms), watermark_hour);
  std::map<int64_t, HourBucket> hours;
  if (from_hour < to_hour) {
    // Raw samples before the window's first whole hour may have been pruned (--retain): then
    // that hour comes from its rollup, whole. A history that merely starts later has its raw
    // samples from its start, and needs neither.
    CGOV_ASSIGN_OR_RETURN(std::optional<int64_t> pruned_before, store.RawPrunedBeforeMs());
    const bool pruned =
        since_ms < from_hour * kHourMs && pruned_before && *pruned_before > since_ms;
    if (pruned && FloorHour(since_ms) < to_hour) {
      from_hour = FloorHour(since_ms);
      in->notes.push_back(fmt::format(
          "raw samples before {} were pruned (--retain): the window starts at {}, the start of "
          "that hour",
          FormatRfc3339Utc((range ? range->first : until_ms) * 1'000'000),
          FormatRfc3339Utc(from_hour * kHourMs * 1'000'000)));
    } else {
      CGOV_RETURN_IF_ERROR(AddRaw(store, runs, since_ms, from_hour * kHourMs,
                                  from_hour * kHourMs + kHourMs, phases, &hours));
    }
    CGOV_RETURN_IF_ERROR(AddRollups(store, from_hour, to_hour, &hours));
    CGOV_RETURN_IF_ERROR(
        AddRaw(store, runs, to_hour * kHourMs, until_ms, until_ms, phases, &hours));
  } else {
    CGOV_RETURN_IF_ERROR(AddRaw(store, runs, since_ms, until_ms, until_ms, phases, &hours));
  }
  for (auto& [hour, bucket] : hours) in->hours.push_back(std::move(bucket));
  return LoadSessions(store, runs, since_ms, until_ms, phases, in);
}

}  // namespace

Result<std::optional<int64_t>> DataEndMs(const HistoryStore& store) {
  CGOV_ASSIGN_OR_RETURN(auto range, store.TickRange());
  if (!range) return std::optional<int64_t>();
  CGOV_ASSIGN_OR_RETURN(Runs runs, store.Runs());
  int64_t interval = 0;
  CGOV_RETURN_IF_ERROR(store.ForEachTick(range->second, range->second + 1,
                                         [&](int64_t, uint32_t run, const StoredTick&) {
                                           interval = runs[run].interval_ms;
                                           return Status::Ok();
                                         }));
  return std::optional<int64_t>(range->second + interval);
}

Result<HistoryInput> LoadHistory(HistoryStore& store, int64_t since_ms, int64_t until_ms,
                                 const PhaseThresholds& phases) {
  CGOV_RETURN_IF_ERROR(store.BeginSnapshot());
  HistoryInput in;
  Status loaded = Load(store, since_ms, until_ms, phases, &in);
  store.EndSnapshot();
  if (!loaded.ok()) return loaded;
  return in;
}

}  // namespace cgov
