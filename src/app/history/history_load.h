// Reads what a report needs of one window of a history database: hourly rollups where whole
// rolled-up hours fit the window, raw ticks (through the same aggregator) for the edges and for
// the time after the rollup watermark, and the idle-held sessions. Its cost follows the window,
// not the database size. Safe while a daemon writes (one read snapshot).
#ifndef CGOV_APP_HISTORY_HISTORY_LOAD_H_
#define CGOV_APP_HISTORY_HISTORY_LOAD_H_

#include "analysis/history_summary.h"
#include "store/history_store.h"

namespace cgov {

// The end of the data: the last tick plus its run's interval; nullopt without ticks.
Result<std::optional<int64_t>> DataEndMs(const HistoryStore& store);

Result<HistoryInput> LoadHistory(HistoryStore& store, int64_t since_ms, int64_t until_ms,
                                 const PhaseThresholds& phases);

}  // namespace cgov

#endif  // CGOV_APP_HISTORY_HISTORY_LOAD_H_
