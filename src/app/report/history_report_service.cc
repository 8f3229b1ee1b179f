// `cgov report`'s service: a history window from one host's database or the fleet's
// Prometheus, with Slurm accounts, a bill and budgets, summarized and rendered.
#include "app/report/history_report_service.h"

#include <malloc.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "analysis/budget.h"
#include "analysis/showback.h"
#include "analysis/slurm_accounting.h"
#include "app/fleet/fleet_load.h"
#include "app/fleet/fleet_plan.h"
#include "app/history/history_load.h"
#include "app/history/plan_load.h"
#include "app/price_flags.h"
#include "billing/billing.h"
#include "core/atomic_file.h"
#include "core/duration.h"
#include "core/json_writer.h"
#include "core/text.h"
#include "core/time_format.h"
#include "os/clock.h"
#include "os/command_output.h"
#include "os/env.h"
#include "os/input_file.h"
#include "os/terminal.h"
#include "report/history_report.h"
#include "report/html_report.h"
#include "store/prometheus_source.h"
#include "store/state_directory.h"

namespace cgov {
namespace {

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
    return InvalidArgument(
        fmt::format("--since {}: expected a duration before --until (24h, 7d) or a timestamp "
                    "(2026-11-21T10:00Z)",
                    text));
  }
  return ts;
}

}  // namespace

Result<HistoryOptions> HistoryOptionsFor(const ReportOptions& r, PriceCatalog* catalog) {
  HistoryOptions o;
  auto by = ParseHistoryBy(r.by);
  if (!by) {
    return InvalidArgument(
        fmt::format("--by {}: expected user, project, team, pod, host, slurm_job, account, "
                    "namespace or container",
                    r.by));
  }
  if (*by == HistoryBy::kAccount && r.slurm_accounting.empty() && !r.sacct) {
    return InvalidArgument(
        "--by account: give the jobs' accounts with --sacct (runs sacct) or --slurm-accounting "
        "FILE (sacct --parsable2 --format=JobID,User,Account,Partition)");
  }
  if (r.sacct && !r.slurm_accounting.empty()) {
    return InvalidArgument("--sacct and --slurm-accounting: give the jobs' accounts one way");
  }
  if (r.db.empty() == r.prometheus.empty()) {
    return InvalidArgument(
        fmt::format("give one source: --db PATH (one host's history; by default {} when there is "
                    "one) or --prometheus URL (the fleet)",
                    DefaultHistoryDb()));
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
      return InvalidArgument(fmt::format(
          "--prometheus-parallel {}: expected 1 to 32 queries at once", *r.prometheus_parallel));
    }
  }
  if (!r.recording_rules.empty()) {
    if (r.prometheus.empty()) {
      return InvalidArgument("--recording-rules goes with --prometheus URL");
    }
    if (!ParseRecordingRules(r.recording_rules)) {
      return InvalidArgument(
          fmt::format("--recording-rules {}: expected auto, on or off", r.recording_rules));
    }
    if (r.recording_rules == "on" && !r.billing.empty()) {
      return InvalidArgument(
          "--recording-rules on and --billing: a bill's lines are placed by host and hour, which "
          "the rules' totals do not keep (auto and off read the raw counters with --billing)");
    }
  }
  if (r.opencost_prices && r.prometheus.empty()) {
    return InvalidArgument("--opencost-prices reads OpenCost's series from --prometheus URL");
  }
  if (r.opencost_prices && (!r.price.empty() || !r.instance_type.empty())) {
    return InvalidArgument(
        "--opencost-prices and --price-per-gpu-hour / --instance-type: give the price one way");
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
    return InvalidArgument(fmt::format(
        "--format {}: expected text, md, json, html or csv (the showback rows)", r.format));
  }
  CGOV_ASSIGN_OR_RETURN(o.idle_cost, ParseIdleCostPolicy(r.idle_cost));
  if (r.grid_intensity) {
    CGOV_ASSIGN_OR_RETURN(o.grid_g_per_kwh, ParseGridIntensity(*r.grid_intensity));
  }
  if (r.energy_price) {
    CGOV_ASSIGN_OR_RETURN(o.energy_price_per_kwh, ParseEnergyPrice(*r.energy_price));
  }
  if (!r.billing_format.empty() && !ParseBillFormat(r.billing_format)) {
    return InvalidArgument(
        fmt::format("--billing-format {}: expected aws-cur, gcp, azure or csv", r.billing_format));
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

namespace {

struct Window {
  int64_t since_ms = 0, until_ms = 0;
};

// --until (default: `data_end_ms` when known, else now) and --since before it.
// REQUIRES: the flags passed Options() (usage errors are reported before this runs).
Result<Window> ResolveWindow(const ReportOptions& r, std::optional<int64_t> data_end_ms) {
  Window w;
  w.until_ms = Env::Default()->WallMs();
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

}  // namespace

Result<PrometheusSource> OpenReportPrometheus(const ReportOptions& r) {
  Result<std::chrono::milliseconds> timeout = ParseDuration(r.prometheus_timeout);
  if (!timeout.ok() || *timeout < std::chrono::seconds(1) || *timeout > std::chrono::hours(1)) {
    return InvalidArgument(
        fmt::format("--prometheus-timeout {}: expected a duration from 1s to 1h (2m, 90s)",
                    r.prometheus_timeout));
  }
  CGOV_ASSIGN_OR_RETURN(PrometheusSource prometheus,
                        PrometheusSource::Open(r.prometheus, *timeout, r.prometheus_tenant));
  prometheus.set_parallel(r.prometheus_parallel.value_or(kDefaultPrometheusParallel));
  return prometheus;
}

namespace {

// `window`: the report's own (--since, --until) when not given.
Result<HistoryInput> LoadFromPrometheus(const ReportOptions& r, std::optional<Window> window) {
  CGOV_ASSIGN_OR_RETURN(PrometheusSource prometheus, OpenReportPrometheus(r));
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
  options.pods = by == HistoryBy::kPod || by == HistoryBy::kContainer || by == HistoryBy::kSlurmJob;
  if (!r.recording_rules.empty()) options.rules = *ParseRecordingRules(r.recording_rules);
  // A bill's lines are placed by host and hour: the raw counters keep both.
  if (!r.billing.empty()) options.rules = RecordingRules::kOff;
  CGOV_ASSIGN_OR_RETURN(HistoryInput in, LoadFleet(prometheus, w.since_ms, w.until_ms, options));
  // The report's own window only (not a budget's period, not cgov top's day).
  if (r.plan && !window) {
    CGOV_ASSIGN_OR_RETURN(in.plan,
                          LoadFleetPlan(prometheus, in, w.since_ms, w.until_ms, r.plan_options));
  }
  return in;
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
    notes.push_back(
        fmt::format("the window asked for ({} → {}) reaches past the data: the report covers {} → "
                    "{}, the data it holds",
                    FormatMinuteUtc(asked.since_ms), FormatMinuteUtc(asked.until_ms),
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
  CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                        LoadHistory(*store, w.since_ms, w.until_ms, options.phases));
  in.notes.insert(in.notes.begin(), notes.begin(), notes.end());
  // The report's own window only (not a budget's period, not cgov top's day).
  if (r.plan && !window) {
    CGOV_ASSIGN_OR_RETURN(in.plan, LoadPlan(*store, w.since_ms, w.until_ms, r.plan_options));
  }
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
  // Each budget's spend in the cents `cgov report --by SCOPE --since PERIOD-START` shows for its
  // key (that report's Who, allocated once over its total): the same figure, not one a cent off.
  std::map<std::pair<HistoryBy, int64_t>, std::map<std::string, MicroUsd>> shown;
  for (BudgetStatus& b : summary->budgets) {
    const std::pair<HistoryBy, int64_t> key{b.budget.scope, b.period.start_ms};
    if (!shown.count(key)) {
      HistoryOptions o = options;
      o.by = b.budget.scope;
      CGOV_ASSIGN_OR_RETURN(HistoryInput period, Load(r, o, Window{b.period.start_ms, as_of}));
      CGOV_ASSIGN_OR_RETURN(HistorySummary who, SummarizeHistory(period, o));
      std::map<std::string, MicroUsd>& cents = shown[key];
      if (who.cost.priced) {
        for (const WhoRow& w : who.who) cents[w.key] = w.cost;
      }
    }
    if (auto it = shown[key].find(b.budget.name); it != shown[key].end()) {
      ShowSpentAs(it->second, &b);
    }
  }
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
                          Env::Default()->ReadUserFile(r.billing_map, 64 << 20, "--billing-map"));
    CGOV_ASSIGN_OR_RETURN(in.resource_host, ParseBillingMap(text, r.billing_map));
  }
  return in;
}

}  // namespace

Result<HistoryInput> LoadReportWindow(const ReportOptions& r, const HistoryOptions& options,
                                      int64_t since_ms, int64_t until_ms) {
  return Load(r, options, Window{since_ms, until_ms});
}

Status WriteHistoryReport(ReportOptions r, const HistoryOptions& options) {
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
  std::vector<std::string> slurm_skipped;
  if (!r.slurm_accounting.empty()) {
    CGOV_ASSIGN_OR_RETURN(
        std::string text,
        Env::Default()->ReadUserFile(r.slurm_accounting, 64 << 20, "--slurm-accounting"));
    CGOV_ASSIGN_OR_RETURN(slurm, ParseSlurmAccounting(text, r.slurm_accounting, &slurm_skipped));
  }
  std::optional<BudgetFile> budgets;
  if (!r.budgets.empty()) {
    CGOV_ASSIGN_OR_RETURN(std::string text,
                          Env::Default()->ReadUserFile(r.budgets, 1 << 20, "--budgets"));
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
    const std::vector<std::string> argv = {"sacct",
                                           "--allusers",
                                           "--parsable2",
                                           "--format=JobID,User,Account,Partition",
                                           "--starttime=" + local(input.since_ms),
                                           "--endtime=" + local(input.until_ms)};
    Result<CommandOutput> out = RunCommand(argv, std::chrono::seconds(60), 64 << 20);
    if (!out.ok()) return out.status().WithContext("--sacct");
    CGOV_ASSIGN_OR_RETURN(slurm, ParseSlurmAccounting(out->out, "sacct", &slurm_skipped));
    slurm_source = "--sacct (sacct " + argv[4] + " " + argv[5] + ")";
  }
  if (slurm) {
    const size_t matched = ApplySlurmJobs(*slurm, &input.identities);
    input.notes.push_back(fmt::format("{}: {} job(s) read, {} process identit{} matched by job id",
                                      slurm_source, slurm->size(), matched,
                                      matched == 1 ? "y" : "ies"));
    for (const std::string& why : slurm_skipped) input.notes.push_back(why);
  }
  CGOV_ASSIGN_OR_RETURN(HistorySummary summary, SummarizeHistory(input, options));
  if (budgets) CGOV_RETURN_IF_ERROR(AddBudgets(r, options, *budgets, &summary));
  if (bill) {
    summary.showback =
        BillShowback(input, options.by, bill->bill, bill->resource_host, options.idle_cost);
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
  return put(
      r.format == "csv"    ? HistoryShowbackCsv(summary)
      : r.format == "html" ? HistoryReportHtml(summary)
      : r.format == "md"
          ? HistoryReportText(summary, kMarkdown)
          : HistoryReportText(
                summary, TextStyle{false, r.out.empty() && TerminalWantsColor(STDOUT_FILENO)}));
}

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
    // Read on a day far from 1970: east of UTC, 1970-01-01T00:00+05:00 is before the epoch,
    // which timestamps may not be (issue 57, 12: +05:00 was refused while -03:00 was taken).
    constexpr int64_t kProbeDayMs = 946'684'800'000;  // 2000-01-01T00:00Z
    Result<int64_t> probe = ParseTimestampMs("2000-01-01T00:00" + tz);
    if (!probe.ok()) {
      return InvalidArgument(fmt::format(
          "--tz {}: expected UTC, +HH:MM, -HH:MM or a zone name such as Europe/Berlin", tz));
    }
    const int64_t offset_s = (kProbeDayMs - *probe) / 1000;
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
    return InvalidArgument(
        fmt::format("--tz {}: no such time zone (expected UTC, +HH:MM or a name from "
                    "/usr/share/zoneinfo such as Europe/Berlin)",
                    tz));
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

}  // namespace cgov
