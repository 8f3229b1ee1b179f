// `cgov run`: flags into RunOptions, then the job, supervised and recorded, and its summary
// (src/app/run/) written and said.
#include "cli/run.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/price_flags.h"
#include "app/run/run_analysis.h"
#include "app/run/run_mail.h"
#include "app/run/run_outputs.h"
#include "app/run/run_recorder.h"
#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "core/duration.h"
#include "os/clock.h"
#include "os/env.h"
#include "os/file_reader.h"
#include "os/job_process.h"
#include "os/terminal.h"
#include "report/run_report.h"
#include "telemetry/job_tree.h"

namespace cgov::cli {
namespace {

// Validates and stores the pricing, work and gate flags (all before the job starts).
Status ApplyPricingFlags(const std::string& price, std::optional<double> work,
                         const std::string& fail_on, RunOptions* o) {
  // A typo must stop the run before it starts, not price it at zero at the end.
  Status priced = ApplyPriceFlags(o->catalog_path, price, &o->price, &o->catalog);
  if (!priced.ok()) return priced.WithContext("cgov run");
  if (work && !(*work > 0)) return InvalidArgument("cgov run: --work must be a number > 0");
  o->work = work;
  if (!fail_on.empty()) o->fail_on = ParseSeverity(fail_on);
  return Status::Ok();
}

// The exit status: the job's, or the gate's when it fired (said on stderr).
int GateExitCode(const RunSummary& summary, int job_exit_code) {
  if (!summary.gate || !summary.gate->fired) return job_exit_code;
  WriteStderr(
      fmt::format("cgov run: exit {}: {}\n", summary.gate->exit_status, summary.gate->reason));
  return summary.gate->exit_status;
}

// What the command line gave, before it is checked and typed.
struct RunFlags {
  RunOptions o;
  std::string interval = "1s";
  std::vector<std::string> tag_flags;
  std::string price, fail_on, detect_instance;
  std::optional<std::string> grid_intensity, energy_price;
  std::optional<double> work;
  std::vector<std::string> baseline_paths;
};

void AddOutputFlags(CLI::App& app, RunFlags& f) {
  RunOptions& o = f.o;
  app.add_option("--out", o.out_dir, "output directory (default ./cgov-runs/<UTC time>-<command>)");
  app.add_flag("--force", o.force,
               "write into --out even if it is not empty (replacing this run's four files there: "
               "samples.jsonl, summary.json, report.md, report.html)");
  app.add_option("--interval", f.interval, "time between samples: 100ms to 1h (default 1s)");
  app.add_option("--tag", f.tag_flags,
                 "KEY=VALUE label, repeatable (project, team and user are grouped by in reports); "
                 "also CGOV_TAGS=\"k=v,k=v\"");
  app.add_flag("--quiet", o.quiet, "do not print the report on stderr (files are still written)");
  AddColorFlag(app);
  app.add_option("--price-per-gpu-hour", f.price,
                 "USD per GPU-hour (e.g. 2.49); wins over the catalog");
  app.add_option("--instance-type", o.price.instance_type,
                 "cloud instance type whose catalog list price applies (e.g. p5.48xlarge)");
  app.add_flag("--spot", o.price.spot, "the GPUs are spot capacity: use spot prices");
  app.add_option("--price-catalog", o.catalog_path,
                 "price catalog JSON to use instead of the built-in one (format: data/prices.json; "
                 "env CGOV_PRICE_CATALOG)")
      ->envname("CGOV_PRICE_CATALOG");
  app.add_option("--energy-price", f.energy_price,
                 "USD a kWh of electricity: the job's energy cost beside its GPU-time dollars, not "
                 "added to them; none is assumed");
  app.add_option(
      "--grid-intensity", f.grid_intensity,
      "g CO2e a kWh of your grid (its published average): the job's CO2e; none is assumed");
  app.add_option("--work", f.work,
                 "work the job did, for cost per unit (see --unit; or have the job write "
                 "$CGOV_PROGRESS_FILE)");
  app.add_option("--unit", o.unit, "unit of --work: samples, tokens or steps (default samples)")
      ->check(CLI::IsMember({"samples", "tokens", "steps"}));
  app.add_option("--detect-instance", f.detect_instance,
                 "ask the cloud metadata service for the instance type, once, at start (opt-in; "
                 "aws: IMDSv2's token first, gcp, azure, or auto: each in turn; 300 ms at most; "
                 "its price applies unless --price-per-gpu-hour or --instance-type)")
      ->expected(0, 1)
      ->default_str("auto")
      ->type_name("auto|aws|gcp|azure");
  app.add_option("--metadata-endpoint", o.metadata_endpoint,
                 "where --detect-instance asks: scheme, numeric host and port")
      ->capture_default_str();
}

void AddGateFlags(CLI::App& app, RunFlags& f) {
  RunOptions& o = f.o;
  app.add_option("--fail-on", f.fail_on,
                 "exit 3 when the job succeeded but a finding of this severity or worse fired: "
                 "warning or critical (CI gates)")
      ->check(CLI::IsMember({"warning", "critical"}));
  app.add_option("--gate-exit-code", o.gate_exit_code,
                 "the exit status of a fired gate (default 3): pick one the job never exits with; "
                 "summary.json's `gate` says which it was either way")
      ->check(CLI::Range(1, 255));
  app.add_option("--baseline", f.baseline_paths,
                 "a previous run's summary.json, or a directory of them (those with this run's "
                 "tags, branch/commit aside), to compare with; repeatable (docs/ci.md)");
  app.add_option("--fail-on-regression", o.fail_on_regression,
                 "exit 3 when the job succeeded but its cost per unit of work (or per run) rose "
                 "more than PCT % over the baseline (and above every baseline when there are "
                 "several)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--db", o.db,
                 "also record the run into this history database (created if needed): cgov report "
                 "--db shows it, its processes named by the run's tags (docs/ci.md)");
  app.add_option("--mail-report", o.mail_report,
                 "a notifications file with a [[job_report]] table: mail the report to the job's "
                 "owner when it ends (docs/notifications.md)");
  app.add_option("--nvml-lib", o.nvml_lib, "NVML library to load (env CGOV_NVML_LIB)")
      ->envname("CGOV_NVML_LIB");
  app.add_option("--host-root", o.host_root,
                 "read /proc and /sys under this directory (env CGOV_HOST_ROOT)")
      ->envname("CGOV_HOST_ROOT")
      ->check(CLI::ExistingDirectory);
}

// --db: the history the run is also recorded into (null without --db), under the identity its
// tags and the user name.
Result<std::unique_ptr<RunHistory>> OpenRunHistory(const RunOptions& o) {
  if (o.db.empty()) return std::unique_ptr<RunHistory>();
  const passwd* pw = getpwuid(geteuid());
  return RunHistory::Open(o.db, RunIdentity(o.tags, pw != nullptr ? pw->pw_name : ""));
}

// The price of each GPU as the recorder's history records it.
auto GpuPricer(const RunOptions& o) {
  return [&o](const GpuInfo& gpu) {
    std::optional<uint64_t> mib;
    if (gpu.memory_total_bytes) mib = *gpu.memory_total_bytes >> 20;
    return ResolveUnitPrice(o.price, gpu.name, gpu.mig, o.Catalog(), mib);
  };
}

// A person at a terminal reads plain text (colour unless NO_COLOR); a log or a pipe gets the
// Markdown that report.md holds. With --quiet, an output that failed is still said.
void SayReport(const RunOptions& o, const RunSummary& summary, const std::string& dir,
               const std::string& report, const std::vector<std::string>& written,
               const std::vector<std::string>& failed) {
  if (o.quiet) {
    for (const std::string& f : failed) WriteStderr(fmt::format("cgov run: warning: {}\n", f));
    return;
  }
  WriteStderr("\n" +
              (IsTerminal(STDERR_FILENO)
                   ? RunReportText(summary, dir,
                                   TextStyle{false, TerminalWantsColor(STDERR_FILENO)}, written)
                   : report));
}

// --mail-report: the report mailed to the job's owner (the `user` tag, else the login name of
// the real uid), each outcome said on stderr; the exit status stays the job's.
void MailReport(const NotifyFile& file, const RunOptions& o, const RunSummary& summary,
                const std::string& dir, const std::string& report, int64_t now_ms) {
  JobReportInput in;
  if (auto user = o.tags.find("user"); user != o.tags.end()) {
    in.owner = user->second;
  } else {
    passwd pw{};
    passwd* found = nullptr;
    char buffer[4096];
    in.owner = getpwuid_r(getuid(), &pw, buffer, sizeof(buffer), &found) == 0 && found != nullptr
                   ? pw.pw_name
                   : std::to_string(getuid());
  }
  in.markdown = report;
  in.report_dir = dir;
  in.now_ms = now_ms;
  for (const std::string& line : MailJobReport(file, summary, in)) {
    WriteStderr(fmt::format("cgov run: job report {}\n", line));
  }
}

}  // namespace

Result<RunOptions> ParseRunOptions(int argc, char** argv, int* help_exit) {
  *help_exit = -1;
  int dash = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  }
  RunFlags f;
  RunOptions& o = f.o;
  CLI::App app{
      "Run COMMAND exactly as it would run without cgov (same stdin/stdout/stderr, environment and "
      "exit status), sample GPUs, host and the job's processes while it runs, and report at the "
      "end on stderr and in files.\n"
      "Exit status: the job's own; 128+N if a signal N ended it; 127 if COMMAND is not found; 126 "
      "if it cannot be executed; 2 for bad options (the job is not started); 3 when --fail-on's "
      "severity fired, or --fail-on-regression's limit was passed, on a job that succeeded.",
      "cgov run [options] -- COMMAND [ARG]..."};
  AddOutputFlags(app, f);
  AddGateFlags(app, f);
  const int option_count = dash < 0 ? argc : dash;
  app.allow_extras();  // words that are not options: judged below, with a better message
  try {
    app.parse(option_count, argv);
  } catch (const CLI::ParseError& e) {
    *help_exit = UsageExit(app, e);
    return InvalidArgument("");  // already printed by CLI11
  }
  if (dash < 0) {
    return InvalidArgument(
        "cgov run: missing '--' before the command: cgov run [options] -- COMMAND [ARG]...");
  }
  if (!app.remaining().empty()) {
    return InvalidArgument(fmt::format(
        "cgov run: unexpected '{}' before '--' (options go before '--', the command after it)",
        app.remaining().front()));
  }
  for (int i = dash + 1; i < argc; ++i) o.command.emplace_back(argv[i]);
  if (o.command.empty()) return InvalidArgument("cgov run: no COMMAND after '--'");
  Result<std::chrono::milliseconds> parsed = ParseDuration(f.interval);
  if (!parsed.ok()) return parsed.status().WithContext("cgov run: --interval");
  if (*parsed < kRunMinInterval || *parsed > std::chrono::hours(1)) {
    return InvalidArgument(
        fmt::format("cgov run: --interval {}: must be between 100ms and 1h", f.interval));
  }
  o.interval = *parsed;
  if (app.count("--detect-instance") > 0) {
    Result<CloudProvider> cloud = ParseCloudProvider(f.detect_instance);
    if (!cloud.ok()) return cloud.status().WithContext("cgov run");
    o.detect_instance = *cloud;
  }
  CGOV_RETURN_IF_ERROR(ApplyPricingFlags(f.price, f.work, f.fail_on, &o));
  if (f.grid_intensity) {
    Result<double> g = ParseGridIntensity(*f.grid_intensity);
    if (!g.ok()) return g.status().WithContext("cgov run");
    o.grid_g_per_kwh = *g;
  }
  if (f.energy_price) {
    Result<MicroUsd> usd = ParseEnergyPrice(*f.energy_price);
    if (!usd.ok()) return usd.status().WithContext("cgov run");
    o.energy_price_per_kwh = *usd;
  }
  const char* env_tags = std::getenv("CGOV_TAGS");
  Result<Tags> tags = MergeTags(env_tags ? env_tags : "", f.tag_flags);
  if (!tags.ok()) return tags.status().WithContext("cgov run");
  o.tags = std::move(tags).value();
  if (o.fail_on_regression && f.baseline_paths.empty()) {
    return InvalidArgument("cgov run: --fail-on-regression needs --baseline PATH");
  }
  if (!f.baseline_paths.empty()) {
    Result<std::vector<RunDigest>> baselines = LoadBaselines(f.baseline_paths, o.tags);
    if (!baselines.ok()) return baselines.status().WithContext("cgov run: --baseline");
    o.baselines = std::move(baselines).value();
  }
  return std::move(f.o);
}

int RunRun(int argc, char** argv) {
  int help_exit = -1;
  Result<RunOptions> parsed = ParseRunOptions(argc, argv, &help_exit);
  if (help_exit >= 0) return help_exit;
  if (!parsed.ok()) {
    WriteStderr(fmt::format("{}\n", parsed.status().message()));
    return kExitUsage;
  }
  const RunOptions& o = *parsed;
  std::optional<NotifyFile> mail;  // checked before the job starts, like every other option
  if (!o.mail_report.empty()) {
    Result<NotifyFile> file = ReadJobReportFile(o.mail_report);
    if (!file.ok()) {
      WriteStderr(fmt::format("{}\n", file.status().message()));
      return kExitUsage;
    }
    mail = std::move(file).value();
  }
  IgnoreFileSizeSignal();  // a full disk and `ulimit -f` are both failed writes, said as such
  Clock& clock = Env::Default()->clock();
  const int64_t start_wall_ns = clock.WallNs();
  Result<std::string> dir = PrepareOutputDir(o, start_wall_ns);
  if (!dir.ok()) {
    WriteStderr(fmt::format("cgov run: {}\n", dir.status().message()));
    return kExitUsage;
  }
  auto writer = JsonlWriter::Create(*dir + "/samples.jsonl");
  if (!writer.ok()) {
    WriteStderr(fmt::format("cgov run: {} (choose another directory with --out)\n",
                            writer.status().message()));
    return kExitUsage;
  }
  // The job never started: leave no empty samples.jsonl (nor the directory made for it).
  auto discard_outputs = [&] {
    writer->reset();
    std::error_code ec;
    std::filesystem::remove(*dir + "/samples.jsonl", ec);
    if (IsEmptyDir(*dir)) std::filesystem::remove(*dir, ec);
  };
  Result<std::unique_ptr<RunHistory>> history = OpenRunHistory(o);
  if (!history.ok()) {
    WriteStderr(fmt::format("cgov run: --db {}\n", history.status().message()));
    discard_outputs();
    return kExitUsage;
  }

  // The job may report its progress here (docs/run.md); set before any thread exists.
  const std::string progress_file = std::filesystem::absolute(*dir + "/progress.log").string();
  setenv("CGOV_PROGRESS_FILE", progress_file.c_str(), 1);
  std::unique_ptr<FileReader> files_reader = Env::Default()->NewFileReader(o.host_root);
  FileReader& files = *files_reader;
  std::vector<int> preexisting = ListPids(files);  // what runs now cannot be the job's
  JobSupervisor supervisor;  // before any thread: it sets the signal mask threads inherit
  const int64_t start_mono_ns = clock.MonotonicNs();
  Result<pid_t> pid = supervisor.Spawn(o.command);
  if (!pid.ok()) {
    WriteStderr(fmt::format("{}\n", pid.status().message()));
    discard_outputs();
    return ExitCodeForSpawnError(pid.status().code());
  }

  SamplesHeader header;
  header.command = PrintableCommand(o.command);
  header.tags = o.tags;
  header.host = ReadHostInfo(files);
  header.interval_s = static_cast<double>(o.interval.count()) / 1000.0;
  header.started_at_ns = start_wall_ns;
  RunRecorder recorder({o.nvml_lib, o.host_root, o.interval, start_mono_ns, getpid(),
                        std::move(preexisting), o.detect_instance ? o.metadata_endpoint : "",
                        o.detect_instance.value_or(CloudProvider::kAuto), history->get(),
                        header.host.hostname, start_wall_ns / 1'000'000, GpuPricer(o)},
                       header, writer->get());
  recorder.Start();
  // The catalog the report prices with, parsed while the job runs rather than before it starts
  // or after it ends (~1 ms on the 2-core VM; a signal meanwhile waits for Wait()).
  (void)o.Catalog();
  JobOutcome outcome = supervisor.Wait(nullptr);
  recorder.Stop();

  RunSummary summary;
  summary.host = header.host;
  FillOutcome(o, start_wall_ns, start_mono_ns, outcome, &summary);
  recorder.Finish(clock.MonotonicNs(), &summary);
  AnalyzeRun(o, progress_file, recorder.detected_instance_type(), &summary);
  CompareWithBaselines(o, &summary);
  EvaluateGate(o, outcome.exit_code, &summary);
  std::string report;
  std::vector<std::string> written, failed;
  if (!(*writer)->error().ok()) failed.push_back((*writer)->error().message());
  WriteOutputs(*dir, &summary, &report, &written, &failed);
  SayReport(o, summary, *dir, report, written, failed);
  if (mail) MailReport(*mail, o, summary, *dir, report, clock.WallNs() / 1'000'000);
  return GateExitCode(summary, outcome.exit_code);
}

}  // namespace cgov::cli
