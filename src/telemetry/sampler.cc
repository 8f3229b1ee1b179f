#include "telemetry/sampler.h"

namespace cgov {

void SlowPoller::Start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  // Without a thread the tick goes on with the last read (none): the slow fields stay unknown.
  (void)worker_.Start("cgov-nvml-slow", Worker::kUntilWoken, [this] { return Read(); });
}

void SlowPoller::Kick() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_ || busy_) return;
    pending_ = true;
  }
  worker_.Wake();
}

bool SlowPoller::KickAndWait(std::chrono::steady_clock::duration max_wait) {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t before = reads_;
  if (!pending_ && !busy_) {
    pending_ = true;
    // Woken with the lock held, the poller would only wake to wait for it: each tick then cost
    // five context switches instead of three (the tick's wake, the poller's, the tick's again).
    lock.unlock();
    worker_.Wake();
    lock.lock();
  }
  return done_.wait_for(lock, max_wait, [&] { return stop_ || reads_ > before; }) &&
         reads_ > before;
}

void SlowPoller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  done_.notify_all();
  worker_.Stop();
}

void SlowPoller::Latest(std::vector<GpuSlowSample>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  *out = latest_;
}

uint64_t SlowPoller::reads() {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}

Worker::Wait SlowPoller::Read() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || !pending_) return Worker::kUntilWoken;
    pending_ = false;
    busy_ = true;
  }
  source_->ReadSlow(&fresh_);  // outside the lock: this is the slow part
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
    latest_.swap(fresh_);
    ++reads_;
  }
  done_.notify_all();  // the tick it wakes takes the lock at once
  return Worker::kUntilWoken;
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
  const int64_t host_start_ns = clock_->MonotonicNs();
  last_gpu_ns_ = host_start_ns - out->mono_ns;
  host_->Read(&out->host);
  last_host_ns_ = clock_->MonotonicNs() - host_start_ns;
}

}  // namespace cgov
