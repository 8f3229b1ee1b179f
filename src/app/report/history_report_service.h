// `cgov report`'s service (the flags are src/cli/report.cc's): the report of a history window,
// from one host's database (safe while the daemon writes) or the fleet's Prometheus.
#ifndef CGOV_APP_REPORT_HISTORY_REPORT_SERVICE_H_
#define CGOV_APP_REPORT_HISTORY_REPORT_SERVICE_H_

#include <functional>
#include <optional>
#include <string>

#include "analysis/history_summary.h"
#include "core/status.h"
#include "store/prometheus_source.h"

namespace cgov {

// Queries in flight at once against --prometheus: a store answers independent queries on
// several cores (Prometheus runs up to 20 at once by default, its --query.max-concurrency).
constexpr int kDefaultPrometheusParallel = 4;

struct ReportOptions {
  std::string db;
  std::string prometheus;
  std::string prometheus_tenant;           // --prometheus-tenant: X-Scope-OrgID
  std::string prometheus_timeout = "2m";   // per query
  std::optional<int> prometheus_parallel;  // --prometheus-parallel
  bool verbose = false;                    // --verbose: each Prometheus query on stderr
  std::string since = "24h";
  std::string until;  // "" = the end of the data
  std::string format = "text";
  std::string out;
  std::string by = "user";
  std::string tz = "UTC";
  std::string idle_held_min = "30m";
  std::string price;
  std::string instance_type;
  std::string catalog_path;
  bool spot = false;
  std::string billing, billing_format, billing_map, idle_cost = "unallocated";
  std::string slurm_accounting;               // sacct --parsable2 or scontrol show job output
  bool sacct = false;                         // --sacct: run sacct for the report's window
  bool opencost_prices = false;               // --opencost-prices (with --prometheus)
  std::string recording_rules;                // --recording-rules auto|on|off (with --prometheus)
  std::string budgets;                        // --budgets FILE (docs/budgets.md)
  std::optional<std::string> grid_intensity;  // --grid-intensity G: g CO2e a kWh (none assumed)
  std::optional<std::string> energy_price;    // --energy-price USD: dollars a kWh (none assumed)
  bool since_given = false;
  bool plan = false;         // --plan: the right-size plan (with --db)
  PlanOptions plan_options;  // --plan-headroom, --plan-compute-ceiling, --plan-compute-over
};

// The flags checked and typed; usage errors name their flag. `catalog` holds --price-catalog's
// (or the built-in one) and must outlive the options.
Result<HistoryOptions> HistoryOptionsFor(const ReportOptions& r, PriceCatalog* catalog);

// --prometheus URL as `cgov report` asks it: --prometheus-timeout (1s to 1h, else a usage
// error naming it), --prometheus-tenant, --prometheus-parallel.
Result<PrometheusSource> OpenReportPrometheus(const ReportOptions& r);

// The input of the window [since_ms, until_ms) from --db or --prometheus, read as `cgov report`
// reads it (cgov top --prometheus summarizes its day from it).
// REQUIRES: `options` from HistoryOptionsFor(r).
Result<HistoryInput> LoadReportWindow(const ReportOptions& r, const HistoryOptions& options,
                                      int64_t since_ms, int64_t until_ms);

// Loads, summarizes and writes the report (to --out atomically, else stdout).
// REQUIRES: `options` from HistoryOptionsFor(r).
Status WriteHistoryReport(ReportOptions r, const HistoryOptions& options);

// --tz: "UTC", a fixed offset ("+02:00", "-05:30") or an IANA name with a zoneinfo file
// ("Europe/Berlin"). Returns the weekday (0 = Monday) x 24 + local hour of a Unix hour.
Result<std::function<int(int64_t hour)>> SlotFunction(const std::string& tz);

}  // namespace cgov

#endif  // CGOV_APP_REPORT_HISTORY_REPORT_SERVICE_H_
