#include "notify/notifier.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/time_format.h"
#include "notify/mail_message.h"
#include "notify/notice_body.h"
#include "notify/recipients.h"
#include "notify/terminal_sink.h"
#include "notify/webhook_post.h"
#include "os/env.h"
#include "os/log.h"
#include "os/smtp_client.h"

namespace cgov {
namespace {

constexpr int64_t kLogEveryMs = 60'000;
constexpr int64_t kIdleWaitMs = 1'000;  // a new submission wakes the thread sooner

// A receiver that refuses the request itself: sending it again cannot help.
bool Malformed(long status) { return status == 400 || status == 413 || status == 422; }

// An e-mail attempt in a post's terms: the server's reply code stands for the status (2xx
// sent; 5xx a refusal, given up; 4xx or no reply, tried again). The recipients a queued message
// was resolved to are read back from the state database: each is checked again before it
// becomes an RCPT TO.
Result<PostOutcome> Mail(const Delivery& d, const NotifySink& sink, const std::atomic<bool>* stop) {
  for (const std::string& a : d.rcpt) {
    if (!IsMailAddress(a)) return PostOutcome{550, -1, "a queued recipient is not an address"};
  }
  MailSend send{
      sink.url, sink.starttls,   sink.ca_file, sink.from, d.rcpt.empty() ? sink.to : d.rcpt,
      d.body,   sink.timeout_ms, stop};
  CGOV_ASSIGN_OR_RETURN(MailOutcome out, SendMail(send));
  const long code = out.sent ? 250 : out.smtp_code >= 400 ? out.smtp_code : 0;
  return PostOutcome{code, -1, out.error};
}

// A dry run's delivery (the notifications file's `dry_run`): the body as the sink's receiver
// would take it, in DIR/SINK/SEQ.eml (a whole message) or .json, written whole; the
// directories private to the daemon's user. A failed write is retried like a failed post.
Result<PostOutcome> WriteDryRun(const std::string& dir, const Delivery& d, const NotifySink& sink) {
  const std::string file =
      fmt::format("{:010}.{}", d.seq, sink.kind == SinkKind::kEmail ? "eml" : "json");
  Status s = WriteDryRunFile(dir, sink.name, file, d.body);
  if (s.code() == StatusCode::kInvalidArgument) return PostOutcome{400, -1, s.message()};
  if (!s.ok()) return PostOutcome{0, -1, s.message()};
  return PostOutcome{200, -1, ""};
}

// An e-mail sink's recipients for one notice: its own addresses, then the owner's and their
// leads' where its `to` asks (the recipients file), each once.
std::vector<std::string> MailRecipients(const NotifySink& sink, const Recipients* people,
                                        const Notice& n) {
  std::vector<std::string> to = sink.to;
  auto add = [&](const std::vector<Recipient>& found) {
    for (const Recipient& r : found) {
      if (std::find(to.begin(), to.end(), r.address) == to.end()) to.push_back(r.address);
    }
  };
  if (people != nullptr && sink.to_owner) add(people->Owner(n.user));
  if (people != nullptr && sink.to_lead && n.to_leads) add(people->Leads(n.user));
  return to;
}

}  // namespace

Status WriteDryRunFile(const std::string& dir, const std::string& sink, const std::string& file,
                       std::string_view body) {
  if (sink.find_first_not_of('.') == std::string::npos) {  // "." or "..": not a directory
    return InvalidArgument("dry run: a sink named only by dots has no directory of its own");
  }
  const std::string sink_dir = dir + "/" + sink;
  for (const std::string& at : {dir, sink_dir}) {
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      return IoError(fmt::format("dry run: {}: {}", at, std::strerror(errno)));
    }
  }
  Status s = WriteFileAtomically(sink_dir + "/" + file, body);
  return s.ok() ? s : IoError("dry run: " + s.message());
}

Notifier::Notifier(NotifyFile file, std::unique_ptr<NotifyState> state, Env* env)
    : file_(std::move(file)), env_(env), state_(std::move(state)) {}

Result<std::unique_ptr<Notifier>> Notifier::Start(NotifyFile file, const std::string& state_path,
                                                  std::vector<Incident>* open, int64_t* waiting,
                                                  Env* env) {
  CGOV_ASSIGN_OR_RETURN(std::unique_ptr<NotifyState> state, NotifyState::Open(state_path));
  CGOV_ASSIGN_OR_RETURN(*open, state->Incidents());
  CGOV_ASSIGN_OR_RETURN(*waiting, state->Queued());
  std::unique_ptr<Notifier> n(new Notifier(std::move(file), std::move(state), env));
  Notifier* p = n.get();
  for (const NotifySink& sink : p->file_.sinks) {
    auto lane = std::make_unique<Lane>();
    lane->sink = &sink;
    Lane* l = lane.get();
    p->lanes_.push_back(std::move(lane));
    CGOV_RETURN_IF_ERROR(l->worker.Start("cgov-notify-" + std::to_string(p->lanes_.size()),
                                         Worker::Wait(0), [p, l] { return p->LaneStep(l); }));
  }
  if (!p->file_.dry_run_dir.empty()) {
    LogInfo(*env, "--notify: dry run: every notice is written under {}/SINK/, none is sent",
            p->file_.dry_run_dir);
  }
  CGOV_RETURN_IF_ERROR(p->worker_.Start("cgov-notify", Worker::Wait(0), [p] { return p->Step(); }));
  return n;
}

Notifier::~Notifier() { Stop(); }

void Notifier::Stop() {
  if (stopped_) return;
  stopped_ = true;
  for (auto& lane : lanes_) lane->worker.RequestStop();  // a post in flight is abandoned
  for (auto& lane : lanes_) lane->worker.Stop();
  worker_.Stop();
  SaveSubmitted();  // what the last ticks brought, now that the thread is gone
}

void Notifier::Submit(std::vector<Notice> notices, std::vector<Incident> incidents) {
  {
    std::lock_guard lock(mu_);
    if (worker_.stopping()) return;
    submitted_.push_back({std::move(notices), std::move(incidents)});
  }
  worker_.Wake();
}

Result<bool> Notifier::QueueMail(const std::string& key, const std::string& person,
                                 std::vector<Delivery> mail) {
  int64_t dropped = 0;
  Result<bool> queued = [&] {
    std::lock_guard state_lock(state_mu_);
    return state_->QueueMail(key, person, env_->WallMs(), &mail, file_.queue_max, &dropped);
  }();
  if (dropped > 0) {
    LogWarning(
        *env_,
        "--notify: the queue passed queue_max = {}: its {} oldest notice(s) dropped undelivered",
        file_.queue_max, dropped);
    std::lock_guard lock(mu_);
    counts_.dropped += dropped;
  }
  if (queued.ok() && *queued) {
    for (auto& lane : lanes_) lane->worker.Wake();
  }
  return queued;
}

Result<bool> Notifier::MailLogged(const std::string& key) {
  std::lock_guard state_lock(state_mu_);
  return state_->MailLogged(key);
}

Result<int64_t> Notifier::MailCount(const std::string& key_prefix, const std::string& person,
                                    int64_t since_ms) {
  std::lock_guard state_lock(state_mu_);
  return state_->MailCount(key_prefix, person, since_ms);
}

Notifier::Counts Notifier::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

void Notifier::Log(const std::string& sink, const std::string& message) {
  LogWarning(*env_, "{}: --notify: sink {:?}: {}", FormatRfc3339Utc(env_->WallMs() * 1'000'000),
             sink, message);
}

// One transaction per batch taken: the incidents as the latest submission left them, and one
// delivery per notice and sink. A failed write keeps the batch for the next try.
void Notifier::SaveSubmitted() {
  std::vector<Submitted> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(submitted_);
  }
  if (batch.empty()) return;
  std::vector<Delivery> queued;
  for (const Submitted& s : batch) {
    for (const Notice& n : s.notices) {
      for (const std::string& name : n.sinks) {
        for (const NotifySink& sink : file_.sinks) {
          if (sink.name != name) continue;
          // A terminal is a user's: a notice about no one's process is shown on none.
          if (sink.kind == SinkKind::kTerminal && n.user.empty()) continue;
          if (sink.kind != SinkKind::kEmail || (!sink.to_owner && !sink.to_lead)) {
            queued.push_back({0, sink.name, n.id, NoticeBody(sink, n), n.at_ms, 0, n.at_ms});
            continue;
          }
          // Addressed to a person: no one to send it to (no fallback) is logged, not queued.
          std::vector<std::string> to = MailRecipients(sink, file_.recipients.get(), n);
          if (to.empty()) continue;
          std::string body = NoticeMail(n, sink.from, to);
          queued.push_back(
              {0, sink.name, n.id, std::move(body), n.at_ms, 0, n.at_ms, std::move(to)});
        }
      }
    }
  }
  int64_t dropped = 0;
  Status saved;
  {
    std::lock_guard state_lock(state_mu_);
    saved = state_->Save(batch.back().incidents, &queued, file_.queue_max, &dropped);
  }
  if (!saved.ok()) {
    const int64_t now = env_->WallMs();
    if (now - save_failed_ms_ >= kLogEveryMs) {
      LogWarning(*env_, "--notify: {} (kept in memory, written again at the next notice)",
                 saved.message());
      save_failed_ms_ = now;
    }
    std::lock_guard lock(mu_);
    submitted_.insert(submitted_.begin(), std::make_move_iterator(batch.begin()),
                      std::make_move_iterator(batch.end()));
    return;
  }
  if (dropped > 0) {
    LogWarning(
        *env_,
        "--notify: the queue passed queue_max = {}: its {} oldest notice(s) dropped undelivered",
        file_.queue_max, dropped);
    std::lock_guard lock(mu_);
    counts_.dropped += dropped;
  }
}

// The terminal sink: shown now on the user's terminals, or on none (the user is not logged in,
// or said `mesg n`): either way done, nothing to retry.
void Notifier::ShowOnTerminals(const Delivery& d, const NotifySink& sink) {
  const nlohmann::json body = nlohmann::json::parse(d.body, nullptr, false);
  const std::string user = body.is_object() ? body.value("user", "") : "";
  Result<int> reached =
      WriteToUserTerminals(sink.utmp_file, user, body.is_object() ? body.value("text", "") : "");
  if (!reached.ok()) {
    Log(sink.name, fmt::format("{}; notice {} not shown", reached.status().message(), d.notice_id));
  }
  Status s;
  {
    std::lock_guard state_lock(state_mu_);
    s = state_->Delivered(d.seq);
  }
  if (!s.ok()) Log(sink.name, std::string(s.message()));
  std::lock_guard lock(mu_);
  if (reached.ok() && *reached > 0) ++counts_.sent;
}

void Notifier::Attempt(const Delivery& d, Lane* lane) {
  const NotifySink& sink = *lane->sink;
  const bool dry = !file_.dry_run_dir.empty();
  if (sink.kind == SinkKind::kTerminal && !dry) {
    ShowOnTerminals(d, sink);
    return;
  }
  // The post, the slow part, holds no lock: the other lanes and the saving thread go on.
  const bool email = sink.kind == SinkKind::kEmail;
  Result<PostOutcome> posted = dry     ? WriteDryRun(file_.dry_run_dir, d, sink)
                               : email ? Mail(d, sink, &lane->worker.stop_flag())
                                       : PostJson(sink.url, d.body, d.notice_id, sink.timeout_ms,
                                                  &lane->worker.stop_flag(), env_);
  PostOutcome out = posted.ok() ? *posted : PostOutcome{0, -1, posted.status().message()};
  // Stopping: a post the stop cut short stays queued, sent at the next start, and is not counted
  // an attempt; one the server took is recorded as delivered, or the next start sends it again.
  const bool taken = out.http_status >= 200 && out.http_status < 300;
  if (lane->worker.stopping() && !taken) return;
  const char* protocol = email ? "SMTP" : "HTTP";
  const int64_t now = env_->WallMs();
  std::unique_lock state_lock(state_mu_);
  Status written;
  if (taken) {
    written = state_->Delivered(d.seq);
    state_lock.unlock();
    if (lane->failing_since_ms) {
      Log(sink.name, fmt::format("delivering again, after failing since {}",
                                 FormatRfc3339Utc(*lane->failing_since_ms * 1'000'000)));
      lane->failing_since_ms.reset();
    }
    std::lock_guard lock(mu_);
    ++counts_.sent;
  } else if (Malformed(out.http_status) || (email && out.http_status >= 500)) {
    written = state_->GiveUp(d.seq, out.error);
    state_lock.unlock();
    Log(sink.name, fmt::format("notice {} refused with {} {} ({}); kept in {} and not sent again",
                               d.notice_id, protocol, out.http_status, out.error, state_->path()));
    std::lock_guard lock(mu_);
    ++counts_.given_up;
  } else {
    const int64_t attempts = d.attempts + 1;
    int64_t delay =
        std::min<int64_t>(file_.retry_max_ms, int64_t{1000} << std::min<int64_t>(attempts - 1, 20));
    if (out.retry_after_ms >= 0)
      delay = std::max(delay, std::min<int64_t>(out.retry_after_ms, 3'600'000));
    const std::string why = out.http_status != 0
                                ? fmt::format("{} {}: {}", protocol, out.http_status, out.error)
                                : out.error;
    written = state_->Retry(d.seq, attempts, now + delay, why);
    Result<int64_t> waiting = state_->Queued();
    state_lock.unlock();
    if (!lane->failing_since_ms) lane->failing_since_ms = now;
    if (now - lane->logged_ms >= kLogEveryMs) {
      lane->logged_ms = now;
      Log(sink.name, fmt::format("{} (attempt {}; trying again in {} ms; {} notice(s) waiting)",
                                 why, attempts, delay, waiting.ok() ? *waiting : -1));
    }
    std::lock_guard lock(mu_);
    ++counts_.failed;
  }
  if (!written.ok()) Log(sink.name, std::string(written.message()));
}

void Notifier::DeliverDue(Lane* lane, int64_t* wake_ms) {
  for (;;) {
    Result<std::vector<Delivery>> heads = [&] {
      std::lock_guard state_lock(state_mu_);
      return state_->Heads();
    }();
    if (!heads.ok()) {
      LogWarning(*env_, "--notify: {}", heads.status().message());
      return;
    }
    bool delivered_any = false;
    for (const Delivery& d : *heads) {
      if (lane->worker.stopping()) return;
      if (d.sink != lane->sink->name) continue;  // another lane's
      if (d.next_ms > env_->WallMs()) {
        *wake_ms = std::min(*wake_ms, d.next_ms);
        continue;
      }
      // Quiet hours: the sink's notices wait, queued and in order, until the window ends.
      if (const int64_t until = QuietUntilMs(lane->sink->quiet, env_->WallMs()); until > 0) {
        if (until != lane->quiet_until_ms) {
          lane->quiet_until_ms = until;
          Log(lane->sink->name, fmt::format("quiet hours: its notices wait until {}",
                                            FormatRfc3339Utc(until * 1'000'000)));
        }
        *wake_ms = std::min(*wake_ms, until);
        continue;
      }
      Attempt(d, lane);
      CountQueued();  // /metrics' queue as each delivery leaves it
      delivered_any = true;
    }
    if (!delivered_any) return;
  }
}

void Notifier::CountQueued() {
  Result<int64_t> queued = [&] {
    std::lock_guard state_lock(state_mu_);
    return state_->Queued();
  }();
  if (!queued.ok()) return;
  std::lock_guard lock(mu_);
  counts_.queued = *queued;
}

// Saves what was submitted and wakes the lanes to post it.
Worker::Wait Notifier::Step() {
  SaveSubmitted();
  if (worker_.stopping()) return Worker::kUntilWoken;
  for (auto& lane : lanes_) lane->worker.Wake();
  CountQueued();
  return std::chrono::milliseconds(kIdleWaitMs);
}

// One sink's: posts what is due, and sleeps until its next delivery falls due (or a saved
// submission wakes it).
Worker::Wait Notifier::LaneStep(Lane* lane) {
  if (lane->worker.stopping()) return Worker::kUntilWoken;
  int64_t wake_ms = env_->WallMs() + kIdleWaitMs;
  DeliverDue(lane, &wake_ms);
  return std::chrono::milliseconds(std::max<int64_t>(0, wake_ms - env_->WallMs()));
}

}  // namespace cgov
