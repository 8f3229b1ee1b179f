#include "cli/report.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/report/history_report_service.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "store/state_directory.h"

namespace cgov::cli {
namespace {

// The flags that price the report, join it to a bill or budgets, and price its energy.
void AddMoneyFlags(CLI::App& app, ReportOptions& r) {
  app.add_option("--price-per-gpu-hour", r.price, "USD per GPU-hour (overrides the catalog)");
  app.add_flag("--opencost-prices", r.opencost_prices,
               "with --prometheus: price each GPU at OpenCost's node_gpu_hourly_cost for its node "
               "(OpenCost scraped into the same Prometheus)");
  app.add_option("--recording-rules", r.recording_rules,
                 "with --prometheus: read the hourly recording rules of "
                 "deploy/prometheus/cgov-rules.yml where Prometheus evaluated them: auto (windows "
                 "of a day or more; the default), on, off (raw counters)")
      ->type_name("auto|on|off");
  app.add_option("--instance-type", r.instance_type, "price GPUs as this instance type (catalog)");
  app.add_option("--price-catalog", r.catalog_path,
                 "your own price catalog (env CGOV_PRICE_CATALOG; format of data/prices.json)");
  app.add_flag("--spot", r.spot, "price at the catalog's spot rate");
  app.add_option("--billing", r.billing,
                 "the invoice: a cloud billing export (AWS CUR, GCP, Azure; .gz read) or "
                 "host,start,end,cost_usd CSV, joined to the GPU time for the showback "
                 "(docs/billing.md); without --since, the window is the bill's");
  app.add_option("--billing-format", r.billing_format,
                 "aws-cur, gcp, azure or csv (default: told by the file's header)")
      ->type_name("aws-cur|gcp|azure|csv");
  app.add_option("--billing-map", r.billing_map,
                 "CSV of host,resource: which host a billed instance or resource id is (not needed "
                 "where the resource is named as the host)");
  app.add_option(
      "--budgets", r.budgets,
      "a budgets file (TOML, docs/budgets.md): each project's, team's, namespace's or user's spend "
      "this month or week, its forecast to the period's end and when it crosses");
  app.add_option("--energy-price", r.energy_price,
                 "USD a kWh of electricity: the energy's cost (and its idle part, and each "
                 "holder's) beside the GPU-time dollars, not added to them; none is assumed");
  app.add_option("--grid-intensity", r.grid_intensity,
                 "g CO2e a kWh of your grid (its published average): CO2e beside the energy "
                 "figures; none is assumed");
  app.add_option("--idle-cost", r.idle_cost,
                 "who pays for GPU time no one held: unallocated (its own line), proportional "
                 "(spread by GPU time), owner:KEY=VALUE (owner:team=platform)")
      ->capture_default_str();
}

// The right-size plan (issue 61; docs/analysis.md, "Right-size plan").
void AddPlanFlags(CLI::App& app, ReportOptions& r) {
  app.add_flag(
      "--plan", r.plan,
      "add the right-size plan: each workload's fitting MIG profile or cheaper GPU and the GPUs "
      "its loads pack onto, replayed over every raw tick of the window (--db; reads every tick, so "
      "it takes longer) or over the GPUs' series (--prometheus: GPUs, no workloads)");
  app.add_option("--plan-headroom", r.plan_options.memory_margin_pct,
                 "with --plan: % of a GPU's (a profile's) memory kept free above a load's p99")
      ->check(CLI::Range(0, 50))
      ->capture_default_str();
  app.add_option("--plan-compute-ceiling", r.plan_options.compute_ceiling_pct,
                 "with --plan: the summed compute % (SM activity, else utilization) a planned GPU "
                 "may carry")
      ->check(CLI::Range(10, 100))
      ->capture_default_str();
  app.add_option("--plan-compute-over", r.plan_options.compute_over_pct,
                 "with --plan: % of the time the replay may see a planned GPU above that ceiling")
      ->check(CLI::Range(0, 50))
      ->capture_default_str();
}

}  // namespace

int RunReport(int argc, char** argv) {
  ReportOptions r;
  if (const char* catalog = std::getenv("CGOV_PRICE_CATALOG")) r.catalog_path = catalog;
  CLI::App app{
      "Where the GPU-time went: phases, waste, per GPU, who held it, idle-held sessions to act on, "
      "time-of-day pattern, findings, and who pays: the showback, estimated or from the invoice "
      "(--billing). From one host's history database (safe while the daemon writes) or from the "
      "fleet's Prometheus.",
      "cgov report"};
  app.add_option("--db", r.db,
                 fmt::format("history database (cgov daemon, cgov demo, cgov import; default: this "
                             "host's daemon's, {}/{} or under $STATE_DIRECTORY, when it is there)",
                             kDefaultStateDirectory, kHistoryDbName));
  app.add_option("--prometheus", r.prometheus,
                 "the fleet instead: a Prometheus (or Thanos, Mimir, VictoriaMetrics) URL that "
                 "scrapes `cgov daemon --listen`");
  app.add_option(
      "--prometheus-tenant", r.prometheus_tenant,
      "with --prometheus: the tenant to ask for, sent as X-Scope-OrgID (Grafana Mimir, Cortex)");
  app.add_flag("--verbose", r.verbose,
               "with --prometheus: each query on stderr as it is answered, with its time, size, "
               "series and points");
  app.add_option("--prometheus-timeout", r.prometheus_timeout,
                 "with --prometheus: how long one query may take, sent to the server as its "
                 "timeout too (capped there by its --query.timeout, 2m by default)")
      ->capture_default_str();
  app.add_option("--prometheus-parallel", r.prometheus_parallel,
                 fmt::format("with --prometheus: how many independent queries may be in flight at "
                             "once (1 to 32; default {})",
                             kDefaultPrometheusParallel));
  app.add_option(
         "--since", r.since,
         "window start: a duration before --until (24h, 7d) or a timestamp (2026-11-21T10:00Z)")
      ->capture_default_str();
  app.add_option(
      "--until", r.until,
      "window end: a timestamp or `now` (default: the end of the data; now with --prometheus)");
  app.add_option("--format", r.format,
                 "text (aligned columns; colour on a terminal unless NO_COLOR is set), md, json "
                 "(docs/report-json.md), html (one self-contained page, docs/html-report.md) or "
                 "csv (the showback rows, for a spreadsheet)")
      ->type_name("text|md|json|html|csv")
      ->capture_default_str();
  app.add_option("--out", r.out, "write here (atomically) instead of stdout");
  AddColorFlag(app);
  app.add_option("--by", r.by,
                 "who: user, project, team, pod, container, namespace, host, slurm_job or account "
                 "(with --slurm-accounting or --sacct)")
      ->type_name("user|project|team|pod|container|namespace|host|slurm_job|account")
      ->capture_default_str();
  app.add_option("--slurm-accounting", r.slurm_accounting,
                 "Slurm jobs' users, accounts and partitions: a file of `sacct --parsable2 "
                 "--format=JobID,User,Account,Partition` or `scontrol show job` output; a job's "
                 "account is its processes' project when they name none");
  app.add_flag("--sacct", r.sacct,
               "the same from Slurm itself: run `sacct --allusers --parsable2` for the report's "
               "window (sacct on PATH)");
  app.add_option("--tz", r.tz,
                 "time zone of the hour-of-day heatmap: UTC, +HH:MM or Europe/Berlin-style")
      ->capture_default_str();
  app.add_option("--idle-held-min", r.idle_held_min,
                 "list a session once it has been idle-held this long")
      ->capture_default_str();
  AddMoneyFlags(app, r);
  AddPlanFlags(app, r);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  r.since_given = app.count("--since") > 0;
  if (r.db.empty() && r.prometheus.empty()) {
    // This host's daemon's database (the unit's StateDirectory) when it is there; a database
    // that cannot be looked at is opened anyway, so that the error says why.
    std::string db = DefaultHistoryDb();
    std::error_code ec;
    if (std::filesystem::exists(db, ec) || ec) r.db = std::move(db);
  }
  PriceCatalog catalog;
  Result<HistoryOptions> options = HistoryOptionsFor(r, &catalog);
  if (!options.ok()) {
    fmt::print(stderr, "cgov report: {}\n", options.status().message());
    return kExitUsage;
  }
  Status done = WriteHistoryReport(r, *options);
  if (!done.ok()) {
    fmt::print(stderr, "cgov report: {}\n", done.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace cgov::cli
