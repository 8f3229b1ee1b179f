// `cgov run`'s summary once the job ended: its outcome, the work it did, prices, findings,
// savings, the comparison with --baseline's runs and the CI gate.
#include "app/run/run_analysis.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "app/run/run_digests.h"
#include "core/text.h"
#include "os/clock.h"
#include "os/env.h"
#include "os/file_reader.h"
#include "report/summary_json.h"
#include "report/summary_read.h"
#include "telemetry/procfs_pid.h"

namespace cgov {
namespace {

double Seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec * 1e-6; }

}  // namespace

Status ReadProgressTail(const std::string& path, size_t max_bytes, std::optional<uint32_t> owner,
                        std::string* out, std::string* name) {
  out->clear();
  *name = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) return NotFound(path);
    return InvalidArgument(fmt::format("{}: progress file not read: {}", path,
                                       e == ELOOP ? "a symlink (not followed)" : strerror(e)));
  }
  ProgressTail tail;
  Status status = ReadOpenProgressTail(fd, path, max_bytes, owner, &tail);
  ::close(fd);
  *out = std::move(tail.text);
  *name = std::move(tail.name);
  return status;
}

Status ReadOpenProgressTail(int fd, std::string_view shown, size_t max_bytes,
                            std::optional<uint32_t> owner, ProgressTail* tail) {
  tail->text.clear();
  tail->name = std::string(shown);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return InvalidArgument(fmt::format("{}: progress file not read: not a regular file", shown));
  }
  if (owner && st.st_uid != *owner) {
    return InvalidArgument(
        fmt::format("{}: progress file not read: owned by uid {}, not the process's owner {}",
                    shown, st.st_uid, *owner));
  }
  tail->dev = static_cast<uint64_t>(st.st_dev);
  tail->ino = static_cast<uint64_t>(st.st_ino);
  const off_t from =
      st.st_size > static_cast<off_t>(max_bytes) ? st.st_size - static_cast<off_t>(max_bytes) : 0;
  std::string& out = tail->text;
  out.resize(max_bytes);
  const ssize_t n = pread(fd, out.data(), max_bytes, from);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  // Started inside a line: drop its end, unless it is the only one (then it is too long).
  if (from > 0 && out.find('\n') != std::string::npos) out.erase(0, out.find('\n') + 1);
  if (from > 0) tail->name += fmt::format(" (last {} KiB)", max_bytes / 1024);
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
  Clock& clock = Env::Default()->clock();
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
  std::unique_ptr<FileReader> own_proc_reader = Env::Default()->NewFileReader("/");
  FileReader& own_proc = *own_proc_reader;
  std::string status;
  if (own_proc.Read("/proc/self/status", &status).ok()) {
    if (auto hwm = ParseStatusKb(status, "VmHWM")) s->agent_rss_max_bytes = *hwm;
  }
}

// Prices, findings and savings into the summary, with the work from --work or the progress file
// and the instance type --detect-instance found. Problems become warnings: the job is done.
void AnalyzeRun(const RunOptions& o, const std::string& progress_file,
                const std::string& detected_instance, RunSummary* summary) {
  std::optional<double> work = o.work;
  std::string unit = o.unit;
  std::string text;
  std::string read_name;
  Status read =
      work ? NotFound("")
           : ReadProgressTail(progress_file, kProgressTailBytes, std::nullopt, &text, &read_name);
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
      summary->warnings.push_back(
          fmt::format("instance detection: {} is not in the price catalog; priced by GPU model",
                      detected_instance));
    }
  }
  if (Status analyzed = Analyze(price, work, unit, o.Catalog(), summary); !analyzed.ok()) {
    summary->warnings.push_back(analyzed.message());
  }
  summary->energy.grid_g_per_kwh = o.grid_g_per_kwh;
  summary->energy.price_per_kwh = o.energy_price_per_kwh;
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
      gate.reason = fmt::format("--fail-on {}: finding '{}' is {}", SeverityName(*o.fail_on), f.id,
                                SeverityName(f.severity));
      break;
    }
  }
  gate.fired = !gate.reason.empty();
  if (gate.fired) gate.exit_status = o.gate_exit_code;
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
      for (const auto& [k, v] : tags)
        wanted += fmt::format("{}{}={}", wanted.empty() ? "" : " ", k, v);
      return InvalidArgument(fmt::format("{}: no summary.json there has this run's tags ({})", path,
                                         wanted.empty() ? "none" : wanted));
    }
  }
  return out;
}

Result<std::optional<std::pair<double, std::string>>> ParseProgress(std::string_view text,
                                                                    std::string_view file,
                                                                    bool quote_line) {
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
      value > kMaxProgressWork || !known_unit) {
    // An excerpt, escaped: the line is the job's (any bytes, any length). Never for a file read
    // on another user's behalf (the daemon): its content stays out of every log.
    const std::string excerpt = SafeText(last.substr(0, 80)) + (last.size() > 80 ? "…" : "");
    return InvalidArgument(fmt::format(
        "{}:{}: progress line{}: write the cumulative work as \"N\" or \"N samples|tokens|steps\" "
        "(0 <= N <= 1e15)",
        SafeText(file), line_no, quote_line ? " '" + excerpt + "'" : " not understood"));
  }
  return std::optional<std::pair<double, std::string>>(std::make_pair(value, unit));
}

}  // namespace cgov
