#include "app/top/live_recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "app/daemon/daemon_core.h"
#include "app/daemon/daemon_modules.h"
#include "os/env.h"
#include "os/log.h"
#include "os/worker.h"

namespace cgov {

struct LiveRecorder::State {
  std::string dir, db;
  std::unique_ptr<DaemonCore> core;
  std::atomic<int64_t> ticks{0};
  Worker worker;
  int log_fd = -1;
  LogOptions saved_log;
};

LiveRecorder::LiveRecorder(std::unique_ptr<State> state) : state_(std::move(state)) {}

Result<std::unique_ptr<LiveRecorder>> LiveRecorder::Start(const LiveRecorderOptions& o) {
  auto s = std::make_unique<State>();
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && tmp[0] == '/' ? tmp : "/tmp") + "/cgov-top-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return IoError(fmt::format("cannot make a directory for cgov top's own database under {}",
                               pattern.substr(0, pattern.rfind('/'))));
  }
  s->dir = pattern;
  s->db = s->dir + "/history.db";
  // The recorder's log: a file of its own (the screen is the view's).
  s->saved_log = CurrentLogOptions();
  s->log_fd = ::open((s->dir + "/log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  LogOptions log = s->saved_log;
  log.fd = s->log_fd >= 0 ? s->log_fd : log.fd;
  log.program = "cgov top";
  SetLogOptions(log);
  DaemonOptions d;
  d.db = s->db;
  d.interval = o.interval;
  d.commit_every = std::chrono::milliseconds(0);  // every tick visible to the view at once
  d.nvml_lib = o.nvml_lib;
  d.host_root = o.host_root;
  d.retain = std::chrono::hours(24);
  s->core = std::make_unique<DaemonCore>(std::move(d), Env::Default());
  DaemonModuleKinds modules = AllDaemonModuleKinds();  // no flag given: the always-on ones
  AddDaemonModules(modules, s->core.get());
  std::unique_ptr<LiveRecorder> recorder(new LiveRecorder(std::move(s)));
  State& st = *recorder->state_;
  CGOV_RETURN_IF_ERROR(st.core->Start());
  st.core->Tick();
  st.ticks = 1;
  const auto interval = std::chrono::duration_cast<Worker::Wait>(o.interval);
  CGOV_RETURN_IF_ERROR(st.worker.Start("cgov-top-rec", interval, [&st, interval] {
    st.core->Tick();
    st.ticks.fetch_add(1);
    return interval;
  }));
  return recorder;
}

LiveRecorder::~LiveRecorder() {
  if (!state_) return;
  state_->worker.Stop();
  if (state_->core) (void)state_->core->Stop();
  state_->core.reset();
  SetLogOptions(state_->saved_log);
  if (state_->log_fd >= 0) ::close(state_->log_fd);
  std::error_code ec;
  std::filesystem::remove_all(state_->dir, ec);
}

const std::string& LiveRecorder::db() const { return state_->db; }

bool LiveRecorder::WaitForTicks(int64_t ticks, std::chrono::milliseconds timeout) const {
  Env* env = Env::Default();
  const auto until = env->SteadyNow() + timeout;
  while (state_->ticks.load() < ticks) {
    if (env->SteadyNow() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

}  // namespace cgov
