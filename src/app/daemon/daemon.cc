#include "app/daemon/daemon.h"

#include "app/daemon/daemon_core.h"
#include "app/daemon/daemon_modules.h"

namespace cgov {

Status RunDaemon(DaemonOptions options, const sigset_t& stop) {
  SystemClock clock;
  RootedFileReader files(options.host_root);
  DaemonCore core(std::move(options), &clock, &files);
  for (auto& module : DaemonModulesFor(&core.context())) core.Add(std::move(module));
  CGOV_RETURN_IF_ERROR(core.Start());
  core.RunUntilSignal(stop);
  (void)core.Stop();  // said; the ticks before were committed as they went
  return Status::Ok();
}

}  // namespace cgov
