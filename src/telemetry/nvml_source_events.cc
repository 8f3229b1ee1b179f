// NvmlSource: Xid critical errors, by NVML event.
//
// The driver queues events in the set; each slow read drains them with a zero-timeout wait.
// A thread blocked in nvmlEventSetWait instead cost more than it gave (measured with
// bench/run_overhead.py): it could not be interrupted, so every `cgov run` waited up to the
// wait's timeout at its end (518 ms added to `true`), and its wake-ups were CPU of their own.
// Draining once a second finds an Xid within a second, which is all a report needs.
#include "telemetry/nvml_source.h"

#include <algorithm>

namespace cgov {

using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

void NvmlSource::StartEventWatch() {
  const NvmlFunctions& f = library_->fn();
  if (event_set_ != nullptr) return;
  bool any = false;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    any = any || (!IsLost(i) && gpus_[i].field(GpuField::kXidEvents).supported);
  }
  if (!any || f.event_set_create(&event_set_) != nvml::NVML_SUCCESS) {
    event_set_ = nullptr;
    return;
  }
  // Registered per physical GPU (a MIG device handle has no events of its own); every
  // instance of a GPU is watched when its parent is.
  any = false;
  for (size_t i = 0; i < gpus_.size(); ++i) {
    if (IsLost(i) || !gpus_[i].field(GpuField::kXidEvents).supported) continue;
    size_t first = 0;
    while (units_[first].parent != units_[i].parent) ++first;
    units_[i].watched =
        first < i ? units_[first].watched
                  : f.register_events(units_[i].parent, nvml::nvmlEventTypeXidCriticalError,
                                      event_set_) == nvml::NVML_SUCCESS;
    any = any || units_[i].watched;
  }
  if (!any) {
    f.event_set_free(event_set_);
    event_set_ = nullptr;
  }
}

void NvmlSource::StopEventWatch() {
  if (event_set_ != nullptr) library_->fn().event_set_free(event_set_);
  event_set_ = nullptr;
}

void NvmlSource::DrainEvents() {
  constexpr int kMaxPerRead = 256;  // a storm is counted over several reads, never a stall
  if (event_set_ == nullptr) return;
  const NvmlFunctions& f = library_->fn();
  for (int n = 0; n < kMaxPerRead; ++n) {
    nvml::nvmlEventData_t data{};
    if (f.event_wait(event_set_, &data, 0) != nvml::NVML_SUCCESS) return;  // TIMEOUT: none left
    if (!(data.eventType & nvml::nvmlEventTypeXidCriticalError)) continue;
    const uint32_t xid = static_cast<uint32_t>(std::min<unsigned long long>(data.eventData, 999));
    const int64_t now_ms = clock_.WallNs() / 1'000'000;
    // The GPU's units: the whole GPU, or its MIG instances — the one the driver attributes the
    // error to, or all of them when it does not say.
    for (size_t i = 0; i < gpus_.size(); ++i) {
      if (units_[i].parent != data.device || !units_[i].watched) continue;
      const std::optional<MigInstance>& mig = gpus_[i].mig;
      if (mig && data.gpuInstanceId != nvml::kNoMigId &&
          data.gpuInstanceId != mig->gpu_instance_id) {
        continue;
      }
      shared_[i].last_xid.store(xid, std::memory_order_relaxed);
      shared_[i].xid_count.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(xid_mu_);
      if (pending_xid_.size() == kMaxPendingXid) pending_xid_.pop_front();
      pending_xid_.push_back({static_cast<unsigned>(i), xid, now_ms});
    }
  }
}

std::vector<XidEvent> NvmlSource::DrainXidEvents() {
  std::lock_guard<std::mutex> lock(xid_mu_);
  std::vector<XidEvent> out(pending_xid_.begin(), pending_xid_.end());
  pending_xid_.clear();
  return out;
}

}  // namespace cgov
