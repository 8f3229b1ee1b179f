#include "cli/run.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/command_table.h"
#include "cli/usage_exit.h"
#include "app/price_flags.h"
#include "app/run/run_recorder.h"
#include "core/atomic_file.h"
#include "core/duration.h"
#include "core/json_writer.h"
#include "core/text.h"
#include "core/time_format.h"
#include "os/clock.h"
#include "os/file_reader.h"
#include "os/job_process.h"
#include "os/terminal.h"
#include "report/html_report.h"
#include "report/run_report.h"
#include "report/summary_json.h"
#include "report/summary_read.h"
#include "telemetry/job_tree.h"
#include "telemetry/procfs_pid.h"

namespace cgov::cli {
namespace {

constexpr std::chrono::milliseconds kMinInterval{100};
constexpr const char* kOutputFiles[] = {"samples.jsonl", "summary.json", "report.md",
                                        "report.html", "progress.log"};

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; }

bool IsEmptyDir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_empty(path, ec) && !ec;
}

Status MakeDir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return InvalidArgument(fmt::format("cannot create output directory {}: {} (choose another "
                                       "with --out)", path, ec.message()));
  }
  return Status::Ok();
}

// The job's argv as records and reports show it (the job itself gets the bytes it was given).
std::vector<std::string> PrintableCommand(const std::vector<std::string>& command) {
  std::vector<std::string> out;
  for (const std::string& arg : command) out.push_back(SafeText(arg));
  return out;
}

// Fills what the caller knows of the summary: times, exit, rusage.
void FillOutcome(const RunOptions& o, int64_t start_wall_ns, int64_t start_mono_ns,
                 const JobOutcome& outcome, RunSummary* s) {
  SystemClock clock;
  s->command = PrintableCommand(o.command);
  s->tags = o.tags;
  s->interval_s = static_cast<double>(o.interval.count()) / 1000.0;
  s->started_at_ns = start_wall_ns;
  s->ended_at_ns = clock.WallNs();
  s->duration_s = static_cast<double>(clock.MonotonicNs() - start_mono_ns) * 1e-9;
  s->exit_code = outcome.exit_code;
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  s->job_cpu_seconds = Seconds(children.ru_utime) + Seconds(children.ru_stime);
  s->agent_cpu_seconds = Seconds(self.ru_utime) + Seconds(self.ru_stime);
  s->agent_cpu_pct = s->duration_s > 0 ? 100.0 * s->agent_cpu_seconds / s->duration_s : 0;
  // ru_maxrss would carry the peak of the image before exec (the shell or Python that started
  // cgov): VmHWM is this process image's own peak.
  s->agent_rss_max_bytes = static_cast<uint64_t>(self.ru_maxrss) * 1024;
  RootedFileReader own_proc;
  std::string status;
  if (own_proc.Read("/proc/self/status", &status).ok()) {
    if (auto hwm = ParseStatusKb(status, "VmHWM")) s->agent_rss_max_bytes = *hwm;
  }
}

// Each output file, written atomically (fsynced before its rename; the directory is the
// caller's to sync).
Status WriteSummaryJson(const std::string& dir, const RunSummary& summary) {
  return WriteFileAtomically(dir + "/summary.json", DumpJson(SummaryJson(summary), 2) + "\n",
                             false);
}
Status WriteReportHtml(const std::string& dir, const RunSummary& summary) {
  return WriteFileAtomically(dir + "/report.html", RunReportHtml(summary), false);
}

// Writes summary.json, report.html and report.md one after the other, and the directory once
// after the last (each fsync waits for the disk). A failure becomes a warning, which the files
// after it carry: report.html names summary.json's, report.md (and the report on stderr) both.
// Each failure is also added to *failed; *written: the files that are there (samples.jsonl
// first, which exists from the start).
void WriteOutputsInTurn(const std::string& dir, RunSummary* summary, std::string* report,
                        std::vector<std::string>* written, std::vector<std::string>* failed) {
  *written = {"samples.jsonl"};
  if (Status json_status = WriteSummaryJson(dir, *summary); !json_status.ok()) {
    summary->warnings.push_back(json_status.message());
    failed->push_back(json_status.message());
  } else {
    written->push_back("summary.json");
  }
  Status page = WriteReportHtml(dir, *summary);
  if (!page.ok()) {
    summary->warnings.push_back(page.message());
    failed->push_back(page.message());
  }
  std::vector<std::string> with_md = *written;
  with_md.push_back("report.md");
  if (page.ok()) with_md.push_back("report.html");
  *report = RunReportMarkdown(*summary, dir, with_md);
  Status md = WriteFileAtomically(dir + "/report.md", *report, false);
  if (!md.ok()) {
    summary->warnings.push_back(md.message());
    failed->push_back(md.message());
    with_md.erase(std::find(with_md.begin(), with_md.end(), "report.md"));
    *report = RunReportMarkdown(*summary, dir, with_md);
  }
  *written = std::move(with_md);
  SyncDirectory(dir);  // as before, a directory that cannot be synced is not a warning
}

// Writes summary.json, report.html and report.md; failures become warnings (the job's status is
// unaffected). All three at once, two of them on threads of their own: the job has ended and
// every millisecond here is added to it (docs/benchmarks.md). Should any fail, or a thread not
// start, they are written again in turn (WriteOutputsInTurn), so that each names the failures.
// *written: the files that are there, in the order the report names them; *failed: what went
// wrong, one message a file.
void WriteOutputs(const std::string& dir, RunSummary* summary, std::string* report,
                  std::vector<std::string>* written, std::vector<std::string>* failed) {
  if (dir.empty()) {
    *report = RunReportMarkdown(*summary, "");
    return;
  }
  Status json_status, page;
  std::thread json_writer, page_writer;
  bool started = true;
  try {
    json_writer = std::thread([&] { json_status = WriteSummaryJson(dir, *summary); });
    page_writer = std::thread([&] { page = WriteReportHtml(dir, *summary); });
  } catch (const std::system_error&) {
    started = false;
  }
  *report = RunReportMarkdown(*summary, dir);
  const Status md = WriteFileAtomically(dir + "/report.md", *report, false);
  if (json_writer.joinable()) json_writer.join();
  if (page_writer.joinable()) page_writer.join();
  if (!started || !json_status.ok() || !page.ok() || !md.ok()) {
    return WriteOutputsInTurn(dir, summary, report, written, failed);
  }
  *written = kRunOutputFiles;
  SyncDirectory(dir);  // as before, a directory that cannot be synced is not a warning
}

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

// The end of the progress file the job writes. The job controls that path: it may put a FIFO,
// a device or a symlink to anything there, or write one endless line. So: no symlink, regular
// files only, never blocking, and only the last kProgressTailBytes (the last line is all that
// counts). NotFound when the job wrote none. *name: how errors name what was read (with
// "(last 64 KiB)" when that was not the whole file, so line numbers count from there).
constexpr size_t kProgressTailBytes = 64 * 1024;

Status ReadProgressTail(const std::string& path, std::string* out, std::string* name) {
  out->clear();
  *name = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return NotFound(path);
    return InvalidArgument(fmt::format("{}: progress file not read: {}", path,
                                       e == ELOOP ? "a symlink (not followed)" : strerror(e)));
  }
  struct stat st {};
  Status status = Status::Ok();
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = InvalidArgument(fmt::format("{}: progress file not read: not a regular file", path));
  } else {
    const off_t from = st.st_size > static_cast<off_t>(kProgressTailBytes)
                           ? st.st_size - static_cast<off_t>(kProgressTailBytes)
                           : 0;
    out->resize(kProgressTailBytes);
    const ssize_t n = pread(fd, out->data(), kProgressTailBytes, from);
    out->resize(n > 0 ? static_cast<size_t>(n) : 0);
    // Started inside a line: drop its end, unless it is the only one (then it is too long).
    if (from > 0 && out->find('\n') != std::string::npos) out->erase(0, out->find('\n') + 1);
    if (from > 0) *name += " (last 64 KiB)";
  }
  ::close(fd);
  return status;
}

// Prices, findings and savings into the summary, with the work from --work or the progress file
// and the instance type --detect-instance found. Problems become warnings: the job is done.
void AnalyzeRun(const RunOptions& o, const std::string& progress_file,
                const std::string& detected_instance, RunSummary* summary) {
  std::optional<double> work = o.work;
  std::string unit = o.unit;
  std::string text;
  std::string read_name;
  Status read = work ? NotFound("") : ReadProgressTail(progress_file, &text, &read_name);
  if (!read.ok() && read.code() != StatusCode::kNotFound) {
    summary->warnings.push_back(read.message());
  } else if (read.ok()) {
    auto progress = ParseProgress(text, read_name);
    if (!progress.ok()) {
      summary->warnings.push_back(progress.status().message());
    } else if (*progress) {
      work = (*progress)->first;
      if (!(*progress)->second.empty()) unit = (*progress)->second;
    }
  }
  PriceOptions price = o.price;
  if (!detected_instance.empty() && !price.price_per_gpu_hour && price.instance_type.empty()) {
    if (ResolvePrice({std::nullopt, detected_instance, false}, "", o.Catalog()).ok()) {
      price.instance_type = detected_instance;
    } else {
      summary->warnings.push_back(fmt::format(
          "instance detection: {} is not in the price catalog; priced by GPU model",
          detected_instance));
    }
  }
  if (Status analyzed = Analyze(price, work, unit, o.Catalog(), summary); !analyzed.ok()) {
    summary->warnings.push_back(analyzed.message());
  }
}

// This run against --baseline's runs, from the summary.json it is about to write.
void CompareWithBaselines(const RunOptions& o, RunSummary* summary) {
  if (o.baselines.empty()) return;
  Result<RunDigest> current = DigestFromSummaryJson(SummaryJson(*summary), "this run");
  if (!current.ok()) {
    summary->warnings.push_back(current.status().message());
    return;
  }
  Result<RunComparison> compared = CompareRuns(o.baselines, *current, o.fail_on_regression);
  if (!compared.ok()) {
    summary->warnings.push_back(compared.status().message());
    return;
  }
  summary->baseline = std::move(compared).value();
  for (const RunDigest& b : o.baselines) summary->baseline_paths.push_back(b.path);
}

// --fail-on: the gate fires when the job succeeded and a finding of that severity or worse
// fired; --fail-on-regression: when it succeeded and its cost rose beyond the limit. Decided
// before summary.json is written, which says it (`gate`).
void EvaluateGate(const RunOptions& o, int job_exit_code, RunSummary* summary) {
  if (!o.fail_on && !o.fail_on_regression) return;
  summary->gate = RunGate{};
  RunGate& gate = *summary->gate;
  gate.exit_status = job_exit_code;
  if (job_exit_code != 0) return;
  if (summary->baseline && summary->baseline->regressed) {
    gate.reason = fmt::format("--fail-on-regression {:g}: {}", *o.fail_on_regression,
                              summary->baseline->verdict);
  } else if (o.fail_on) {
    for (const Finding& f : summary->findings) {
      if (f.severity < *o.fail_on) continue;
      gate.reason = fmt::format("--fail-on {}: finding '{}' is {}", SeverityName(*o.fail_on),
                                f.id, SeverityName(f.severity));
      break;
    }
  }
  gate.fired = !gate.reason.empty();
  if (gate.fired) gate.exit_status = o.gate_exit_code;
}

// The exit status: the job's, or the gate's when it fired (said on stderr).
int GateExitCode(const RunSummary& summary, int job_exit_code) {
  if (!summary.gate || !summary.gate->fired) return job_exit_code;
  WriteStderr(fmt::format("cgov run: exit {}: {}\n", summary.gate->exit_status,
                          summary.gate->reason));
  return summary.gate->exit_status;
}

}  // namespace

std::string CommandLabel(const std::string& argv0) {
  std::string name = argv0.substr(argv0.rfind('/') == std::string::npos ? 0 : argv0.rfind('/') + 1);
  std::string label;
  for (char c : name) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    label += safe ? c : '_';
  }
  if (label.empty() || label == "." || label == "..") label = "job";
  return label.substr(0, 64);
}

Result<RunOptions> ParseRunOptions(int argc, char** argv, int* help_exit) {
  *help_exit = -1;
  int dash = -1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      dash = i;
      break;
    }
  }
  RunOptions o;
  std::string interval = "1s";
  std::vector<std::string> tag_flags;
  std::string price, fail_on;
  std::optional<double> work;
  std::vector<std::string> baseline_paths;
  CLI::App app{"Run COMMAND exactly as it would run without cgov (same stdin/stdout/stderr, "
               "environment and exit status), sample GPUs, host and the job's processes while it "
               "runs, and report at the end on stderr and in files.\n"
               "Exit status: the job's own; 128+N if a signal N ended it; 127 if COMMAND is not "
               "found; 126 if it cannot be executed; 2 for bad options (the job is not started); 3 "
               "when --fail-on's severity fired, or --fail-on-regression's limit was passed, on a "
               "job that succeeded.",
               "cgov run [options] -- COMMAND [ARG]..."};
  app.add_option("--out", o.out_dir, "output directory (default ./cgov-runs/<UTC time>-<command>)");
  app.add_flag("--force", o.force, "write into --out even if it is not empty (replacing this "
                                   "run's three files there)");
  app.add_option("--interval", interval, "time between samples: 100ms to 1h (default 1s)");
  app.add_option("--tag", tag_flags, "KEY=VALUE label, repeatable (project, team and user are "
                                     "grouped by in reports); also CGOV_TAGS=\"k=v,k=v\"");
  app.add_flag("--quiet", o.quiet, "do not print the report on stderr (files are still written)");
  app.add_option("--price-per-gpu-hour", price, "USD per GPU-hour (e.g. 2.49); wins over the "
                                                "catalog");
  app.add_option("--instance-type", o.price.instance_type,
                 "cloud instance type whose catalog list price applies (e.g. p5.48xlarge)");
  app.add_flag("--spot", o.price.spot, "the GPUs are spot capacity: use spot prices");
  app.add_option("--price-catalog", o.catalog_path,
                 "price catalog JSON to use instead of the built-in one (format: data/prices.json; "
                 "env CGOV_PRICE_CATALOG)")
      ->envname("CGOV_PRICE_CATALOG");
  app.add_option("--work", work, "work the job did, for cost per unit (see --unit; or have the job "
                                 "write $CGOV_PROGRESS_FILE)");
  app.add_option("--unit", o.unit, "unit of --work: samples, tokens or steps (default samples)")
      ->check(CLI::IsMember({"samples", "tokens", "steps"}));
  app.add_flag("--detect-instance", o.detect_instance,
               "ask the cloud metadata service for the instance type, once, at start (opt-in; "
               "300 ms at most; its price applies unless --price-per-gpu-hour or --instance-type)");
  app.add_option("--metadata-endpoint", o.metadata_endpoint,
                 "URL --detect-instance asks (default AWS IMDS: "
                 "http://169.254.169.254/latest/meta-data/instance-type)");
  app.add_option("--fail-on", fail_on, "exit 3 when the job succeeded but a finding of this "
                                       "severity or worse fired: warning or critical (CI gates)")
      ->check(CLI::IsMember({"warning", "critical"}));
  app.add_option("--gate-exit-code", o.gate_exit_code,
                 "the exit status of a fired gate (default 3): pick one the job never exits with; "
                 "summary.json's `gate` says which it was either way")
      ->check(CLI::Range(1, 255));
  app.add_option("--baseline", baseline_paths,
                 "a previous run's summary.json, or a directory of them (those with this run's "
                 "tags, branch/commit aside), to compare with; repeatable (docs/ci.md)");
  app.add_option("--fail-on-regression", o.fail_on_regression,
                 "exit 3 when the job succeeded but its cost per unit of work (or per run) rose "
                 "more than PCT % over the baseline (and above every baseline when there are "
                 "several)")
      ->check(CLI::Range(0.0, 1e6));
  app.add_option("--db", o.db, "also record the run into this history database (created if "
                             "needed): cgov report --db shows it, its processes named by the "
                             "run's tags (docs/ci.md)");
  app.add_option("--nvml-lib", o.nvml_lib, "NVML library to load (env CGOV_NVML_LIB)")
      ->envname("CGOV_NVML_LIB");
  app.add_option("--host-root", o.host_root, "read /proc and /sys under this directory (env "
                                             "CGOV_HOST_ROOT)")
      ->envname("CGOV_HOST_ROOT")
      ->check(CLI::ExistingDirectory);
  const int option_count = dash < 0 ? argc : dash;
  app.allow_extras();  // words that are not options: judged below, with a better message
  try {
    app.parse(option_count, argv);
  } catch (const CLI::ParseError& e) {
    *help_exit = UsageExit(app, e);
    return InvalidArgument("");  // already printed by CLI11
  }
  if (dash < 0) {
    return InvalidArgument("cgov run: missing '--' before the command: cgov run [options] -- "
                           "COMMAND [ARG]...");
  }
  if (!app.remaining().empty()) {
    return InvalidArgument(fmt::format("cgov run: unexpected '{}' before '--' (options go "
                                       "before '--', the command after it)",
                                       app.remaining().front()));
  }
  for (int i = dash + 1; i < argc; ++i) o.command.emplace_back(argv[i]);
  if (o.command.empty()) return InvalidArgument("cgov run: no COMMAND after '--'");
  Result<std::chrono::milliseconds> parsed = ParseDuration(interval);
  if (!parsed.ok()) return parsed.status().WithContext("cgov run: --interval");
  if (*parsed < kMinInterval || *parsed > std::chrono::hours(1)) {
    return InvalidArgument(fmt::format("cgov run: --interval {}: must be between 100ms and 1h",
                                       interval));
  }
  o.interval = *parsed;
  CGOV_RETURN_IF_ERROR(ApplyPricingFlags(price, work, fail_on, &o));
  const char* env_tags = std::getenv("CGOV_TAGS");
  Result<Tags> tags = MergeTags(env_tags ? env_tags : "", tag_flags);
  if (!tags.ok()) return tags.status().WithContext("cgov run");
  o.tags = std::move(tags).value();
  if (o.fail_on_regression && baseline_paths.empty()) {
    return InvalidArgument("cgov run: --fail-on-regression needs --baseline PATH");
  }
  if (!baseline_paths.empty()) {
    Result<std::vector<RunDigest>> baselines = LoadBaselines(baseline_paths, o.tags);
    if (!baselines.ok()) return baselines.status().WithContext("cgov run: --baseline");
    o.baselines = std::move(baselines).value();
  }
  return o;
}

Result<std::vector<RunDigest>> LoadBaselines(const std::vector<std::string>& paths,
                                             const Tags& tags) {
  std::vector<RunDigest> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    const bool directory = std::filesystem::is_directory(path, ec);
    CGOV_ASSIGN_OR_RETURN(std::vector<std::string> files, FindSummaries({path}));
    size_t matched = 0;
    for (const std::string& file : files) {
      CGOV_ASSIGN_OR_RETURN(RunDigest digest, ReadRunDigest(file));
      if (directory && !SameJobTags(digest.tags, tags)) continue;
      out.push_back(std::move(digest));
      ++matched;
    }
    if (matched == 0) {
      std::string wanted;
      for (const auto& [k, v] : tags) wanted += fmt::format("{}{}={}", wanted.empty() ? "" : " ", k, v);
      return InvalidArgument(fmt::format("{}: no summary.json there has this run's tags ({})",
                                         path, wanted.empty() ? "none" : wanted));
    }
  }
  return out;
}

Result<std::optional<std::pair<double, std::string>>> ParseProgress(std::string_view text,
                                                                    std::string_view file) {
  std::string_view last;
  size_t line_no = 0, n = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++n;
    std::string_view line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      last = line;
      line_no = n;
    }
    start = end + 1;
  }
  if (last.empty()) return std::optional<std::pair<double, std::string>>();
  std::string copy(last);
  char* rest = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &rest);
  std::string unit;
  if (rest != nullptr) unit = rest;
  unit.erase(0, unit.find_first_not_of(" \t"));
  unit.erase(unit.find_last_not_of(" \t\r") + 1);
  const bool known_unit = unit.empty() || unit == "samples" || unit == "tokens" || unit == "steps";
  if (rest == copy.c_str() || errno != 0 || !(value >= 0) || !std::isfinite(value) ||
      !known_unit) {
    // An excerpt, escaped: the line is the job's (any bytes, any length).
    const std::string excerpt = SafeText(last.substr(0, 80)) + (last.size() > 80 ? "…" : "");
    return InvalidArgument(fmt::format(
        "{}:{}: progress line '{}': write the cumulative work as \"N\" or \"N samples|tokens|steps\"",
        file, line_no, excerpt));
  }
  return std::optional<std::pair<double, std::string>>(std::make_pair(value, unit));
}

Result<std::string> PrepareOutputDir(const RunOptions& o, int64_t now_wall_ns) {
  if (o.out_dir.empty()) {
    const std::string base =
        "cgov-runs/" + FormatCompactUtc(now_wall_ns) + "-" + CommandLabel(o.command[0]);
    std::string dir = base;
    for (int n = 2; std::filesystem::exists(dir); ++n) dir = fmt::format("{}-{}", base, n);
    CGOV_RETURN_IF_ERROR(MakeDir(dir));
    return dir;
  }
  std::string dir = o.out_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return InvalidArgument(fmt::format("--out {}: exists and is not a directory", dir));
  }
  if (std::filesystem::exists(dir, ec) && !IsEmptyDir(dir)) {
    if (!o.force) {
      return InvalidArgument(fmt::format(
          "--out {}: directory is not empty; choose another, or pass --force to replace this "
          "run's files there", dir));
    }
    for (const char* file : kOutputFiles) std::filesystem::remove(dir + "/" + file, ec);
  }
  CGOV_RETURN_IF_ERROR(MakeDir(dir));
  return dir;
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
  IgnoreFileSizeSignal();  // a full disk and `ulimit -f` are both failed writes, said as such
  SystemClock clock;
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
  std::unique_ptr<RunHistory> history;
  if (!o.db.empty()) {
    const passwd* pw = getpwuid(geteuid());
    auto opened = RunHistory::Open(o.db, RunIdentity(o.tags, pw != nullptr ? pw->pw_name : ""));
    if (!opened.ok()) {
      WriteStderr(fmt::format("cgov run: --db {}\n", opened.status().message()));
      discard_outputs();
      return kExitUsage;
    }
    history = std::move(opened).value();
  }

  // The job may report its progress here (docs/run.md); set before any thread exists.
  const std::string progress_file = std::filesystem::absolute(*dir + "/progress.log").string();
  setenv("CGOV_PROGRESS_FILE", progress_file.c_str(), 1);
  RootedFileReader files(o.host_root);
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
  RunRecorder recorder(
      {o.nvml_lib, o.host_root, o.interval, start_mono_ns, getpid(), std::move(preexisting),
       o.detect_instance ? o.metadata_endpoint : "", history.get(), header.host.hostname,
       start_wall_ns / 1'000'000,
       [&o](const GpuInfo& gpu) {
         std::optional<uint64_t> mib;
         if (gpu.memory_total_bytes) mib = *gpu.memory_total_bytes >> 20;
         return ResolveUnitPrice(o.price, gpu.name, gpu.mig, o.Catalog(), mib);
       }},
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
  // A person at a terminal reads plain text (colour unless NO_COLOR); a log or a pipe gets the
  // Markdown that report.md holds. With --quiet, an output that failed is still said.
  if (!o.quiet) {
    WriteStderr("\n" + (IsTerminal(STDERR_FILENO)
                             ? RunReportText(summary, *dir,
                                             TextStyle{false, TerminalWantsColor(STDERR_FILENO)},
                                             written)
                             : report));
  } else {
    for (const std::string& f : failed) WriteStderr(fmt::format("cgov run: warning: {}\n", f));
  }
  return GateExitCode(summary, outcome.exit_code);
}

}  // namespace cgov::cli
