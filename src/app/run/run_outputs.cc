// `cgov run`'s files: the output directory, and summary.json, report.html and report.md
// written at the end, each atomically.
#include "app/run/run_outputs.h"

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/json_writer.h"
#include "core/time_format.h"
#include "report/html_report.h"
#include "report/run_report.h"
#include "report/summary_json.h"

namespace cgov {
namespace {

constexpr const char* kOutputFiles[] = {"samples.jsonl", "summary.json", "report.md", "report.html",
                                        "progress.log"};

}  // namespace

bool IsEmptyDir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_empty(path, ec) && !ec;
}

namespace {

Status MakeDir(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    return InvalidArgument(fmt::format(
        "cannot create output directory {}: {} (choose another with --out)", path, ec.message()));
  }
  return Status::Ok();
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
}  // namespace

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
          "run's files there",
          dir));
    }
    for (const char* file : kOutputFiles) std::filesystem::remove(dir + "/" + file, ec);
  }
  CGOV_RETURN_IF_ERROR(MakeDir(dir));
  return dir;
}

}  // namespace cgov
