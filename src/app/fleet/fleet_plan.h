// The right-size plan of a fleet (`cgov report --prometheus --plan`): each GPU's memory used (its
// highest in each step, so no peak between two points is missed) and compute (the step's mean
// SM activity where the daemon serves it, else utilization) as range queries, turned into ticks
// of one step each and fed to the same profiler and replay as a database's raw ticks
// (analysis/rightsize.h). The step is the scrape-free floor of 1 s, widened so that a window has
// at most 10,000 points a series and the fleet at most 1,000,000 points in all (each point held
// until the replay). Prometheus keeps no memory per process: a fleet's plan has GPUs, not
// workloads.
#ifndef CGOV_APP_FLEET_FLEET_PLAN_H_
#define CGOV_APP_FLEET_FLEET_PLAN_H_

#include "analysis/history_summary.h"
#include "analysis/rightsize.h"
#include "store/prom_query.h"

namespace cgov {

// The step a fleet plan reads at: >= 1 s, <= 10,000 steps a window, <= `point_budget` points
// for `gpus` GPUs.
int64_t FleetPlanStepMs(int64_t since_ms, int64_t until_ms, size_t gpus,
                        int64_t point_budget = 1'000'000);

// `fleet`: the fleet report's input (its GPU records, whose ids the plan uses).
Result<PlanInput> LoadFleetPlan(const PromQuery& prometheus, const HistoryInput& fleet,
                                int64_t since_ms, int64_t until_ms, const PlanOptions& options);

}  // namespace cgov

#endif  // CGOV_APP_FLEET_FLEET_PLAN_H_
