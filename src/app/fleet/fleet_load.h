// The fleet report's input: what every `cgov daemon --listen` that Prometheus scraped says about
// a window, read from our counters (docs/metrics.md), in the same HistoryInput the SQLite report
// reads, so both render the same sections from the same summary.
//
// A window's figure is the difference of scraped counter values (the last scrape in the window
// minus the last one before it), never extrapolated; a series that reset inside the window (a
// daemon restart) uses Prometheus' increase(). Fleet totals therefore trail the hosts' own
// databases by what was not yet scraped: up to one scrape interval plus one daemon tick per GPU
// at the window's end. Sessions are not in Prometheus (no action list).
//
// Long windows read the hourly recording rules (deploy/prometheus/cgov-rules.yml, group
// cgov-hourly) where Prometheus evaluated them: each rule sample is the same difference over the
// hour before its evaluation, so a run of consecutive evaluations adds up to the raw counters'
// difference over the run exactly, and the ragged edges and any hour Prometheus skipped come from
// the raw counters. A large fleet's GPUs then come as totals over each run (one point per
// series, whatever the window's length) and the fleet's hours as one series per phase. Where the
// daily rules (group cgov-daily) summed a whole day of a run's hours, the run's identities and
// totals read that day's one sample instead of its 24.
#ifndef CGOV_APP_FLEET_FLEET_LOAD_H_
#define CGOV_APP_FLEET_FLEET_LOAD_H_

#include <optional>
#include <string_view>

#include "analysis/history_summary.h"
#include "store/prom_query.h"

namespace cgov {

enum class RecordingRules {
  kAuto,  // windows of a day or more, where the rules were evaluated
  kOn,    // wherever they were evaluated; an error when they never were in the window
  kOff,   // the raw counters only
};

struct FleetOptions {
  // Price each GPU at OpenCost's node_gpu_hourly_cost for its node (node == Hostname), scraped
  // into the same Prometheus, instead of the daemon's own price.
  bool opencost_prices = false;
  RecordingRules rules = RecordingRules::kAuto;
  // Identities down to the pod and container (--by pod, container). Otherwise they are summed
  // by host, user, project, team and namespace in Prometheus: a window's answer then does not
  // grow with the pods that came and went in it, and over the rules it reads the owners' rules
  // (cgov:owner_*), which do not either, for the hours whose evaluation recorded them.
  bool pods = true;
  // A rule run's GPUs come by the hour while GPUs x hours stays within this many points, and as
  // totals over the run (plus the fleet's hours, for the heatmap) beyond it: a month of a large
  // fleet by GPU and hour would be tens of millions of points. Tests lower it.
  int64_t hourly_point_budget = 50'000;
};

// "auto", "on", "off".
std::optional<RecordingRules> ParseRecordingRules(std::string_view text);

Result<HistoryInput> LoadFleet(const PromQuery& prometheus, int64_t since_ms, int64_t until_ms,
                               FleetOptions options = {});

}  // namespace cgov

#endif  // CGOV_APP_FLEET_FLEET_LOAD_H_
