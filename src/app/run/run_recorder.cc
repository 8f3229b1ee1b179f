#include "app/run/run_recorder.h"

#include <unistd.h>

#include <set>

#include <fmt/format.h>

#include "analysis/pricing.h"
#include "core/json_writer.h"
#include "identity/cloud_instance.h"
#include "os/env.h"
#include "telemetry/host_reader.h"
#include "telemetry/job_tree.h"
#include "telemetry/nvml_source.h"
#include "telemetry/pid_namespace.h"
#include "telemetry/procfs_pid.h"
#include "telemetry/sampler.h"

namespace cgov {

RunRecorder::RunRecorder(RecorderOptions options, SamplesHeader header, JsonlWriter* writer)
    : options_(std::move(options)), header_(std::move(header)), writer_(writer) {}

RunRecorder::~RunRecorder() {
  Stop();
  worker_.Stop();  // NVML's shutdown, which Stop() did not wait for, is over
}

void RunRecorder::Start() {
  Status started = worker_.Start("cgov-recorder", Worker::Wait(0), [this] {
    Run();  // until stopped
    return Worker::kUntilWoken;
  });
  started_ = started.ok();
  // The job runs all the same; its report says why it has no samples.
  if (!started_) warnings_.push_back("nothing was sampled: " + std::string(started.message()));
}

// Returns once the thread handed over what it collected, before NVML shuts down.
void RunRecorder::Stop() {
  worker_.RequestStop();
  std::unique_lock<std::mutex> lock(mu_);
  if (started_) collected_cv_.wait(lock, [this] { return collected_; });
}

bool RunRecorder::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  const auto left = deadline - options_.env->SteadyNow();
  return left <= left.zero() ? !worker_.stopping() : !worker_.Sleep(left);
}

void RunRecorder::Run() {
  // NVML is opened here, after the job started: a real nvmlInit can take a second on a big node
  // and the job must not wait for it.
  std::unique_ptr<NvmlSource> nvml;
  if (auto opened = NvmlSource::Open(options_.nvml_lib, &options_.env->clock()); opened.ok()) {
    nvml = std::move(opened).value();
    nvml->StartEventWatch();
    header_.nvml_ok = true;
    header_.driver_version = nvml->driver_version();
    header_.gpus = nvml->gpus();
  } else {
    header_.nvml_error = opened.status().message();
    gpu_unavailable_reason_ = header_.nvml_error;
  }
  accumulator_ = std::make_unique<RunAccumulator>(header_.gpus, options_.start_mono_ns,
                                                  options_.interval.count());
  if (writer_ != nullptr) writer_->Append(DumpJson(HeaderRecord(header_)));

  std::unique_ptr<FileReader> own_files = options_.env->NewFileReader(options_.host_root);
  FileReader& files = *own_files;
  HostReader host(&files, &options_.env->clock());
  // --db: failures there become warnings and end the recording, never the job or its report.
  RunHistory* history = options_.history;
  auto history_failed = [&](const Status& s) {
    warnings_.push_back(fmt::format("--db {}: {}; the rest of the run is not recorded there",
                                    history->path(), s.message()));
    history = nullptr;
  };
  if (history != nullptr) {
    Status begun = history->Begin(header_.gpus, options_.hostname, options_.start_wall_ms,
                                  options_.interval.count(), options_.price, &files);
    if (!begun.ok()) history_failed(begun);
  }
  JobTreeOptions tree_options;
  tree_options.ticks_per_second = sysconf(_SC_CLK_TCK);
  tree_options.page_size = sysconf(_SC_PAGESIZE);
  JobTreeReader tree(&files, JobRootPid(files), tree_options, options_.preexisting_pids);
  std::unique_ptr<SlowPoller> poller;
  if (nvml) {
    poller = std::make_unique<SlowPoller>(nvml.get());
    poller->Start();
  }
  // Process lists cost milliseconds on real drivers: read them at most once a second, whatever
  // the tick, just before the tick that falls due, which waits for them a bounded time (a
  // quarter of the interval, at most 250 ms) so that both describe the same interval.
  const int64_t slow_every =
      std::max<int64_t>(1, 1000 / std::max<int64_t>(1, options_.interval.count()));
  const auto slow_wait = std::min<std::chrono::steady_clock::duration>(
      options_.interval / 4, std::chrono::milliseconds(250));
  std::set<std::string> host_errors;  // every distinct one of the run, not just the last tick's
  bool gpu_processes_seen = false;
  int64_t ticks = 0;
  Sampler sampler(nvml.get(), poller.get(), &host, &options_.env->clock());
  TickSample tick;
  std::string line;
  auto next = options_.env->SteadyNow();
  for (;;) {
    if (worker_.stopping()) break;
    const bool slow_due = ticks++ % slow_every == 0;
    if (poller && slow_due) poller->KickAndWait(slow_wait);
    sampler.Tick(&tick);
    JobTreeSample job =
        tree.Read(tick.mono_ns, tick.host.load ? tick.host.load->last_pid : std::nullopt);
    accumulator_->AddTick(tick, job);
    if (history != nullptr) {
      if (Status recorded = history->Record(tick, job.pids); !recorded.ok())
        history_failed(recorded);
    }
    for (const GpuSlowSample& g : tick.gpu_slow) gpu_processes_seen |= !g.processes.empty();
    for (const Status& e : host.errors()) host_errors.insert(e.message());
    if (writer_ != nullptr) {
      WriteTickRecord(tick, job, options_.start_mono_ns, &line);
      writer_->Append(line);
    }
    // After the first tick, so that sampling starts at once (the request may take 300 ms).
    if (ticks == 1 && !options_.metadata_endpoint.empty()) DetectInstance();
    // A late tick is taken late, never twice to catch up.
    next = std::max(next + options_.interval, options_.env->SteadyNow());
    if (!WaitUntil(next)) break;
  }
  if (poller) poller->Stop();
  if (history != nullptr) {
    if (Status finished = history->Finish(); !finished.ok()) history_failed(finished);
  }
  warnings_.insert(warnings_.end(), host_errors.begin(), host_errors.end());
  AddDriverWarnings(nvml.get(), gpu_processes_seen);
  // Everything the report reads is in: Stop() returns now, and NVML is shut down (this
  // function's locals: milliseconds on a real driver) while the caller writes the report.
  {
    std::lock_guard<std::mutex> lock(mu_);
    collected_ = true;
  }
  collected_cv_.notify_all();
}

// What degraded the run's GPU data: the driver writing past its ABI, and GPU processes that
// cannot be the job's because cgov sees another PID namespace than the driver.
void RunRecorder::AddDriverWarnings(NvmlSource* nvml, bool gpu_processes_seen) {
  if (nvml != nullptr) {
    for (const std::string& w : nvml->AbiWarnings()) warnings_.push_back("NVML: " + w);
  }
  if (!gpu_processes_seen || root_in_host_namespace_) return;
  std::optional<uint64_t> ns = OwnPidNamespaceInode();
  if (ns && *ns != kInitialPidNamespaceInode) {
    warnings_.push_back(
        "cgov runs in a PID namespace of its own (a container) and the driver reports host pids: "
        "GPU processes cannot be matched to the job. Mount the host's /proc read-only and pass "
        "--host-root, or share the host's PID namespace (docker --pid=host)");
  }
}

// The job's root (cgov itself) as the procfs under --host-root numbers it: with the host's /proc
// mounted into a container, the driver's host pids then match the job tree's.
int RunRecorder::JobRootPid(FileReader& files) {
  if (options_.host_root.empty() || options_.host_root == "/") {
    std::optional<uint64_t> ns = OwnPidNamespaceInode();
    root_in_host_namespace_ = !ns || *ns == kInitialPidNamespaceInode;
    return options_.root_pid;
  }
  std::unique_ptr<FileReader> own = options_.env->NewFileReader("/");
  std::string text;
  if (!own->Read(fmt::format("/proc/{}/stat", options_.root_pid), &text).ok()) {
    return options_.root_pid;
  }
  Result<PidStat> self = ParsePidStat(text);
  if (!self.ok()) return options_.root_pid;
  std::optional<int> outer = FindOuterPid(files, options_.root_pid, self->start_ticks);
  root_in_host_namespace_ = true;  // either mapped, or the host root is our own namespace's
  return outer.value_or(options_.root_pid);
}

void RunRecorder::DetectInstance() {
  // A few requests, 300 ms at most in all, off the job's path (identity/cloud_instance.h).
  auto found = DetectCloudInstance(options_.cloud, options_.metadata_endpoint,
                                   std::chrono::milliseconds(300), options_.env);
  if (!found.ok()) {
    warnings_.push_back("instance detection: " + found.status().message());
    return;
  }
  detected_instance_type_ = found->instance_type;
}

void RunRecorder::Finish(int64_t end_mono_ns, RunSummary* summary) const {
  if (accumulator_) accumulator_->Finish(end_mono_ns, summary);
  summary->gpu_unavailable_reason = gpu_unavailable_reason_;
  summary->driver_version = header_.driver_version;
  for (const std::string& w : warnings_) summary->warnings.push_back(w);
  if (writer_ != nullptr && !writer_->error().ok()) {
    summary->warnings.push_back(writer_->error().message());
  }
}

}  // namespace cgov
