// Reads the right-size plan's input from a history database: every raw tick of the window,
// twice (analysis/rightsize.h: the loads, then the replay of the packings they suggest). Its
// cost follows the window's ticks, not its hours: `cgov report --plan` asks for it.
#ifndef CGOV_APP_HISTORY_PLAN_LOAD_H_
#define CGOV_APP_HISTORY_PLAN_LOAD_H_

#include "analysis/rightsize.h"
#include "store/history_store.h"

namespace cgov {

Result<PlanInput> LoadPlan(const HistoryStore& store, int64_t since_ms, int64_t until_ms,
                           const PlanOptions& options);

}  // namespace cgov

#endif  // CGOV_APP_HISTORY_PLAN_LOAD_H_
