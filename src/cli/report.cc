#include "cli/report.h"

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "analysis/budget.h"
#include "analysis/showback.h"
#include "analysis/slurm_accounting.h"
#include "os/command_output.h"
#include "billing/billing.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "app/fleet/fleet_load.h"
#include "app/history/history_load.h"
#include "app/price_flags.h"
#include "core/atomic_file.h"
#include "core/duration.h"
#include "core/json_writer.h"
#include "core/time_format.h"
#include "os/clock.h"
#include "os/input_file.h"
#include "os/terminal.h"
#include "report/history_report.h"
#include "report/html_report.h"

namespace cgov::cli {
namespace {

// Queries in flight at once against --prometheus: a store answers independent queries on
// several cores (Prometheus runs up to 20 at once by default, its --query.max-concurrency).
constexpr int kDefaultPrometheusParallel = 4;

struct ReportOptions {
  std::string db;
  std::string prometheus;
  std::string prometheus_tenant;  // --prometheus-tenant: X-Scope-OrgID
  std::string prometheus_timeout = "2m";  // per query
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
  std::string slurm_accounting;  // sacct --parsable2 or scontrol show job output
  bool sacct = false;            // --sacct: run sacct for the report's window
  bool opencost_prices = false;  // --opencost-prices (with --prometheus)
  std::string recording_rules;   // --recording-rules auto|on|off (with --prometheus)
  std::string budgets;            // --budgets FILE (docs/budgets.md)
  bool since_given = false;
};

int SlotOf(const std::tm& t) { return ((t.tm_wday + 6) % 7) * 24 + t.tm_hour; }

// A duration back from `until_ms`, or a timestamp.
Result<int64_t> ParseSince(const std::string& text, int64_t until_ms) {
  if (Result<std::chrono::milliseconds> d = ParseDuration(text); d.ok()) {
    // "All of it": a duration reaching before 1970 starts at the earliest time (and a database's
    // window is then clamped to its data).
    if (d->count() > until_ms - kMinTimestampMs) return kMinTimestampMs;
    return until_ms - d->count();
  }
  Result<int64_t> ts = ParseTimestampMs(text);
  if (!ts.ok() && (ts.status().message().find("outside the times") != std::string_view::npos ||
                   ts.status().message().find("is not a date") != std::string_view::npos)) {
    return ts.status().WithContext("--since");
  }
  if (!ts.ok()) {
    return InvalidArgument(fmt::format("--since {}: expected a duration before --until (24h, 7d) "
                                       "or a timestamp (2026-11-21T10:00Z)", text));
  }
  return ts;
}

Result<HistoryOptions> Options(const ReportOptions& r, PriceCatalog* catalog) {
  HistoryOptions o;
  auto by = ParseHistoryBy(r.by);
  if (!by) {
    return InvalidArgument(fmt::format("--by {}: expected user, project, team, pod, host, "
                                       "slurm_job, account, namespace or container", r.by));
  }
  if (*by == HistoryBy::kAccount && r.slurm_accounting.empty() && !r.sacct) {
    return InvalidArgument("--by account: give the jobs' accounts with --sacct (runs sacct) or "
                           "--slurm-accounting FILE (sacct --parsable2 "
                           "--format=JobID,User,Account,Partition)");
  }
  if (r.sacct && !r.slurm_accounting.empty()) {
    return InvalidArgument("--sacct and --slurm-accounting: give the jobs' accounts one way");
  }
  if (r.db.empty() == r.prometheus.empty()) {
    return InvalidArgument("give one source: --db PATH (one host's history) or --prometheus URL "
                           "(the fleet)");
  }
  if (!r.prometheus_tenant.empty() && r.prometheus.empty()) {
    return InvalidArgument("--prometheus-tenant goes with --prometheus URL");
  }
  if (r.prometheus_timeout != "2m" && r.prometheus.empty()) {
    return InvalidArgument("--prometheus-timeout goes with --prometheus URL");
  }
  if (r.verbose && r.prometheus.empty()) {
    return InvalidArgument("--verbose lists the queries of --prometheus URL");
  }
  if (r.prometheus_parallel) {
    if (r.prometheus.empty()) {
      return InvalidArgument("--prometheus-parallel goes with --prometheus URL");
    }
    if (*r.prometheus_parallel < 1 || *r.prometheus_parallel > 32) {
      return InvalidArgument(fmt::format("--prometheus-parallel {}: expected 1 to 32 queries at "
                                         "once", *r.prometheus_parallel));
    }
  }
  if (!r.recording_rules.empty()) {
    if (r.prometheus.empty()) {
      return InvalidArgument("--recording-rules goes with --prometheus URL");
    }
    if (!ParseRecordingRules(r.recording_rules)) {
      return InvalidArgument(fmt::format("--recording-rules {}: expected auto, on or off",
                                         r.recording_rules));
    }
    if (r.recording_rules == "on" && !r.billing.empty()) {
      return InvalidArgument("--recording-rules on and --billing: a bill's lines are placed by "
                             "host and hour, which the rules' totals do not keep (auto and off "
                             "read the raw counters with --billing)");
    }
  }
  if (r.opencost_prices && r.prometheus.empty()) {
    return InvalidArgument("--opencost-prices reads OpenCost's series from --prometheus URL");
  }
  if (r.opencost_prices && (!r.price.empty() || !r.instance_type.empty())) {
    return InvalidArgument("--opencost-prices and --price-per-gpu-hour / --instance-type: give "
                           "the price one way");
  }
  o.by = *by;
  CGOV_ASSIGN_OR_RETURN(auto min, ParseDuration(r.idle_held_min));
  o.idle_held_min_ms = min.count();
  CGOV_ASSIGN_OR_RETURN(o.slot_of_hour, SlotFunction(r.tz));
  o.tz_name = r.tz;
  o.price.instance_type = r.instance_type;
  o.price.spot = r.spot;
  CGOV_RETURN_IF_ERROR(ApplyPriceFlags(r.catalog_path, r.price, &o.price, catalog));
  o.catalog = catalog;
  if (r.format != "text" && r.format != "md" && r.format != "json" && r.format != "csv" &&
      r.format != "html") {
    return InvalidArgument(fmt::format("--format {}: expected text, md, json, html or csv (the "
                                       "showback rows)", r.format));
  }
  CGOV_ASSIGN_OR_RETURN(o.idle_cost, ParseIdleCostPolicy(r.idle_cost));
  if (!r.billing_format.empty() && !ParseBillFormat(r.billing_format)) {
    return InvalidArgument(fmt::format("--billing-format {}: expected aws-cur, gcp, azure or csv",
                                       r.billing_format));
  }
  if (r.billing.empty() && (!r.billing_format.empty() || !r.billing_map.empty())) {
    return InvalidArgument("--billing-format and --billing-map go with --billing FILE");
  }
  if (!r.until.empty() && r.until != "now") {
    CGOV_RETURN_IF_ERROR(ParseTimestampMs(r.until).status().WithContext("--until"));
  }
  CGOV_RETURN_IF_ERROR(ParseSince(r.since, kEndTimestampMs).status());  // the syntax
  return o;
}

struct Window {
  int64_t since_ms = 0, until_ms = 0;
};

// --until (default: `data_end_ms` when known, else now) and --since before it.
// REQUIRES: the flags passed Options() (usage errors are reported before this runs).
Result<Window> ResolveWindow(const ReportOptions& r, std::optional<int64_t> data_end_ms) {
  Window w;
  w.until_ms = SystemClock().WallNs() / 1'000'000;
  if (!r.until.empty() && r.until != "now") {
    CGOV_ASSIGN_OR_RETURN(w.until_ms, ParseTimestampMs(r.until));
  } else if (r.until.empty() && data_end_ms) {
    w.until_ms = *data_end_ms;
  }
  CGOV_ASSIGN_OR_RETURN(w.since_ms, ParseSince(r.since, w.until_ms));
  if (w.since_ms >= w.until_ms) {
    return InvalidArgument(fmt::format("--since {} is not before --until {}",
                                       FormatRfc3339Utc(w.since_ms * 1'000'000),
                                       FormatRfc3339Utc(w.until_ms * 1'000'000)));
  }
  return w;
}

// `window`: the report's own (--since, --until) when not given.
Result<HistoryInput> LoadFromPrometheus(const ReportOptions& r, std::optional<Window> window) {
  Result<std::chrono::milliseconds> timeout = ParseDuration(r.prometheus_timeout);
  if (!timeout.ok() || *timeout < std::chrono::seconds(1) || *timeout > std::chrono::hours(1)) {
    return InvalidArgument(fmt::format("--prometheus-timeout {}: expected a duration from 1s to "
                                       "1h (2m, 90s)", r.prometheus_timeout));
  }
  CGOV_ASSIGN_OR_RETURN(PrometheusSource prometheus,
                        PrometheusSource::Open(r.prometheus, *timeout, r.prometheus_tenant));
  prometheus.set_parallel(r.prometheus_parallel.value_or(kDefaultPrometheusParallel));
#ifdef M_ARENA_MAX
  // The answers are parsed on the query threads and freed on this one: with an allocator arena
  // per thread (glibc's default, up to 8 a core), each keeps what was freed into it, and a
  // 1,000-node report peaked at 214-234 MiB instead of 149-165 MiB with two; since answers are
  // read as they download, one arena peaked at 118-125 MiB in six runs of six, where two still
  // reached 150-158 MiB in two of six (docs/benchmarks.md).
  mallopt(M_ARENA_MAX, 1);
#endif
  if (r.verbose) {
    prometheus.set_trace([](const QueryTrace& t) {
      fmt::print(stderr, "cgov report: {:7.3f} s {:>8.1f} KiB {:>7} series {:>8} points  {} {}\n",
                 t.seconds, static_cast<double>(t.bytes) / 1024, t.series, t.points,
                 t.path.substr(t.path.rfind('/') + 1), t.expr);
    });
  }
  Window w;
  if (window) {
    w = *window;
  } else {
    CGOV_ASSIGN_OR_RETURN(w, ResolveWindow(r, std::nullopt));  // default: now
  }
  FleetOptions options{.opencost_prices = r.opencost_prices};
  const std::optional<HistoryBy> by = ParseHistoryBy(r.by);  // checked with the other flags
  options.pods = by == HistoryBy::kPod || by == HistoryBy::kContainer;
  if (!r.recording_rules.empty()) options.rules = *ParseRecordingRules(r.recording_rules);
  // A bill's lines are placed by host and hour: the raw counters keep both.
  if (!r.billing.empty()) options.rules = RecordingRules::kOff;
  return LoadFleet(prometheus, w.since_ms, w.until_ms, options);
}

// A window reaching past the database's data is clamped to it, and the report says so: "365d"
// over a week of data is a week (as gpu-usage-audit does). A window with no data stays as asked.
// `end`: DataEndMs(store).
Result<std::vector<std::string>> ClampToData(const HistoryStore& store, std::optional<int64_t> end,
                                             Window* w) {
  std::vector<std::string> notes;
  CGOV_ASSIGN_OR_RETURN(auto range, store.TickRange());
  if (!range || !end || range->first >= w->until_ms || *end <= w->since_ms) return notes;
  const Window asked = *w;
  w->since_ms = std::max(w->since_ms, range->first);
  w->until_ms = std::min(w->until_ms, *end);
  // A few seconds before the first tick (a window as long as the data) are not worth a note.
  constexpr int64_t kNoteMs = 60'000;
  if (w->since_ms - asked.since_ms >= kNoteMs || asked.until_ms - w->until_ms >= kNoteMs) {
    notes.push_back(fmt::format(
        "the window asked for ({} → {}) reaches past the data: the report covers {} → {}, "
        "the data it holds", FormatMinuteUtc(asked.since_ms), FormatMinuteUtc(asked.until_ms),
        FormatMinuteUtc(w->since_ms), FormatMinuteUtc(w->until_ms)));
  }
  return notes;
}

Result<HistoryInput> LoadFromDb(const ReportOptions& r, const HistoryOptions& options,
                                std::optional<Window> window) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<HistoryStore> store,
                        HistoryStore::Open(r.db, HistoryStore::Mode::kRead));
  // Default --until: the end of the data, so that a finished database (a demo, an import) reports
  // the same whenever it is read. For a running daemon that is a tick ago.
  CGOV_ASSIGN_OR_RETURN(std::optional<int64_t> end, DataEndMs(*store));
  Window w;
  if (window) {
    w = *window;
  } else {
    CGOV_ASSIGN_OR_RETURN(w, ResolveWindow(r, end));
  }
  CGOV_ASSIGN_OR_RETURN(std::vector<std::string> notes, ClampToData(*store, end, &w));
  CGOV_ASSIGN_OR_RETURN(HistoryInput in, LoadHistory(*store, w.since_ms, w.until_ms, options.phases));
  in.notes.insert(in.notes.begin(), notes.begin(), notes.end());
  return in;
}

Result<HistoryInput> Load(const ReportOptions& r, const HistoryOptions& options,
                          std::optional<Window> window = std::nullopt) {
  return r.prometheus.empty() ? LoadFromDb(r, options, window) : LoadFromPrometheus(r, window);
}

// Each budget's period to the end of the report's window, read from the same source (a month
// of history, whatever --since says), priced as the report prices.
Status AddBudgets(const ReportOptions& r, const HistoryOptions& options, const BudgetFile& file,
                  HistorySummary* summary) {
  const int64_t as_of = summary->until_ms;
  CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                        Load(r, options, Window{BudgetDataStartMs(file, as_of), as_of}));
  CGOV_ASSIGN_OR_RETURN(auto prices, GpuHourlyPrices(in, options));
  summary->budgets = EvaluateBudgets(file, in, prices, as_of);
  summary->budgets_file = file.path;
  summary->budget_forecast_days = file.forecast_days;
  return Status::Ok();
}

// The bill and the host map of --billing and --billing-map.
struct BillInput {
  Bill bill;
  std::map<std::string, std::string> resource_host;
};

Result<BillInput> LoadBill(const ReportOptions& r) {
  BillInput in;
  std::optional<BillFormat> format;
  if (!r.billing_format.empty()) format = ParseBillFormat(r.billing_format);
  CGOV_ASSIGN_OR_RETURN(in.bill, ReadBill(r.billing, format));
  if (!r.billing_map.empty()) {
    CGOV_ASSIGN_OR_RETURN(std::string text,
                          ReadInputFile(r.billing_map, 64 << 20, "--billing-map"));
    CGOV_ASSIGN_OR_RETURN(in.resource_host, ParseBillingMap(text, r.billing_map));
  }
  return in;
}

Status Report(ReportOptions r, const HistoryOptions& options) {
  std::optional<BillInput> bill;
  if (!r.billing.empty()) {
    CGOV_ASSIGN_OR_RETURN(bill, LoadBill(r));
    // Without --since/--until the window is the bill's: every line can find its GPU time.
    if (!r.since_given && r.until.empty() && !bill->bill.lines.empty()) {
      int64_t from = bill->bill.lines.front().start_ms, to = bill->bill.lines.front().end_ms;
      for (const BilledLine& l : bill->bill.lines) {
        from = std::min(from, l.start_ms);
        to = std::max(to, l.end_ms);
      }
      r.since = FormatRfc3339Utc(from * 1'000'000);
      r.until = FormatRfc3339Utc(to * 1'000'000);
    }
  }
  std::optional<SlurmJobs> slurm;
  if (!r.slurm_accounting.empty()) {
    CGOV_ASSIGN_OR_RETURN(std::string text,
                          ReadInputFile(r.slurm_accounting, 64 << 20, "--slurm-accounting"));
    CGOV_ASSIGN_OR_RETURN(slurm, ParseSlurmAccounting(text, r.slurm_accounting));
  }
  std::optional<BudgetFile> budgets;
  if (!r.budgets.empty()) {
    CGOV_ASSIGN_OR_RETURN(std::string text, ReadInputFile(r.budgets, 1 << 20, "--budgets"));
    CGOV_ASSIGN_OR_RETURN(budgets, ParseBudgets(text, r.budgets));
  }
  CGOV_ASSIGN_OR_RETURN(HistoryInput input, Load(r, options));
  std::string slurm_source = "--slurm-accounting " + r.slurm_accounting;
  if (r.sacct) {
    // The jobs of the report's window, every user's, as --slurm-accounting reads them. sacct
    // takes local times: written and read in the same TZ (sacct inherits ours, --tz included).
    auto local = [](int64_t ms) {
      const time_t t = ms / 1000;
      tm parts{};
      localtime_r(&t, &parts);
      return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", parts.tm_year + 1900,
                         parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min,
                         parts.tm_sec);
    };
    const std::vector<std::string> argv = {
        "sacct", "--allusers", "--parsable2", "--format=JobID,User,Account,Partition",
        "--starttime=" + local(input.since_ms), "--endtime=" + local(input.until_ms)};
    Result<CommandOutput> out = RunCommand(argv, std::chrono::seconds(60), 64 << 20);
    if (!out.ok()) return out.status().WithContext("--sacct");
    CGOV_ASSIGN_OR_RETURN(slurm, ParseSlurmAccounting(out->out, "sacct"));
    slurm_source = "--sacct (sacct " + argv[4] + " " + argv[5] + ")";
  }
  if (slurm) {
    const size_t matched = ApplySlurmJobs(*slurm, &input.identities);
    input.notes.push_back(fmt::format("{}: {} job(s) read, {} process identit{} matched by job "
                                      "id", slurm_source, slurm->size(), matched,
                                      matched == 1 ? "y" : "ies"));
  }
  CGOV_ASSIGN_OR_RETURN(HistorySummary summary, SummarizeHistory(input, options));
  if (budgets) CGOV_RETURN_IF_ERROR(AddBudgets(r, options, *budgets, &summary));
  if (bill) {
    summary.showback = BillShowback(input, options.by, bill->bill, bill->resource_host,
                                    options.idle_cost);
  }
  input = HistoryInput();  // all the report says is in the summary now (a fleet's is large)
  auto put = [&r](const std::string& text) {
    if (!r.out.empty()) return WriteFileAtomically(r.out, text);
    fmt::print("{}", text);
    return Status::Ok();
  };
  if (r.format == "json") {
    // A fleet's report is megabytes: its tree, then its text, each once the one before is gone.
    nlohmann::json tree = HistoryReportJson(summary);
    summary = HistorySummary();
    std::string text = DumpJson(tree, 2);
    tree = nlohmann::json();
    text += '\n';
    return put(text);
  }
  return put(r.format == "csv"    ? HistoryShowbackCsv(summary)
             : r.format == "html" ? HistoryReportHtml(summary)
             : r.format == "md"   ? HistoryReportText(summary, kMarkdown)
                                  : HistoryReportText(summary, TextStyle{
                                        false, r.out.empty() && TerminalWantsColor(STDOUT_FILENO)}));
}

}  // namespace

Result<std::function<int(int64_t hour)>> SlotFunction(const std::string& tz) {
  if (tz == "UTC" || tz == "utc" || tz == "Z") {
    return std::function<int(int64_t)>([](int64_t hour) {
      const time_t t = static_cast<time_t>(hour * 3600);
      std::tm tm{};
      gmtime_r(&t, &tm);
      return SlotOf(tm);
    });
  }
  if (!tz.empty() && (tz[0] == '+' || tz[0] == '-')) {
    Result<int64_t> probe = ParseTimestampMs("1970-01-01T00:00" + tz);
    if (!probe.ok()) {
      return InvalidArgument(fmt::format("--tz {}: expected UTC, +HH:MM, -HH:MM or a zone name "
                                         "such as Europe/Berlin", tz));
    }
    const int64_t offset_s = -*probe / 1000;
    return std::function<int(int64_t)>([offset_s](int64_t hour) {
      const time_t t = static_cast<time_t>(hour * 3600 + offset_s);
      std::tm tm{};
      gmtime_r(&t, &tm);
      return SlotOf(tm);
    });
  }
  std::error_code ec;
  if (tz.find("..") != std::string::npos ||
      !std::filesystem::is_regular_file("/usr/share/zoneinfo/" + tz, ec)) {
    return InvalidArgument(fmt::format("--tz {}: no such time zone (expected UTC, +HH:MM or a "
                                       "name from /usr/share/zoneinfo such as Europe/Berlin)", tz));
  }
  // localtime_r follows TZ; cgov report is single-threaded, so setting it here is safe.
  setenv("TZ", tz.c_str(), 1);
  tzset();
  return std::function<int(int64_t)>([](int64_t hour) {
    const time_t t = static_cast<time_t>(hour * 3600);
    std::tm tm{};
    localtime_r(&t, &tm);
    return SlotOf(tm);
  });
}

int RunReport(int argc, char** argv) {
  ReportOptions r;
  if (const char* catalog = std::getenv("CGOV_PRICE_CATALOG")) r.catalog_path = catalog;
  CLI::App app{"Where the GPU-time went: phases, waste, per GPU, who held it, idle-held sessions "
               "to act on, time-of-day pattern, findings, and who pays: the showback, estimated or "
               "from the invoice (--billing). From one host's history database (safe while the "
               "daemon writes) or from the fleet's Prometheus.", "cgov report"};
  app.add_option("--db", r.db, "history database (cgov daemon, cgov demo, cgov import)");
  app.add_option("--prometheus", r.prometheus, "the fleet instead: a Prometheus (or Thanos, "
                 "Mimir, VictoriaMetrics) URL that scrapes `cgov daemon --listen`");
  app.add_option("--prometheus-tenant", r.prometheus_tenant, "with --prometheus: the tenant to "
                 "ask for, sent as X-Scope-OrgID (Grafana Mimir, Cortex)");
  app.add_flag("--verbose", r.verbose, "with --prometheus: each query on stderr as it is "
               "answered, with its time, size, series and points");
  app.add_option("--prometheus-timeout", r.prometheus_timeout, "with --prometheus: how long one "
                 "query may take, sent to the server as its timeout too (capped there by its "
                 "--query.timeout, 2m by default)")->capture_default_str();
  app.add_option("--prometheus-parallel", r.prometheus_parallel, fmt::format(
                 "with --prometheus: how many independent queries may be in flight at once "
                 "(1 to 32; default {})", kDefaultPrometheusParallel));
  app.add_option("--since", r.since, "window start: a duration before --until (24h, 7d) or a "
                 "timestamp (2026-11-21T10:00Z)")->capture_default_str();
  app.add_option("--until", r.until, "window end: a timestamp or `now` (default: the end of the "
                 "data; now with --prometheus)");
  app.add_option("--format", r.format, "text (aligned columns; colour on a terminal unless "
                 "NO_COLOR is set), md, json (docs/report-json.md), html (one "
                 "self-contained page, docs/html-report.md) or csv (the showback rows, for a "
                 "spreadsheet)")
      ->capture_default_str();
  app.add_option("--out", r.out, "write here (atomically) instead of stdout");
  app.add_option("--by", r.by, "who: user, project, team, pod, container, namespace, host, "
                 "slurm_job or account "
                             "(with --slurm-accounting or --sacct)")->capture_default_str();
  app.add_option("--slurm-accounting", r.slurm_accounting,
                 "Slurm jobs' users, accounts and partitions: a file of `sacct --parsable2 "
                 "--format=JobID,User,Account,Partition` or `scontrol show job` output; a job's "
                 "account is its processes' project when they name none");
  app.add_flag("--sacct", r.sacct, "the same from Slurm itself: run `sacct --allusers "
               "--parsable2` for the report's window (sacct on PATH)");
  app.add_option("--tz", r.tz, "time zone of the hour-of-day heatmap: UTC, +HH:MM or "
                 "Europe/Berlin-style")->capture_default_str();
  app.add_option("--idle-held-min", r.idle_held_min,
                 "list a session once it has been idle-held this long")->capture_default_str();
  app.add_option("--price-per-gpu-hour", r.price, "USD per GPU-hour (overrides the catalog)");
  app.add_flag("--opencost-prices", r.opencost_prices, "with --prometheus: price each GPU at "
               "OpenCost's node_gpu_hourly_cost for its node (OpenCost scraped into the same "
               "Prometheus)");
  app.add_option("--recording-rules", r.recording_rules, "with --prometheus: read the hourly "
                 "recording rules of deploy/prometheus/cgov-rules.yml where Prometheus evaluated "
                 "them: auto (windows of a day or more; the default), on, off (raw counters)");
  app.add_option("--instance-type", r.instance_type, "price GPUs as this instance type (catalog)");
  app.add_option("--price-catalog", r.catalog_path, "your own price catalog (env "
                 "CGOV_PRICE_CATALOG; format of data/prices.json)");
  app.add_flag("--spot", r.spot, "price at the catalog's spot rate");
  app.add_option("--billing", r.billing, "the invoice: a cloud billing export (AWS CUR, GCP, "
                 "Azure; .gz read) or host,start,end,cost_usd CSV, joined to the GPU time for "
                 "the showback (docs/billing.md); without --since, the window is the bill's");
  app.add_option("--billing-format", r.billing_format, "aws-cur, gcp, azure or csv (default: "
                 "told by the file's header)");
  app.add_option("--billing-map", r.billing_map, "CSV of host,resource: which host a billed "
                 "instance or resource id is (not needed where the resource is named as the host)");
  app.add_option("--budgets", r.budgets, "a budgets file (TOML, docs/budgets.md): each project's, "
                 "team's, namespace's or user's spend this month or week, its forecast to the "
                 "period's end and when it crosses");
  app.add_option("--idle-cost", r.idle_cost, "who pays for GPU time no one held: unallocated "
                 "(its own line), proportional (spread by GPU time), owner:KEY=VALUE "
                 "(owner:team=platform)")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return UsageExit(app, e);
  }
  r.since_given = app.count("--since") > 0;
  PriceCatalog catalog;
  Result<HistoryOptions> options = Options(r, &catalog);
  if (!options.ok()) {
    fmt::print(stderr, "cgov report: {}\n", options.status().message());
    return kExitUsage;
  }
  Status done = Report(r, *options);
  if (!done.ok()) {
    fmt::print(stderr, "cgov report: {}\n", done.message());
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace cgov::cli
