#include "telemetry/sampler.h"

#include <algorithm>

namespace cgov {

void SlowPoller::Start(std::chrono::milliseconds interval) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = false;
  }
  thread_ = std::thread([this, interval] { Run(interval); });
}

void SlowPoller::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SlowPoller::Latest(std::vector<GpuSlowSample>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  *out = latest_;
}

void SlowPoller::Run(std::chrono::milliseconds interval) {
  std::vector<GpuSlowSample> fresh;
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    source_->ReadSlow(&fresh);  // outside the lock: this is the slow part
    {
      std::unique_lock<std::mutex> lock(mu_);
      latest_.swap(fresh);
      // A read that overran its slot starts the next at once rather than bursting to catch up.
      next = std::max(next + interval, std::chrono::steady_clock::now());
      if (wake_.wait_until(lock, next, [this] { return stop_; })) return;
    }
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
  } else {
    out->gpu_slow.clear();
  }
  host_->Read(&out->host);
}

}  // namespace cgov
