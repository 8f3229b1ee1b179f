// The one way cgov runs a background thread: a named loop that calls its step when woken or when
// the wait the step asked for has passed, until stopped (redis's bio.c, one owner of background
// threads with a stated stop). Every long-lived thread of cgov is a Worker: the slow NVML reads,
// `cgov run`'s recorder, the Kubernetes watch, the kubelet poller, the notifier and the HTTP
// server's watchdog.
//
// Stop order: the owner stops its Worker first (in its destructor), before the state the step
// reads goes away. Stop() wakes the thread, waits for the step in progress to return and joins;
// a step that blocks (a network call, a driver call) watches stopping() or stop_flag() and
// returns early. Thread-safe, but for Start() and Stop() (the owner's).
#ifndef CGOV_OS_WORKER_H_
#define CGOV_OS_WORKER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"

namespace cgov {

class Worker {
 public:
  // A step returns how long to wait before the next call: kUntilWoken waits for Wake() alone.
  using Wait = std::chrono::nanoseconds;
  static constexpr Wait kUntilWoken = Wait::max();
  using Step = std::function<Wait()>;

  Worker() = default;
  ~Worker() { Stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts the thread (named `name`, at most 15 bytes, as `top -H` shows it), which waits
  // `first_wait` (0: calls the step at once, even should Stop() come first) and then loops. An
  // error when no thread could be started (the caller decides whether it can go on without).
  Status Start(std::string name, Wait first_wait, Step step);
  // The waiting thread calls its step now; a wake during a step calls it once more after.
  void Wake();
  // Asks the thread to stop and wakes it; returns at once (Stop() joins).
  void RequestStop();
  // RequestStop(), then waits for the thread to end. Idempotent.
  void Stop();
  bool stopping() const { return stop_.load(); }
  // For a step's blocking call that polls an abort flag (libcurl's progress callback).
  const std::atomic<bool>& stop_flag() const { return stop_; }
  // Inside a step: waits `wait` or until stopped (a back-off); true when stopping.
  bool Sleep(Wait wait);

 private:
  void Loop(Wait first_wait);

  Step step_;
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool woken_ = false;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace cgov

#endif  // CGOV_OS_WORKER_H_
