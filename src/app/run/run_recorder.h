// The sampling thread of `cgov run`: opens NVML, writes samples.jsonl, feeds the accumulator.
#ifndef CGOV_APP_RUN_RUN_RECORDER_H_
#define CGOV_APP_RUN_RUN_RECORDER_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/run_summary.h"
#include "app/run/run_history.h"
#include "identity/cloud_instance.h"
#include "os/env.h"
#include "os/worker.h"
#include "store/jsonl_writer.h"
#include "store/sample_record.h"
#include "telemetry/nvml_source.h"

namespace cgov {

struct RecorderOptions {
  std::string nvml_lib;   // "" = default search
  std::string host_root;  // "/" normally
  std::chrono::milliseconds interval{1000};
  int64_t start_mono_ns = 0;
  int root_pid = 0;                            // cgov's own pid: the job tree hangs below it
  std::vector<int> preexisting_pids;           // alive before the job was spawned: never the job's
  std::string metadata_endpoint;               // non-empty: --detect-instance asks it once
  CloudProvider cloud = CloudProvider::kAuto;  // as which provider
  // --db: the history database the run is recorded into (null: none), what it names this host,
  // the run's wall-clock start and each GPU's price.
  RunHistory* history = nullptr;
  std::string hostname;
  int64_t start_wall_ms = 0;
  RunHistory::PriceFn price;
  Env* env = Env::Default();  // the clocks, the host's files (under host_root), the metadata GET
};

// Start() once, Stop() once; results are read after Stop(). The thread is joined by the
// destructor: after Stop() it only shuts NVML down.
class RunRecorder {
 public:
  // `header` carries what the caller knows (command, tags, host, interval, start); the recorder
  // adds the NVML part. `writer` may be null (no file could be opened): samples are still
  // accumulated for the report.
  RunRecorder(RecorderOptions options, SamplesHeader header, JsonlWriter* writer);
  ~RunRecorder();

  void Start();
  // Ends the sampling loop at once (no tick after the job ended) and returns when the thread has
  // handed over what it collected.
  void Stop();

  // After Stop: fills samples, gpus, metrics, usage, job RSS, the GPU data reason and driver
  // version, and appends warnings about anything that degraded the data.
  void Finish(int64_t end_mono_ns, RunSummary* summary) const;
  // After Stop: the instance type the metadata service named ("" when not asked or no answer).
  const std::string& detected_instance_type() const { return detected_instance_type_; }

 private:
  void Run();
  void DetectInstance();
  void AddDriverWarnings(NvmlSource* nvml, bool gpu_processes_seen);
  int JobRootPid(FileReader& files);
  bool WaitUntil(std::chrono::steady_clock::time_point deadline);  // false when stopped

  RecorderOptions options_;
  SamplesHeader header_;
  JsonlWriter* writer_;
  std::mutex mu_;
  std::condition_variable collected_cv_;
  bool started_ = false;
  bool collected_ = false;  // the thread is done with everything below
  // Written by the thread, read after Stop().
  std::unique_ptr<RunAccumulator> accumulator_;
  std::string gpu_unavailable_reason_;
  std::string detected_instance_type_;
  std::vector<std::string> warnings_;
  bool root_in_host_namespace_ = true;  // the job tree's pids are the driver's (host) pids
  Worker worker_;                       // last: stopped before the state it reads goes
};

}  // namespace cgov

#endif  // CGOV_APP_RUN_RUN_RECORDER_H_
