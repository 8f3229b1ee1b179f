// The fleet report's input: what every `cgov daemon --listen` that Prometheus scraped says about
// a window, read from our counters (docs/metrics.md), in the same HistoryInput the SQLite report
// reads, so both render the same sections from the same summary.
//
// A window's figure is the difference of scraped counter values (the last scrape in the window
// minus the last one before it), never extrapolated; a series that reset inside the window (a
// daemon restart) uses Prometheus' increase(). Fleet totals therefore trail the hosts' own
// databases by what was not yet scraped: up to one scrape interval plus one daemon tick per GPU
// at the window's end. Sessions are not in Prometheus (no action list).
#ifndef CGOV_CLI_FLEET_LOAD_H_
#define CGOV_CLI_FLEET_LOAD_H_

#include "analysis/history_summary.h"
#include "store/prometheus_source.h"

namespace cgov::cli {

struct FleetOptions {
  // Price each GPU at OpenCost's node_gpu_hourly_cost for its node (node == Hostname), scraped
  // into the same Prometheus, instead of the daemon's own price.
  bool opencost_prices = false;
};

Result<HistoryInput> LoadFleet(const PrometheusSource& prometheus, int64_t since_ms,
                               int64_t until_ms, FleetOptions options = {});

}  // namespace cgov::cli

#endif  // CGOV_CLI_FLEET_LOAD_H_
