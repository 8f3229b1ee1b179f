// `cgov top` where no daemon writes a database: the daemon's own core, in this process, sampling
// NVML and /proc every interval into a private database of its own (a temporary file, removed
// when the recorder goes), which TopSource then reads as it reads a daemon's. The day's figures
// then cover the time since `cgov top` started. Its log lines go to a file beside the database
// (they would tear the screen), and the last error is kept for the view to show.
#ifndef CGOV_APP_TOP_LIVE_RECORDER_H_
#define CGOV_APP_TOP_LIVE_RECORDER_H_

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"

namespace cgov {

struct LiveRecorderOptions {
  std::string nvml_lib;  // "" = the driver's
  std::string host_root = "/";
  std::chrono::milliseconds interval{1000};
};

class LiveRecorder {
 public:
  // Opens the driver and the database and takes the first tick before it returns.
  static Result<std::unique_ptr<LiveRecorder>> Start(const LiveRecorderOptions& options);
  ~LiveRecorder();  // stops the sampling thread, then removes the database
  LiveRecorder(const LiveRecorder&) = delete;
  LiveRecorder& operator=(const LiveRecorder&) = delete;

  const std::string& db() const;
  // Waits until the recorder has taken `ticks` ticks (or `timeout` passed); false on timeout.
  bool WaitForTicks(int64_t ticks, std::chrono::milliseconds timeout) const;

 private:
  struct State;
  explicit LiveRecorder(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace cgov

#endif  // CGOV_APP_TOP_LIVE_RECORDER_H_
