// The daemon's modules (daemon_module.h), one file each, and the list the options ask for.
// Each takes the core's context, which outlives it; a module that offers a service to the
// others (the pod directory, the metrics registry, the budgets) sets it in the context.
#ifndef CGOV_APP_DAEMON_DAEMON_MODULES_H_
#define CGOV_APP_DAEMON_DAEMON_MODULES_H_

#include <memory>
#include <vector>

#include "app/daemon/daemon_module.h"

namespace cgov {

// --budgets: each budget's spend in its period, seeded from the history, credited each tick;
// offers context->budgets to /metrics and the notices.
std::unique_ptr<DaemonModule> NewBudgetsModule(DaemonContext* context);
// --listen: /metrics, /health and the registry the others report to (context->metrics).
std::unique_ptr<DaemonModule> NewMetricsModule(DaemonContext* context);
// --policy: stops the processes its rules name; every action kept in the history.
std::unique_ptr<DaemonModule> NewPolicyModule(DaemonContext* context);
// --notify: the notification rules, their incidents and the delivery of their notices.
std::unique_ptr<DaemonModule> NewNotifyModule(DaemonContext* context);
// --kubernetes: this node's pods from the API server (context->pods).
std::unique_ptr<DaemonModule> NewKubernetesModule(DaemonContext* context);
// --pod-resources: the GPUs the kubelet allocated to containers, added to each tick.
std::unique_ptr<DaemonModule> NewPodResourcesModule(DaemonContext* context);
// Always: the driver's Xid events and each GPU's memory health, into the log and the history.
std::unique_ptr<DaemonModule> NewDriverEventsModule(DaemonContext* context);
// --log-ticks: a log line a tick (tick_log_module.cc).
std::unique_ptr<DaemonModule> NewTickLogModule(DaemonContext* context);
// With --listen: the work jobs report in their progress files, on /metrics.
std::unique_ptr<DaemonModule> NewWorkModule(DaemonContext* context);

// The modules context->options() asks for, in the order the core calls them: the budgets
// before the metrics and notices that read them, the policy before the notices of what it did.
std::vector<std::unique_ptr<DaemonModule>> DaemonModulesFor(DaemonContext* context);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_MODULES_H_
