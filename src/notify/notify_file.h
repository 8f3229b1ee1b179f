// The notifications file of `cgov daemon --notify` (docs/notifications.md): which conditions
// become notices (rules), and where notices go (sinks). TOML, in the subset of
// core/toml_subset.h. Parsing is pure; the sinks' URLs are read from their own files
// (ReadSinkUrls), so a secret is never on a command line nor in a file that is shared.
#ifndef CGOV_NOTIFY_NOTIFY_FILE_H_
#define CGOV_NOTIFY_NOTIFY_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "notify/quiet_hours.h"

namespace cgov {

enum class NotifyRuleKind {
  kIdleHeld,        // a process holds GPU memory while the GPU idles, for `for`
  kTrulyIdle,       // a GPU with no process at all, for `for`
  kLowUtilization,  // a GPU in use whose utilization averaged below `below_pct` over `for`
  kMemoryHigh,      // a GPU whose memory is above `above_pct` full, for `for`
  kXid,             // the driver reported an Xid error
  kBudget,          // a budget's spend (this host's, --budgets) reached one of its alert_pcts
  kPolicy,          // --policy did (or in a dry run would do) something to a process
};
std::string_view NotifyRuleKindName(NotifyRuleKind kind);  // "idle_held", ...

enum class SinkKind { kWebhook, kSlack, kTeams, kTerminal, kEmail };
std::string_view SinkKindName(SinkKind kind);  // "webhook", "slack", "teams", "terminal", "email"

struct NotifySink {
  std::string name;  // unique in the file
  SinkKind kind = SinkKind::kWebhook;
  std::string url_file;         // holds the URL (a secret: Slack's and Teams' URLs are credentials)
  std::string url;              // read from url_file by ReadSinkUrls
  int64_t timeout_ms = 10'000;  // one delivery attempt, connection included
  int line = 0;
  std::string utmp_file = "/run/utmp";  // terminal: who is logged in where
  // email: url_file holds smtp://[user:password@]host[:port] or smtps://...
  std::string from{};             // the sender's address
  std::vector<std::string> to{};  // the recipients' addresses (the words below taken out)
  bool to_owner = false;          // "owner" in `to`: the notice's user (the recipients file)
  bool to_lead = false;           // "lead" in `to`: the leads of the user's team
  bool starttls = true;           // smtp://: only over TLS started by STARTTLS (tls = "starttls")
  std::string ca_file{};          // the SMTP server's CA, when not the system's
  QuietHours quiet{};             // quiet_hours: its notices wait, queued, until the window ends
};

struct NotifyRule {
  std::string name;  // unique in the file; default: the kind's name
  NotifyRuleKind kind = NotifyRuleKind::kIdleHeld;
  int64_t for_ms = 0;
  double threshold_pct = 0;     // below_pct (low_utilization) or above_pct (memory_high)
  int64_t remind_every_ms = 0;  // 0: no reminders
  // idle_held: the escalation ladder's second step (T2), counted like `for` from when the
  // process began to hold the GPU idle: its lead is told (an email sink's "lead"); before it
  // only its owner is. T1 is `for`, T3 the --policy that stops it. 0: no ladder.
  int64_t lead_after_ms = 0;
  std::vector<std::string> sinks;  // by name; default: every sink
  std::vector<std::string> users;  // idle_held: only these users' processes; default: everyone's
  int line = 0;
};

// `[[job_report]]` (at most one): a job's report mailed to its owner when it ends (`cgov run
// --mail-report FILE`, and `cgov daemon --notify` for the Slurm jobs and Kubernetes pods it
// sees; docs/notifications.md, "A job's report to its owner").
struct JobReportConfig {
  std::vector<std::string> sinks;  // email sinks by name; default: every email sink
  double min_gpu_hours = 0.25;     // a smaller job is not reported
  int64_t per_person_per_day = 5;  // at most this many a person a (local) day
  std::string log;  // cgov run: where they are counted ("": the user's state directory)
  // The daemon: a Slurm job or pod none of whose processes held a GPU for this long has ended.
  int64_t ended_after_ms = 300'000;
  int line = 0;
};

// `[[digest]]` (at most one): each week's digest mailed to each user and to each team's leads by
// `cgov daemon --notify` (docs/notifications.md, "Weekly digests"), on a schedule kept across
// restarts in the state database.
struct DigestConfig {
  std::vector<std::string> sinks;  // email sinks by name; default: every email sink
  int weekday = 0;                 // the day it is sent, 0 = Monday (the host's local time)
  int at_min = 8 * 60;             // the time of day it is sent, minutes after local midnight
  bool to_users = true;            // `to` has "users": each user their own
  bool to_leads = true;            // `to` has "leads": each team's leads their team's
  double min_usd = 1;              // a user whose week cost less gets none
  int line = 0;
};

struct NotifyFile {
  std::string path;
  std::vector<NotifySink> sinks;
  std::vector<NotifyRule> rules;
  std::optional<JobReportConfig> job_report{};
  std::optional<DigestConfig> digest{};
  int64_t queue_max = 10'000;      // notices kept undelivered, over all sinks
  int64_t retry_max_ms = 300'000;  // the longest wait between two attempts
  std::string recipients_file{};   // `recipients`: who is who (notify/recipients.h)
  std::string dry_run_dir{};       // `dry_run`: each delivery written to DIR/SINK/, none sent
  std::shared_ptr<const class Recipients> recipients{};  // read by ReadSinkUrls
};

inline constexpr size_t kMaxNotifyRules = 100;
inline constexpr size_t kMaxNotifySinks = 20;

// Errors are "path:line:column: key: message". Each sink and each rule is checked; a rule naming
// a sink that does not exist is refused.
Result<NotifyFile> ParseNotifyFile(std::string_view text, const std::string& path);

// Reads each sink's url_file: a regular file of one line, an http:// or https:// URL (an
// e-mail sink's: smtp:// or smtps://), readable by its owner only (mode 600 or 400), since the
// URL is the credential. Errors name the sink and the file. Then the recipients file, where the
// notifications file names one.
Status ReadSinkUrls(NotifyFile* file);

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTIFY_FILE_H_
