#include "telemetry/sampler.h"


namespace cgov {

void SlowPoller::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this] { Run(); });
}

void SlowPoller::Kick() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_ || busy_) return;
    pending_ = true;
  }
  wake_.notify_one();
}

bool SlowPoller::KickAndWait(std::chrono::steady_clock::duration max_wait) {
  const auto deadline = std::chrono::steady_clock::now() + max_wait;
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t before = reads_;
  if (!pending_ && !busy_) {
    pending_ = true;
    // Woken with the lock held, the poller would only wake to wait for it: each tick then cost
    // five context switches instead of three (the tick's wake, the poller's, the tick's again).
    lock.unlock();
    wake_.notify_one();
    lock.lock();
  }
  return done_.wait_until(lock, deadline, [&] { return stop_ || reads_ > before; }) &&
         reads_ > before;
}

void SlowPoller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  done_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlowPoller::Latest(std::vector<GpuSlowSample>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  *out = latest_;
}

uint64_t SlowPoller::reads() {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

void SlowPoller::Run() {
  std::vector<GpuSlowSample> fresh;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || pending_; });
    if (stop_) return;
    pending_ = false;
    busy_ = true;
    lock.unlock();
    source_->ReadSlow(&fresh);  // outside the lock: this is the slow part
    lock.lock();
    busy_ = false;
    latest_.swap(fresh);
    ++reads_;
    lock.unlock();  // the tick it wakes takes the lock at once
    done_.notify_all();
    lock.lock();
  }
}

void Sampler::Tick(TickSample* out) {
  out->mono_ns = clock_->MonotonicNs();
  out->wall_ns = clock_->WallNs();
  if (nvml_ != nullptr) {
    nvml_->ReadFast(&out->gpu_fast);
  } else {
    out->gpu_fast.clear();
  }
  if (poller_ != nullptr) {
    poller_->Latest(&out->gpu_slow);
  } else if (nvml_ == nullptr) {
    out->gpu_slow.clear();
  }
  host_->Read(&out->host);
}

}  // namespace cgov
