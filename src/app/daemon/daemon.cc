#include "app/daemon/daemon.h"

#include "app/daemon/daemon_core.h"
#include "app/daemon/daemon_modules.h"
#include "identity/cloud_instance.h"
#include "os/env.h"
#include "os/log.h"

namespace cgov {

namespace {

// --detect-instance: fills what --instance-type and --instance-id left empty; a failure is said
// and the daemon goes on (priced by GPU model, as without the flag).
void DetectInstance(DaemonOptions* o) {
  Result<CloudInstance> found =
      DetectCloudInstance(*o->detect_instance, o->metadata_endpoint, std::chrono::seconds(2));
  if (!found.ok()) {
    LogWarning("--detect-instance: {}; pricing by GPU model", found.status().message());
    return;
  }
  LogInfo("--detect-instance: {} instance {} ({})", CloudProviderName(found->provider),
          found->instance_type, found->instance_id.empty() ? "no id" : found->instance_id);
  if (o->price.instance_type.empty() && !o->price.price_per_gpu_hour) {
    if (ResolvePrice({std::nullopt, found->instance_type, o->price.spot}, "", o->catalog).ok()) {
      o->price.instance_type = found->instance_type;
    } else {
      LogWarning("--detect-instance: {} is not in the price catalog; pricing by GPU model",
                 found->instance_type);
    }
  }
  if (o->instance_id.empty()) o->instance_id = found->instance_id;
}

}  // namespace

Status RunDaemon(DaemonOptions options, DaemonModuleKinds modules, const sigset_t& stop) {
  if (options.detect_instance) DetectInstance(&options);
  DaemonCore core(std::move(options), Env::Default());
  AddDaemonModules(modules, &core);
  CGOV_RETURN_IF_ERROR(core.Start());
  core.RunUntilSignal(stop);
  (void)core.Stop();  // said; the ticks before were committed as they went
  return Status::Ok();
}

}  // namespace cgov
