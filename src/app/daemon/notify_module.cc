// --notify: each tick as the notification rules see it (GPUs, processes, Xids, the policy's
// actions, the budgets), its notices handed to the notifier, whose counts /metrics serves.
#include <algorithm>
#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "analysis/showback.h"
#include "app/daemon/daemon_config.h"
#include "app/daemon/daemon_modules.h"
#include "app/history/history_load.h"
#include "core/text.h"
#include "core/time_format.h"
#include "export/module_series.h"
#include "notify/digest.h"
#include "notify/job_mail.h"
#include "notify/mail_message.h"
#include "notify/notifier.h"
#include "notify/notify_engine.h"
#include "notify/recipients.h"
#include "os/log.h"

namespace cgov {
namespace {

class NotifyModule : public DaemonModule {
 public:
  // `state`: --notify-state, where undelivered notices and open incidents are kept.
  NotifyModule(DaemonContext* d, NotifyFile file, std::string state)
      : d_(*d), file_(std::move(file)), state_(std::move(state)) {
    d_.metrics_sections.push_back(series_);
  }
  std::string_view name() const override { return "notify"; }
  Status Start() override;
  Status AfterWrite(DaemonTick* tick) override;
  // What the last ticks brought is written before it goes.
  void Stop() override { notifier_.reset(); }

 private:
  void FillGpus(DaemonTick* tick);
  void FillProcesses(const DaemonTick& tick);
  void FillBudgets();
  void Notify(DaemonTick* tick);
  void RecordLadder(const std::vector<Notice>& notices);
  // [[digest]]: the week's digests, once their time has come (docs/notifications.md, "Weekly
  // digests").
  void DigestIfDue(int64_t now_ms);
  Status QueueDigest(const DigestWeek& week);
  // [[job_report]]: the Slurm jobs and pods whose processes hold GPUs, each reported to its
  // owner once none of them has for `ended_after` (docs/notifications.md, "A job's report to
  // its owner").
  struct TrackedJob {
    EndedJob job;
    std::set<uint32_t> identities;
    int64_t last_ms = 0;  // the last tick one of its processes held a GPU
  };
  void TrackJobs(const DaemonTick& tick, int64_t now_ms);
  Status ReportJob(const std::string& name, const TrackedJob& tracked);

  DaemonContext& d_;
  const NotifyFile file_;
  const std::string state_;
  std::shared_ptr<NoticeSeries> series_ = std::make_shared<NoticeSeries>();
  std::unique_ptr<Notifier> notifier_;
  std::unique_ptr<NotifyEngine> engine_;
  NotifyInput in_;  // rebuilt in place each tick
  bool ladder_failure_logged_ = false;
  int64_t digest_due_ms_ = 0;               // when to look next; 0: no [[digest]]
  std::map<std::string, TrackedJob> jobs_;  // "slurm/JOB", "pod/UID"
};

Status NotifyModule::Start() {
  const NotifyFile& file = file_;
  const std::string& state = state_;
  std::vector<Incident> open;
  int64_t waiting = 0;
  Result<std::unique_ptr<Notifier>> started =
      Notifier::Start(file, state, &open, &waiting, &d_.env());
  if (!started.ok()) return started.status().WithContext("--notify");
  notifier_ = std::move(started).value();
  std::vector<std::string> sinks;
  for (const NotifySink& s : file.sinks) sinks.push_back(s.name);
  engine_ = std::make_unique<NotifyEngine>(file.rules, std::move(sinks), d_.hostname());
  for (const Incident& i : engine_->Restore(std::move(open))) {
    LogWarning(d_.env(),
               "--notify: rule {:?} is no longer in {}: its open incident {} is dropped without a "
               "resolved notice",
               i.rule, file.path, i.key);
  }
  LogInfo(
      d_.env(),
      "--notify: {} rule(s), {} sink(s) from {}; state in {} ({} open incident(s), {} notice(s) "
      "waiting)",
      file.rules.size(), file.sinks.size(), file.path, state, engine_->incidents().size(), waiting);
  if (file.digest) {
    // The latest week due is looked at with the first tick: a digest whose time passed while
    // the daemon was down goes then, unless the state says it was queued.
    const DigestWeek latest = LatestDigestWeek(*file.digest, d_.NowMs());
    digest_due_ms_ = latest.send_ms;
    LogInfo(
        d_.env(),
        "--notify: weekly digests: the {} (due {}) unless the state says it was queued, then the "
        "next at {}",
        latest.key, FormatRfc3339Utc(latest.send_ms * 1'000'000),
        FormatRfc3339Utc(NextDigestWeek(*file.digest, latest).send_ms * 1'000'000));
  }
  return Status::Ok();
}

void NotifyModule::DigestIfDue(int64_t now_ms) {
  if (digest_due_ms_ == 0 || now_ms < digest_due_ms_) return;
  const DigestConfig& config = *file_.digest;
  const DigestWeek week = LatestDigestWeek(config, now_ms);
  if (Status s = QueueDigest(week); !s.ok()) {
    LogWarning(d_.env(), "--notify: the weekly {}: {} (tried again in a minute)", week.key,
               s.message());
    digest_due_ms_ = now_ms + 60'000;
    return;
  }
  digest_due_ms_ = NextDigestWeek(config, week).send_ms;
}

// The week's and the week before's summaries, read from the history as `cgov report --by user`
// reads them and priced as the cost counters are; each digest made a message per sink, queued
// with the week's key in one transaction.
Status NotifyModule::QueueDigest(const DigestWeek& week) {
  CGOV_ASSIGN_OR_RETURN(bool sent, notifier_->MailLogged(week.key));
  if (sent) {
    LogInfo(d_.env(), "--notify: the weekly {} was queued before (the state database says so)",
            week.key);
    return Status::Ok();
  }
  if (d_.writer() == nullptr) return Unavailable("the history is not open");
  const NotifyFile& file = file_;
  const int64_t started_ns = d_.clock().MonotonicNs();
  HistoryOptions options;
  options.by = HistoryBy::kUser;
  options.price = d_.options().price;
  options.catalog = &d_.options().catalog;
  CGOV_RETURN_IF_ERROR(d_.writer()->Commit());  // the week's last ticks, when it just ended
  HistoryStore& store = d_.writer()->store();
  CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                        LoadHistory(store, week.since_ms, week.until_ms, options.phases));
  CGOV_ASSIGN_OR_RETURN(HistorySummary summary, SummarizeHistory(in, options));
  CGOV_ASSIGN_OR_RETURN(HistoryInput prior_in,
                        LoadHistory(store, week.prior_since_ms, week.since_ms, options.phases));
  CGOV_ASSIGN_OR_RETURN(HistorySummary prior, SummarizeHistory(prior_in, options));
  const std::vector<DigestMail> mails =
      ComposeDigests({&summary, &prior, file.recipients.get(), *file.digest, week, d_.hostname()});
  const int64_t now_ms = d_.NowMs();
  std::vector<Delivery> queued;
  for (const std::string& name : file.digest->sinks) {
    auto sink = std::find_if(file.sinks.begin(), file.sinks.end(),
                             [&](const NotifySink& s) { return s.name == name; });
    if (sink == file.sinks.end()) continue;
    for (const DigestMail& m : mails) {
      std::string body = ComposeMail({sink->from, m.to, m.subject, now_ms, m.id}, m.text, m.html);
      queued.push_back({0, sink->name, m.id, std::move(body), now_ms, 0, now_ms, m.to});
    }
  }
  CGOV_ASSIGN_OR_RETURN(bool queued_now, notifier_->QueueMail(week.key, "", std::move(queued)));
  std::string whom;  // the first ten, then how many more
  for (size_t i = 0; i < mails.size() && i < 10; ++i) whom += (i ? ", " : "") + mails[i].who;
  if (mails.size() > 10) whom += fmt::format(" and {} more", mails.size() - 10);
  LogInfo(d_.env(), "--notify: the weekly {}: {} ({} message(s) per sink; made in {:.2f} s)",
          week.key,
          !queued_now    ? std::string("was queued before")
          : whom.empty() ? std::string("no one's week reached min_usd")
                         : "queued for " + whom,
          mails.size(), static_cast<double>(d_.clock().MonotonicNs() - started_ns) / 1e9);
  return Status::Ok();
}

void NotifyModule::FillGpus(DaemonTick* tick) {
  const std::vector<GpuInfo>& infos = d_.gpus();
  const std::vector<double>& usd = d_.gpu_usd_per_hour();
  const StoredTick& stored = tick->stored;
  in_.gpus.resize(std::min(stored.gpus.size(), infos.size()));
  for (size_t i = 0; i < in_.gpus.size(); ++i) {
    NotifyGpu& g = in_.gpus[i];
    g.id = {infos[i].index,
            infos[i].uuid.empty() ? fmt::format("index:{}", infos[i].index) : infos[i].uuid,
            infos[i].name};
    g.util_pct = tick->points()[i].util_pct;
    g.phase = tick->phases()[i];
    g.memory_pct.reset();
    const std::vector<GpuFastSample>& fast = tick->sample.gpu_fast;
    if (i < fast.size() && !stored.gpus[i].lost && fast[i].mem_used_bytes &&
        infos[i].memory_total_bytes.value_or(0) > 0) {
      g.memory_pct = 100.0 * static_cast<double>(*fast[i].mem_used_bytes) /
                     static_cast<double>(*infos[i].memory_total_bytes);
    }
    g.usd_per_hour = i < usd.size() ? usd[i] : 0;
  }
}

void NotifyModule::FillProcesses(const DaemonTick& tick) {
  in_.processes.clear();
  for (const StoredProcess& p : tick.stored.processes) {
    NotifyProcess& n = in_.processes.emplace_back();
    n.gpu_pos = p.gpu_pos;
    n.pid = p.pid;
    n.compute = p.compute;
    n.mem_mib = p.mem_used_mib.value_or(0);
    const IdentityRecord* id = d_.IdentityOf(p.identity_id);
    n.user = id != nullptr ? id->user : "";
    n.command = d_.CommandOf(p.command_id);
  }
}

void NotifyModule::FillBudgets() {
  in_.budgets.clear();
  if (!d_.budgets) return;
  d_.budgets->Read(in_.now_ms, [&](const std::vector<BudgetTracker::Row>& rows) {
    for (const BudgetTracker::Row& r : rows) {
      const std::string scope(HistoryByName(r.budget->scope));
      const std::string period(BudgetPeriodName(r.budget->period));
      in_.budgets.push_back({fmt::format("{} {}, {}ly", scope, r.budget->name, period),
                             fmt::format("{}/{}/{}", scope, r.budget->name, period),
                             static_cast<double>(r.budget->amount) / kMicroPerUsd,
                             static_cast<double>(r.spent) / kMicroPerUsd, r.budget->alert_pcts});
    }
  });
}

void NotifyModule::Notify(DaemonTick* tick) {
  in_.now_ms = tick->sample.wall_ns / 1'000'000;
  FillGpus(tick);
  FillProcesses(*tick);
  in_.xids.clear();
  for (const XidEvent& x : tick->xids) in_.xids.push_back({x.gpu_index, x.xid, x.unix_ms});
  in_.policy_actions.clear();
  const std::vector<uint32_t>& gpu_ids = d_.gpu_ids();
  for (const PolicyActionRecord& r : tick->policy_actions) {
    NotifyPolicyAction& a = in_.policy_actions.emplace_back();
    a.record = r;
    auto at = std::find(gpu_ids.begin(), gpu_ids.end(), r.gpu_id);
    if (at != gpu_ids.end()) a.gpu_pos = static_cast<size_t>(at - gpu_ids.begin());
  }
  FillBudgets();
  std::vector<Notice> notices = engine_->Evaluate(in_);
  if (notices.empty()) return;
  RecordLadder(notices);
  for (const Notice& n : notices) {
    LogInfo(d_.env(), "notice ({}): {}", NoticeEventName(n.event), n.summary);
  }
  std::vector<Incident> open;
  for (const auto& [key, incident] : engine_->incidents()) open.push_back(incident);
  notifier_->Submit(std::move(notices), std::move(open));
}

// An idle_held ladder's steps go to the history beside the policy's (docs/notifications.md, "The
// escalation ladder"): `told_user` at T1 (the firing notice), `told_lead` at T2; `cgov report`
// lists them under Policy actions and `cgov top` shows the last in its policy column.
void NotifyModule::RecordLadder(const std::vector<Notice>& notices) {
  const std::vector<NotifyRule>& rules = file_.rules;
  for (const Notice& n : notices) {
    if (n.kind != NotifyRuleKind::kIdleHeld ||
        (n.event != NoticeEvent::kFiring && n.event != NoticeEvent::kEscalated)) {
      continue;
    }
    auto rule = std::find_if(rules.begin(), rules.end(),
                             [&](const NotifyRule& r) { return r.name == n.rule; });
    if (rule == rules.end() || rule->lead_after_ms == 0 || d_.writer() == nullptr) continue;
    PolicyActionRecord r;
    r.ts_ms = n.at_ms;
    r.policy = n.rule;
    r.action = n.event == NoticeEvent::kFiring ? "told_user" : "told_lead";
    for (size_t i = 0; i < in_.gpus.size() && i < d_.gpu_ids().size(); ++i) {
      if (n.gpu && in_.gpus[i].id.uuid == n.gpu->uuid) r.gpu_id = d_.gpu_ids()[i];
    }
    r.pid = n.pid;
    r.user = n.user;
    r.command = n.command;
    r.idle_held_ms = std::max<int64_t>(0, n.at_ms - n.since_ms);
    r.outcome = fmt::format("notice to {}", fmt::join(n.sinks, ", "));
    Status s = d_.writer()->store().PutPolicyAction(r);
    if (!s.ok() && !ladder_failure_logged_) {
      LogWarning(d_.env(), "--notify: the ladder's step could not be recorded: {}", s.message());
      ladder_failure_logged_ = true;
    }
  }
}

void NotifyModule::TrackJobs(const DaemonTick& tick, int64_t now_ms) {
  const int64_t tick_ms = tick.sample.wall_ns / 1'000'000;  // the time the tick stands for
  for (const StoredProcess& p : tick.stored.processes) {
    const IdentityRecord* id = d_.IdentityOf(p.identity_id);
    if (id == nullptr || (id->slurm_job.empty() && id->pod.empty())) continue;
    const bool slurm = !id->slurm_job.empty();
    TrackedJob& t = jobs_[slurm ? "slurm/" + id->slurm_job : "pod/" + id->pod];
    if (t.last_ms == 0) {
      t.job.by = slurm ? HistoryBy::kSlurmJob : HistoryBy::kPod;
      t.job.key = slurm ? id->slurm_job : id->pod;
      t.job.user = id->user;
      t.job.since_ms = tick_ms;
    }
    t.identities.insert(p.identity_id);
    t.last_ms = tick_ms;
  }
  const int64_t ended_after_ms = file_.job_report->ended_after_ms;
  // Each report reads the history on the tick's thread (milliseconds over rollups): when many
  // jobs end at once, a few a tick, the rest at the next ticks.
  constexpr int kReportsPerTick = 4;
  int reported = 0;
  for (auto it = jobs_.begin(); it != jobs_.end() && reported < kReportsPerTick;) {
    if (now_ms - it->second.last_ms < ended_after_ms) {
      ++it;
      continue;
    }
    ++reported;
    if (Status s = ReportJob(it->first, it->second); !s.ok()) {
      LogWarning(d_.env(), "--notify: the report of {}: {}", EndedJobName(it->second.job),
                 s.message());
    }
    it = jobs_.erase(it);
  }
}

// Local midnight that began the day of `ms`.
int64_t LocalMidnightMs(int64_t ms) {
  const time_t t = static_cast<time_t>(ms / 1000);
  struct tm day {};
  localtime_r(&t, &day);
  day.tm_hour = day.tm_min = day.tm_sec = 0;
  day.tm_isdst = -1;
  return static_cast<int64_t>(mktime(&day)) * 1000;
}

// The job's window from its first session (the history knows it from before a restart) to
// its last tick, read as `cgov report --by slurm_job` (or pod) reads it; its row mailed to its
// owner through the job_report's sinks when it is large enough and they have not had
// per_person_per_day today, queued once by its key.
Status NotifyModule::ReportJob(const std::string& name, const TrackedJob& tracked) {
  const NotifyFile& file = file_;
  const JobReportConfig& config = *file.job_report;
  const std::string log_key = "job/" + name;
  CGOV_ASSIGN_OR_RETURN(bool before, notifier_->MailLogged(log_key));
  if (before || d_.writer() == nullptr) return Status::Ok();
  // The ticks of the open batch are the job's last: written first, so the ledger holds them.
  CGOV_RETURN_IF_ERROR(d_.writer()->Commit());
  HistoryStore& store = d_.writer()->store();
  EndedJob job = tracked.job;
  job.until_ms = tracked.last_ms + d_.options().interval.count();
  const std::vector<uint32_t> ids(tracked.identities.begin(), tracked.identities.end());
  constexpr int64_t kLookBackMs = 30LL * 24 * 3'600'000;  // a job older than that: since seen
  CGOV_ASSIGN_OR_RETURN(std::optional<int64_t> first,
                        store.FirstSessionStartMs(ids, job.since_ms - kLookBackMs));
  if (first) job.since_ms = std::min(job.since_ms, *first);
  HistoryOptions options;
  options.by = job.by;
  options.price = d_.options().price;
  options.catalog = &d_.options().catalog;
  CGOV_ASSIGN_OR_RETURN(HistoryInput in,
                        LoadHistory(store, job.since_ms, job.until_ms, options.phases));
  // Keyed as the report keys it: a pod by "namespace/name" once the API server named it.
  if (auto identity = in.identities.find(ids.front()); identity != in.identities.end()) {
    job.key = HistoryKey(job.by, identity->second, d_.hostname());
  }
  CGOV_ASSIGN_OR_RETURN(HistorySummary summary, SummarizeHistory(in, options));
  auto row = std::find_if(summary.who.begin(), summary.who.end(),
                          [&](const WhoRow& w) { return w.key == job.key; });
  if (row == summary.who.end()) {
    LogInfo(d_.env(),
            "--notify: {} of {} ended: the history credits it no GPU time from {} to {}: no report",
            EndedJobName(job), SafeText(job.user), FormatMinuteUtc(job.since_ms),
            FormatMinuteUtc(job.until_ms));
    return Status::Ok();
  }
  const double gpu_hours = static_cast<double>(row->AttributedMs()) / 3.6e6;
  if (gpu_hours < config.min_gpu_hours) {
    LogInfo(d_.env(),
            "--notify: {} of {} ended: {:.3f} GPU-hours, under min_gpu_hours ({}): no report",
            EndedJobName(job), SafeText(job.user), gpu_hours, config.min_gpu_hours);
    return Status::Ok();
  }
  CGOV_ASSIGN_OR_RETURN(int64_t today,
                        notifier_->MailCount("job/", job.user, LocalMidnightMs(d_.NowMs())));
  if (today >= config.per_person_per_day) {
    LogInfo(d_.env(),
            "--notify: {} of {} ended: no report, {} has had {} today (per_person_per_day)",
            EndedJobName(job), SafeText(job.user), SafeText(job.user), today);
    return Status::Ok();
  }
  const DigestMail m = JobMail(job, *row, summary, d_.hostname());
  const int64_t now_ms = d_.NowMs();
  std::vector<Delivery> queued;
  std::vector<std::string> whom;
  for (const std::string& sink_name : config.sinks) {
    auto sink = std::find_if(file.sinks.begin(), file.sinks.end(),
                             [&](const NotifySink& s) { return s.name == sink_name; });
    if (sink == file.sinks.end()) continue;
    std::vector<std::string> to = JobReportAddresses(*sink, file.recipients.get(), job.user);
    if (to.empty()) continue;
    whom.insert(whom.end(), to.begin(), to.end());
    std::string body = ComposeMail({sink->from, to, m.subject, now_ms, m.id}, m.text, m.html);
    queued.push_back({0, sink->name, m.id, std::move(body), now_ms, 0, now_ms, std::move(to)});
  }
  if (queued.empty()) return Status::Ok();  // no address (the recipients file said why)
  CGOV_ASSIGN_OR_RETURN(bool queued_now,
                        notifier_->QueueMail(log_key, job.user, std::move(queued)));
  if (queued_now) {
    LogInfo(d_.env(), "--notify: the report of {} ({}, {:.3f} GPU-hours, {}) queued for {}",
            EndedJobName(job), SafeText(job.user), gpu_hours, FormatUsd(row->cost),
            fmt::join(whom, ", "));
  }
  return Status::Ok();
}

Status NotifyModule::AfterWrite(DaemonTick* tick) {
  if (tick->built) Notify(tick);
  DigestIfDue(d_.NowMs());
  if (file_.job_report) TrackJobs(*tick, d_.NowMs());
  const Notifier::Counts c = notifier_->counts();  // to /metrics, when served
  series_->Set({c.sent, c.failed, c.dropped, c.given_up, c.queued});
  return Status::Ok();
}

class NotifyKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "notify"; }
  void AddFlags(CLI::App* app) override {
    app->add_option("--notify", path_,
                    "a notifications file (TOML, docs/notifications.md): rules (idle-held "
                    "process, idle GPU, low utilization, memory nearly full, Xid, budget "
                    "thresholds, policy steps) and the webhooks, Slack or Teams channels, e-mail "
                    "addresses or users' terminals their notices go to")
        ->group("Notifications (--notify)");
    app->add_option("--notify-state", state_,
                    "with --notify: where undelivered notices and open incidents are kept across "
                    "restarts (default: the --db path with \".notify\" appended)")
        ->group("Notifications (--notify)");
  }
  Status Configure(const CLI::App& app, const DaemonOptions& core) override;
  bool enabled() const override { return !path_.empty(); }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<NotifyModule>(context, std::move(file_), state_);
  }

 private:
  std::string path_, state_;
  NotifyFile file_;
};

Status NotifyKind::Configure(const CLI::App& app, const DaemonOptions& core) {
  if (path_.empty()) {
    if (!state_.empty()) return InvalidArgument("cgov daemon: --notify-state goes with --notify");
    return Status::Ok();
  }
  CGOV_ASSIGN_OR_RETURN(std::string text, ReadDaemonFile(*Env::Default(), path_, "--notify"));
  Result<NotifyFile> file = ParseNotifyFile(text, path_);
  if (!file.ok()) return file.status().WithContext("cgov daemon: --notify");
  if (Status s = ReadSinkUrls(&*file); !s.ok()) return s.WithContext("cgov daemon: --notify");
  for (const NotifyRule& r : file->rules) {
    if (r.kind == NotifyRuleKind::kBudget && !FlagGiven(app, "--budgets")) {
      return InvalidArgument(fmt::format(
          "cgov daemon: --notify {}:{}: a budget rule needs --budgets FILE", path_, r.line));
    }
    if (r.kind == NotifyRuleKind::kPolicy && !FlagGiven(app, "--policy")) {
      return InvalidArgument(fmt::format(
          "cgov daemon: --notify {}:{}: a policy rule needs --policy FILE", path_, r.line));
    }
  }
  file_ = std::move(file).value();
  if (state_.empty()) state_ = core.db + ".notify";
  return Status::Ok();
}

}  // namespace

std::unique_ptr<DaemonModuleKind> NewNotifyModuleKind() { return std::make_unique<NotifyKind>(); }

}  // namespace cgov
