#include "os/worker.h"

#include <pthread.h>

#include <system_error>

namespace cgov {

Status Worker::Start(std::string name, Wait first_wait, Step step) {
  name_ = std::move(name);
  step_ = std::move(step);
  stop_ = false;
  try {
    thread_ = std::thread([this, first_wait] { Loop(first_wait); });
  } catch (const std::system_error& e) {
    return Unavailable(name_ + ": no thread: " + e.what());
  }
  pthread_setname_np(thread_.native_handle(), name_.substr(0, 15).c_str());
  return Status::Ok();
}

void Worker::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  // Outside the lock: woken with it held, the thread would only wake to wait for it.
  cv_.notify_one();
}

void Worker::RequestStop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

void Worker::Stop() {
  RequestStop();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

bool Worker::Sleep(Wait wait) {
  std::unique_lock lock(mu_);
  if (wait == kUntilWoken) {
    cv_.wait(lock, [this] { return stop_.load(); });
  } else {
    cv_.wait_for(lock, wait, [this] { return stop_.load(); });
  }
  return stop_;
}

// A first step due at once runs even when Stop() came before it: work handed to a worker (a
// job that ended at once still gets its recorder's summary) is never dropped.
void Worker::Loop(Wait wait) {
  for (bool first = true;; first = false) {
    {
      std::unique_lock lock(mu_);
      auto ready = [this] { return stop_ || woken_; };
      if (wait == kUntilWoken) {
        cv_.wait(lock, ready);
      } else if (wait > Wait::zero()) {
        cv_.wait_for(lock, wait, ready);
      }
      if (stop_ && !(first && wait <= Wait::zero())) return;
      woken_ = false;
    }
    wait = step_();
  }
}

}  // namespace cgov
