// The fleet report's input: what every `cgov daemon --listen` that Prometheus scraped says about
// a window, read with increase() over our counters (docs/metrics.md), in the same HistoryInput
// the SQLite report reads, so both render the same sections from the same summary.
//
// Prometheus' increase() extrapolates each series to the window's edges (by at most half a scrape
// interval, never past a counter's zero): fleet totals can differ from the hosts' own databases
// by about one scrape interval per GPU. Sessions are not in Prometheus (no action list).
#ifndef CGOV_CLI_FLEET_LOAD_H_
#define CGOV_CLI_FLEET_LOAD_H_

#include "analysis/history_summary.h"
#include "store/prometheus_source.h"

namespace cgov::cli {

Result<HistoryInput> LoadFleet(const PrometheusSource& prometheus, int64_t since_ms,
                               int64_t until_ms);

}  // namespace cgov::cli

#endif  // CGOV_CLI_FLEET_LOAD_H_
