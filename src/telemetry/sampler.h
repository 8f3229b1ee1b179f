// One sampling tick: GPU fast fields + host reads now, GPU slow fields as last read off-tick.
#ifndef CGOV_TELEMETRY_SAMPLER_H_
#define CGOV_TELEMETRY_SAMPLER_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "os/clock.h"
#include "os/worker.h"
#include "telemetry/gpu_sample.h"
#include "telemetry/host_reader.h"
#include "telemetry/nvml_source.h"
#include "telemetry/tick_sample.h"

namespace cgov {

// Reads the slow NVML fields on a thread of its own so that milliseconds-long driver calls
// never delay a tick by more than the tick loop allows. The tick loop kicks it when a read falls
// due and waits a bounded time for it (KickAndWait), so that the slow fields it stores describe
// the same interval as the tick's fast ones (GPM's rates are over the time since the previous
// read: a read taken one tick early puts a job's start and end one tick late). A kick that comes
// while a read is pending or running is dropped, so a hung driver call never queues work up,
// and the tick goes on with the last read. Thread-safe.
class SlowPoller {
 public:
  explicit SlowPoller(NvmlSource* source) : source_(source) {}
  ~SlowPoller() { Stop(); }

  void Start();
  // Asks for one read, unless one is already pending or running.
  void Kick();
  // Kick, then wait until that read (or the one running) completes or `max_wait` passed; true
  // when a read completed within it.
  bool KickAndWait(std::chrono::steady_clock::duration max_wait);
  void Stop();
  // Replaces *out with the latest read (empty before the first one completes).
  void Latest(std::vector<GpuSlowSample>* out);
  uint64_t reads();  // reads completed so far

 private:
  Worker::Wait Read();  // the worker's step: one read when one is pending

  NvmlSource* source_;
  std::mutex mu_;
  std::condition_variable done_;  // a read completed
  bool stop_ = false;
  bool pending_ = false;
  bool busy_ = false;
  uint64_t reads_ = 0;
  std::vector<GpuSlowSample> latest_;
  std::vector<GpuSlowSample> fresh_;  // the worker's, reused read after read
  Worker worker_;                     // last: stopped before the state it reads goes
};

// Not thread-safe; the tick loop owns it.
class Sampler {
 public:
  // `nvml` may be null (no driver): GPU vectors are left empty. `poller` null with a driver: the
  // slow fields are the caller's to read (the daemon reads them on the tick), and gpu_slow is
  // left as it is, its vectors' capacity kept for that read.
  Sampler(NvmlSource* nvml, SlowPoller* poller, HostReader* host, Clock* clock)
      : nvml_(nvml), poller_(poller), host_(host), clock_(clock) {}

  void Tick(TickSample* out);

  // How long the last Tick spent in the driver (fast fields) and on the host's files, by the
  // clock's monotonic time (cgov_collector_duration_seconds).
  int64_t last_gpu_ns() const { return last_gpu_ns_; }
  int64_t last_host_ns() const { return last_host_ns_; }

 private:
  int64_t last_gpu_ns_ = 0, last_host_ns_ = 0;
  NvmlSource* nvml_;
  SlowPoller* poller_;
  HostReader* host_;
  Clock* clock_;
};

}  // namespace cgov

#endif  // CGOV_TELEMETRY_SAMPLER_H_
