// Delivers notices on a thread of its own (docs/notifications.md): the daemon's tick hands each
// tick's notices over and goes on at once; this thread writes them to the state database, then
// posts each sink's notices in order, retrying with backoff (Retry-After honoured), so a
// receiver that fails, hangs or rate-limits never delays a sample, and a restart resends only
// what was not delivered. Submit and counts() are thread-safe.
#ifndef CGOV_NOTIFY_NOTIFIER_H_
#define CGOV_NOTIFY_NOTIFIER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "notify/notify_state.h"
#include "os/worker.h"

namespace cgov {

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
  // starts delivering what it holds. REQUIRES: ReadSinkUrls(&file) done.
  static Result<std::unique_ptr<Notifier>> Start(NotifyFile file, const std::string& state_path,
                                                 std::vector<Incident>* open,
                                                 int64_t* waiting);
  ~Notifier();  // Stop()

  // The tick's notices, and the open incidents after them. Never waits on I/O.
  void Submit(std::vector<Notice> notices, std::vector<Incident> incidents);
  // Writes what was submitted, abandons a delivery in flight (sent again at the next start).
  void Stop();
  Counts counts() const;

 private:
  Notifier(NotifyFile file, std::unique_ptr<NotifyState> state);
  Worker::Wait Step();
  void SaveSubmitted();
  // Posts what is due; the time the next one falls due in *wake_ms.
  void DeliverDue(int64_t* wake_ms);
  void Attempt(const Delivery& d, const NotifySink& sink);
  void ShowOnTerminals(const Delivery& d, const NotifySink& sink);
  void Log(const std::string& sink, const std::string& message);
  void CountQueued();

  NotifyFile file_;
  std::unique_ptr<NotifyState> state_;  // the thread's own once started, the caller's after Stop
  mutable std::mutex mu_;
  bool stopped_ = false;  // Stop() ran (the caller's)
  struct Submitted {
    std::vector<Notice> notices;
    std::vector<Incident> incidents;
  };
  std::vector<Submitted> submitted_;  // guarded by mu_
  Counts counts_;                     // guarded by mu_
  std::map<std::string, int64_t> failing_since_ms_;  // per sink; the thread's own
  std::map<std::string, int64_t> logged_ms_;
  int64_t save_failed_ms_ = 0;
  Worker worker_;  // last: stopped before the state it reads goes
};

}  // namespace cgov

#endif  // CGOV_NOTIFY_NOTIFIER_H_
