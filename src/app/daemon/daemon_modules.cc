#include "app/daemon/daemon_modules.h"

#include <CLI/CLI.hpp>

#include "app/daemon/daemon_core.h"

namespace cgov {

// Each defined in its module's file. A new module is its file, its declaration here and its
// entry in the list below (docs/architecture.md, "Adding a daemon module").
std::unique_ptr<DaemonModuleKind> NewBudgetsModuleKind();     // --budgets: each budget's spend
std::unique_ptr<DaemonModuleKind> NewMetricsModuleKind();     // --listen: /metrics and /health
std::unique_ptr<DaemonModuleKind> NewWorkModuleKind();        // with --listen: jobs' progress files
std::unique_ptr<DaemonModuleKind> NewPolicyModuleKind();      // --policy: stops idle holders
std::unique_ptr<DaemonModuleKind> NewNotifyModuleKind();      // --notify: rules and deliveries
std::unique_ptr<DaemonModuleKind> NewKubernetesModuleKind();  // --kubernetes: pods by name
std::unique_ptr<DaemonModuleKind> NewPodResourcesModuleKind();  // --pod-resources: kubelet's
std::unique_ptr<DaemonModuleKind> NewDriverEventsModuleKind();  // always: Xids, memory health
std::unique_ptr<DaemonModuleKind> NewTickLogModuleKind();       // --log-ticks: a line a tick

DaemonModuleKinds AllDaemonModuleKinds() {
  DaemonModuleKinds kinds;
  for (auto make : {NewBudgetsModuleKind, NewMetricsModuleKind, NewWorkModuleKind,
                    NewPolicyModuleKind, NewNotifyModuleKind, NewKubernetesModuleKind,
                    NewPodResourcesModuleKind, NewDriverEventsModuleKind, NewTickLogModuleKind}) {
    kinds.push_back(make());
  }
  return kinds;
}

void AddDaemonModules(DaemonModuleKinds& kinds, DaemonCore* core) {
  for (const auto& kind : kinds) {
    if (kind->enabled()) core->Add(kind->Make(&core->context()));
  }
}

bool FlagGiven(const CLI::App& app, const std::string& flag) {
  const CLI::Option* option = app.get_option_no_throw(flag);
  if (option == nullptr || option->count() == 0) return false;     // no such module here
  if (option->get_expected_max() == 0) return option->as<bool>();  // a flag: not given false
  if (option->get_expected_min() == 0) return true;                // --listen: alone is enough
  return !option->as<std::string>().empty();                       // --budgets "": not given
}

}  // namespace cgov
