#include "app/history/plan_load.h"

#include <fmt/format.h>

namespace cgov {
namespace {

// Feeds each tick of the window to `add` with its run.
template <class Add>
Status EachTick(const HistoryStore& store, const std::map<uint32_t, RunRecord>& runs,
                int64_t since_ms, int64_t until_ms, Add add) {
  return store.ForEachTick(
      since_ms, until_ms, [&](int64_t ts, uint32_t run_id, const StoredTick& tick) -> Status {
        auto run = runs.find(run_id);
        if (run == runs.end()) {
          return InvalidArgument(fmt::format("{}: tick {} names run {}, which does not exist",
                                             store.path(), ts, run_id));
        }
        add(ts, run->second, tick);
        return Status::Ok();
      });
}

}  // namespace

Result<PlanInput> LoadPlan(const HistoryStore& store, int64_t since_ms, int64_t until_ms,
                           const PlanOptions& options) {
  PlanInput in;
  in.options = options;
  // Raw ticks pruned (--retain) from inside the window: the plan covers only what is kept.
  CGOV_ASSIGN_OR_RETURN(std::optional<int64_t> pruned, store.RawPrunedBeforeMs());
  if (pruned && *pruned > since_ms) in.raw_pruned_before_ms = pruned;
  CGOV_ASSIGN_OR_RETURN(auto runs, store.Runs());
  CGOV_ASSIGN_OR_RETURN(std::vector<GpuRecord> gpus, store.Gpus());
  PlanProfiler profiler;
  CGOV_RETURN_IF_ERROR(EachTick(store, runs, since_ms, until_ms,
                                [&](int64_t ts, const RunRecord& run, const StoredTick& tick) {
                                  profiler.Add(ts, run, tick);
                                }));
  profiler.Finish(until_ms);
  in.profile = profiler.profile();
  in.groups = PackGroups(in.profile, gpus, options);
  bool any = false;
  for (const PlanGroup& g : in.groups) any = any || !g.candidates.empty();
  if (!any) return in;  // nothing frees a GPU: no packing to replay
  PlanReplay replay(&in.groups, options);
  CGOV_RETURN_IF_ERROR(EachTick(store, runs, since_ms, until_ms,
                                [&](int64_t ts, const RunRecord& run, const StoredTick& tick) {
                                  replay.Add(ts, run, tick);
                                }));
  replay.Finish(until_ms);
  return in;
}

}  // namespace cgov
