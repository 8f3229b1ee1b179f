// The daemon's modules (daemon_module.h), one file each with its kind (its flags and
// configuration), and the one list of them.
#ifndef CGOV_APP_DAEMON_DAEMON_MODULES_H_
#define CGOV_APP_DAEMON_DAEMON_MODULES_H_

#include <memory>
#include <vector>

#include "app/daemon/daemon_module.h"

namespace cgov {

class DaemonCore;

using DaemonModuleKinds = std::vector<std::unique_ptr<DaemonModuleKind>>;

// Every kind of module, fresh (no flag given), in the order --help lists their flags and the
// core calls their modules: the budgets before the metrics and notices that read them, the
// policy before the notices of what it did. daemon_modules.cc says what each is.
DaemonModuleKinds AllDaemonModuleKinds();

// The modules the kinds' flags asked for, added to `core` in the kinds' order.
// REQUIRES: each kind configured (DaemonModuleKind::Configure), or never given flags.
void AddDaemonModules(DaemonModuleKinds& kinds, DaemonCore* core);

}  // namespace cgov

#endif  // CGOV_APP_DAEMON_DAEMON_MODULES_H_
