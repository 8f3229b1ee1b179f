#include "app/run/run_mail.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>

#include "core/money.h"
#include "core/text.h"
#include "notify/job_mail.h"
#include "notify/mail_message.h"
#include "notify/notifier.h"
#include "notify/recipients.h"
#include "os/env.h"
#include "os/input_file.h"
#include "os/smtp_client.h"
#include "store/sqlite_db.h"

namespace cgov {
namespace {

// report.html as the message's HTML part: the run's own page (its figures the summary's), up to
// this size; a larger or missing page leaves the text alone, with a line saying where it is.
constexpr size_t kMaxReportHtmlBytes = 8 << 20;

// The host's local day, "2026-11-29": a person's reports are counted by it.
std::string LocalDay(int64_t ms) {
  const time_t t = static_cast<time_t>(ms / 1000);
  tm local{};
  localtime_r(&t, &local);
  char day[16];
  strftime(day, sizeof(day), "%Y-%m-%d", &local);
  return day;
}

// The counts: one row a report sent. Opened (created with its directories, private to the
// user) only when a report is about to go.
class JobReportLog {
 public:
  static Result<JobReportLog> Open(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    CGOV_RETURN_IF_ERROR(CheckRegularOrAbsent(path, "the job reports' log"));
    CGOV_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db,
                          SqliteDb::Open(path, SqliteDb::OpenMode::kCreate));
    CGOV_RETURN_IF_ERROR(db->Exec("PRAGMA busy_timeout = 5000"));
    CGOV_RETURN_IF_ERROR(
        db->Exec("CREATE TABLE IF NOT EXISTS job_report(person TEXT NOT NULL, day TEXT NOT NULL, "
                 "at_ms INTEGER NOT NULL, host TEXT, command TEXT)"));
    ::chmod(path.c_str(), 0600);
    return JobReportLog(std::move(db));
  }
  Result<int64_t> SentOn(const std::string& person, const std::string& day) const {
    CGOV_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("SELECT count(*) FROM job_report WHERE "
                                                     "person = ? AND day = ?"));
    s.Bind(1, person).Bind(2, day);
    CGOV_ASSIGN_OR_RETURN(bool row, s.Step());
    return row ? s.Int(0) : 0;
  }
  Status Add(const std::string& person, const std::string& day, int64_t at_ms,
             const std::string& host, const std::string& command) {
    CGOV_ASSIGN_OR_RETURN(SqliteStmt s,
                          db_->Prepare("INSERT INTO job_report VALUES (?, ?, ?, ?, ?)"));
    return s.Bind(1, person).Bind(2, day).Bind(3, at_ms).Bind(4, host).Bind(5, command).Run();
  }

 private:
  explicit JobReportLog(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::unique_ptr<SqliteDb> db_;
};

std::string CommandText(const RunSummary& s) {
  std::string joined;
  for (const std::string& arg : s.command) joined += (joined.empty() ? "" : " ") + arg;
  joined = SafeText(joined);
  return joined.size() > 60 ? joined.substr(0, 57) + "..." : joined;
}

// The message: the Markdown report as text, report.html (when there and not too large) as HTML.
std::string Message(const NotifySink& sink, const std::vector<std::string>& to,
                    const RunSummary& summary, const JobReportInput& in) {
  const std::string html_path = in.report_dir + "/report.html";
  std::string text =
      fmt::format("Your job's report, from cgov run on {}.\n\n", summary.host.hostname);
  Result<std::string> html =
      in.report_dir.empty()
          ? Result<std::string>(NotFound("no report directory"))
          : Env::Default()->ReadUserFile(html_path, kMaxReportHtmlBytes, "report.html");
  text += in.markdown;
  text +=
      fmt::format("\n-- \nThe HTML report: {}\ncgov run --mail-report (docs/notifications.md)\n",
                  in.report_dir.empty() ? "not written" : html_path);
  std::string page = html.ok() ? *html
                               : "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                                 "<title>cgov run</title></head><body><pre>" +
                                     HtmlEscaped(text) + "</pre></body></html>";
  const std::string id = fmt::format("job-report/{}/{}", summary.host.hostname, in.now_ms);
  return ComposeMail({sink.from, to, JobReportSubject(summary), in.now_ms, id}, text, page);
}

// One sink's delivery (or the dry run's file): "" when it went, else why not.
std::string Deliver(const NotifyFile& file, const NotifySink& sink,
                    const std::vector<std::string>& to, const std::string& message,
                    int64_t now_ms) {
  if (!file.dry_run_dir.empty()) {
    Status s =
        WriteDryRunFile(file.dry_run_dir, sink.name, fmt::format("job-{}.eml", now_ms), message);
    return s.ok() ? "" : s.message();
  }
  MailSend send{sink.url, sink.starttls, sink.ca_file,    sink.from,
                to,       message,       sink.timeout_ms, nullptr};
  Result<MailOutcome> out = SendMail(send);
  if (!out.ok()) return out.status().message();
  if (out->sent) return "";
  return out->smtp_code > 0 ? fmt::format("SMTP {}: {}", out->smtp_code, out->error) : out->error;
}

}  // namespace

Result<NotifyFile> ReadJobReportFile(const std::string& path) {
  Result<std::string> text = Env::Default()->ReadUserFile(path, 1 << 20, "--mail-report");
  if (!text.ok()) return text.status().WithContext("cgov run");
  Result<NotifyFile> file = ParseNotifyFile(*text, path);
  if (!file.ok()) return file.status().WithContext("cgov run: --mail-report");
  if (!file->job_report) {
    return InvalidArgument(
        fmt::format("cgov run: --mail-report {}: no [[job_report]] table: nothing says where a "
                    "job's report goes",
                    path));
  }
  if (Status s = ReadSinkUrls(&*file); !s.ok()) return s.WithContext("cgov run: --mail-report");
  return file;
}

std::string DefaultJobReportLog() {
  const char* state = std::getenv("XDG_STATE_HOME");
  if (state != nullptr && state[0] == '/') return std::string(state) + "/cgov/job-reports.db";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr && home[0] == '/' ? home : "/tmp") +
         "/.local/state/cgov/job-reports.db";
}

std::string JobReportSubject(const RunSummary& s) {
  const CostBlock& c = s.cost;
  return fmt::format(
      "[cgov] Your job {} on {}: {:.3f} GPU-hours, {} ({:.1f} % of GPU capacity unused)",
      CommandText(s), SafeText(s.host.hostname), c.gpu_hours,
      c.priced ? FormatUsd(c.total) : "price unknown", c.waste_fraction * 100);
}

std::vector<std::string> MailJobReport(const NotifyFile& file, const RunSummary& summary,
                                       const JobReportInput& in) {
  const JobReportConfig& j = *file.job_report;
  if (summary.cost.gpu_hours < j.min_gpu_hours) {
    return {fmt::format("not mailed: {:.3f} GPU-hours, under {}'s min_gpu_hours ({})",
                        summary.cost.gpu_hours, file.path, j.min_gpu_hours)};
  }
  const std::string log_path = j.log.empty() ? DefaultJobReportLog() : j.log;
  Result<JobReportLog> log = JobReportLog::Open(log_path);
  if (!log.ok()) return {"not mailed: " + log.status().message()};  // names the file
  const std::string day = LocalDay(in.now_ms);
  Result<int64_t> sent = log->SentOn(in.owner, day);
  if (!sent.ok()) return {fmt::format("not mailed: {}: {}", log_path, sent.status().message())};
  if (*sent >= j.per_person_per_day) {
    return {fmt::format("not mailed: {} has had {} today ({}'s per_person_per_day)", in.owner,
                        *sent, file.path)};
  }
  std::vector<std::string> said;
  bool went = false;
  for (const std::string& name : j.sinks) {
    auto sink = std::find_if(file.sinks.begin(), file.sinks.end(),
                             [&](const NotifySink& s) { return s.name == name; });
    if (sink == file.sinks.end()) continue;  // ParseNotifyFile refused it
    const std::vector<std::string> to = JobReportAddresses(*sink, file.recipients.get(), in.owner);
    if (to.empty()) {
      said.push_back(fmt::format("not mailed through {:?}: no address for {}", name, in.owner));
      continue;
    }
    const std::string error = Deliver(file, *sink, to, Message(*sink, to, summary, in), in.now_ms);
    std::string addresses;
    for (const std::string& a : to) addresses += (addresses.empty() ? "" : ", ") + a;
    if (!error.empty()) {
      said.push_back(fmt::format("not mailed through {:?}: {}", name, error));
      continue;
    }
    went = true;
    said.push_back(fmt::format("{} to {} ({:?})",
                               file.dry_run_dir.empty() ? "mailed" : "written (dry run)", addresses,
                               name));
  }
  if (went) {
    Status added = log->Add(in.owner, day, in.now_ms, summary.host.hostname, CommandText(summary));
    if (!added.ok()) said.push_back(fmt::format("{}: not counted: {}", log_path, added.message()));
  }
  return said;
}

}  // namespace cgov
