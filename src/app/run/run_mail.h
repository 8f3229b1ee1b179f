// `cgov run --mail-report FILE`: the job's report mailed to its owner when it ends (issue 63;
// docs/notifications.md, "A job's report to its owner"). The notifications file's
// `[[job_report]]` says through which e-mail sinks, from what size, and how many a person a day;
// the message is the run's own reports (the Markdown one as text, report.html as HTML), so its
// figures are the summary's to the cent. Never changes the job's exit status.
#ifndef CGOV_APP_RUN_RUN_MAIL_H_
#define CGOV_APP_RUN_RUN_MAIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/run_summary.h"
#include "core/status.h"
#include "notify/notify_file.h"

namespace cgov {

// The file, read and checked before the job starts (its sinks' URL files and the recipients
// file too): a usage error, exit 2, names the file, line and key.
Result<NotifyFile> ReadJobReportFile(const std::string& path);

// The counts of reports sent, a SQLite file of the user's (`log`, else
// $XDG_STATE_HOME/cgov/job-reports.db, else ~/.local/state/cgov/job-reports.db).
std::string DefaultJobReportLog();

// What the run knows when it mails: who owns it, its reports and where they are.
struct JobReportInput {
  std::string owner;       // the `user` tag, else the login name of the real uid
  std::string markdown;    // report.md's text
  std::string report_dir;  // the run's directory (report.html is read from there)
  int64_t now_ms = 0;
};

// Decides (size, the day's count), composes, sends through each sink (or writes the file's
// dry run) and counts what went. Each returned line says what happened, for stderr.
std::vector<std::string> MailJobReport(const NotifyFile& file, const RunSummary& summary,
                                       const JobReportInput& in);

// The subject: "[cgov] Your job CMD on HOST: 1.234 GPU-hours, $4.56 (38.2 % of GPU capacity
// unused)"; figures as the reports print them.
std::string JobReportSubject(const RunSummary& summary);

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_MAIL_H_
