#include "app/daemon/daemon_modules.h"

namespace cgov {

std::vector<std::unique_ptr<DaemonModule>> DaemonModulesFor(DaemonContext* context) {
  const DaemonOptions& o = context->options();
  std::vector<std::unique_ptr<DaemonModule>> modules;
  if (o.budgets) modules.push_back(NewBudgetsModule(context));
  if (o.http) modules.push_back(NewMetricsModule(context));
  if (o.http) modules.push_back(NewWorkModule(context));
  if (o.policy) modules.push_back(NewPolicyModule(context));
  if (o.notify) modules.push_back(NewNotifyModule(context));
  if (o.kube) modules.push_back(NewKubernetesModule(context));
  if (o.pod_resources) modules.push_back(NewPodResourcesModule(context));
  modules.push_back(NewDriverEventsModule(context));
  if (o.log_ticks) modules.push_back(NewTickLogModule(context));
  return modules;
}

}  // namespace cgov
