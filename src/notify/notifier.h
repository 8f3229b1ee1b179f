// Delivers notices on threads of its own (docs/notifications.md): the daemon's tick hands each
// tick's notices over and goes on at once; one thread writes them to the state database, and
// each sink has a thread of its own (a lane) that posts that sink's notices in order, retrying
// with backoff (Retry-After honoured), so a receiver that fails, hangs or rate-limits never
// delays a sample nor another sink, and a restart resends only what was not delivered. The state
// database is shared by the threads under one mutex, never held across a post. Submit and
// counts() are thread-safe.
#ifndef CGOV_NOTIFY_NOTIFIER_H_
#define CGOV_NOTIFY_NOTIFIER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "notify/notify_state.h"
#include "os/env.h"
#include "os/worker.h"

namespace cgov {

// A dry run's delivery (the notifications file's `dry_run`): `body` written whole to
// DIR/SINK/FILE, the directories private to the user. InvalidArgument for a sink named only by
// dots (it has no directory of its own); IoError for a failed write.
Status WriteDryRunFile(const std::string& dir, const std::string& sink, const std::string& file,
                       std::string_view body);

class Notifier {
 public:
  struct Counts {
    int64_t sent = 0;      // delivered (2xx)
    int64_t failed = 0;    // attempts that failed (each retry counts)
    int64_t dropped = 0;   // pushed out of a full queue
    int64_t given_up = 0;  // refused by the receiver as malformed (400, 413, 422)
    int64_t queued = 0;    // waiting in the state database, as last counted
  };

  // Opens `state_path`, gives the incidents it holds in *open (for NotifyEngine::Restore) and
  // starts delivering what it holds. REQUIRES: ReadSinkUrls(&file) done. `env`: the clock that
  // schedules retries and quiet hours, the webhooks' HTTP client.
  static Result<std::unique_ptr<Notifier>> Start(NotifyFile file, const std::string& state_path,
                                                 std::vector<Incident>* open, int64_t* waiting,
                                                 Env* env = Env::Default());
  ~Notifier();  // Stop()

  // The tick's notices, and the open incidents after them. Never waits on I/O.
  void Submit(std::vector<Notice> notices, std::vector<Incident> incidents);
  // Mail made whole (the weekly digests), queued at once with `key` in the state's mail log
  // (NotifyState::QueueMail): false when the key was logged before and nothing was queued.
  // Thread-safe; waits on the state database, never on a delivery.
  Result<bool> QueueMail(const std::string& key, const std::string& person,
                         std::vector<Delivery> mail);
  Result<bool> MailLogged(const std::string& key);
  Result<int64_t> MailCount(const std::string& key_prefix, const std::string& person,
                            int64_t since_ms);
  // Writes what was submitted, abandons a delivery in flight (sent again at the next start).
  void Stop();
  Counts counts() const;

 private:
  // One sink's deliveries: its thread and what that thread alone keeps.
  struct Lane {
    const NotifySink* sink = nullptr;  // into file_.sinks
    std::optional<int64_t> failing_since_ms;
    int64_t logged_ms = 0;
    int64_t quiet_until_ms = 0;  // the quiet window last logged
    Worker worker;
  };
  Notifier(NotifyFile file, std::unique_ptr<NotifyState> state, Env* env);
  Worker::Wait Step();
  Worker::Wait LaneStep(Lane* lane);
  void SaveSubmitted();
  // Posts what is due of the lane's sink; the time the next one falls due in *wake_ms.
  void DeliverDue(Lane* lane, int64_t* wake_ms);
  void Attempt(const Delivery& d, Lane* lane);
  void ShowOnTerminals(const Delivery& d, const NotifySink& sink);
  void Log(const std::string& sink, const std::string& message);
  void CountQueued();

  NotifyFile file_;
  Env* env_;
  // The threads' (the caller's after Stop); every call under state_mu_.
  std::unique_ptr<NotifyState> state_;
  std::mutex state_mu_;
  std::vector<std::unique_ptr<Lane>> lanes_;  // one a sink; stopped before worker_
  mutable std::mutex mu_;
  bool stopped_ = false;  // Stop() ran (the caller's)
  struct Submitted {
    std::vector<Notice> notices;
    std::vector<Incident> incidents;
  };
  std::vector<Submitted> submitted_;  // guarded by mu_
  Counts counts_;                     // guarded by mu_
  int64_t save_failed_ms_ = 0;
  Worker worker_;  // last: stopped before the state it reads goes
};

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTIFIER_H_
