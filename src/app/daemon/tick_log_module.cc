// --log-ticks: one info line a tick, what gpu-usage-audit's daemon prints: each GPU's phase and
// utilization, and for an idle-held GPU who holds it, so `journalctl -fu cgov` reads as a live
// view. Off by default (a line a second is a lot of journal).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon_modules.h"
#include "os/log.h"

namespace cgov {
namespace {

class TickLogModule : public DaemonModule {
 public:
  explicit TickLogModule(DaemonContext* d) : d_(*d) {}
  std::string_view name() const override { return "tick_log"; }
  Status AfterWrite(DaemonTick* tick) override;

 private:
  DaemonContext& d_;
  int64_t ticks_ = 0;
};

Status TickLogModule::AfterWrite(DaemonTick* tick) {
  ++ticks_;
  const std::vector<GpuInfo>& gpus = d_.gpus();
  const std::vector<std::optional<Phase>>& phases = tick->phases();
  const std::vector<GpuPoint>& points = tick->points();
  std::string line = fmt::format("tick {}{}:", ticks_, tick->written ? "" : " (not written)");
  size_t idle = 0;
  for (size_t i = 0; i < phases.size() && i < gpus.size(); ++i) {
    line += fmt::format(" GPU {}={}", gpus[i].Label(),
                        phases[i] ? PhaseKey(*phases[i]) : std::string_view("unknown"));
    if (points[i].util_pct) line += fmt::format(" {:.0f}%", *points[i].util_pct);
    if (!phases[i] || !IsIdle(*phases[i])) continue;
    ++idle;
    if (*phases[i] != Phase::kIdleHeld) continue;
    // Who holds it: the first compute process's user and command.
    for (const StoredProcess& p : tick->stored.processes) {
      if (p.gpu_pos != i || !p.compute) continue;
      const IdentityRecord* who = d_.IdentityOf(p.identity_id);
      line += fmt::format(" ({} {} pid {})", who != nullptr ? who->user : "?",
                          d_.CommandOf(p.command_id), p.pid);
      break;
    }
  }
  line += fmt::format("; {} of {} idle", idle, phases.size());
  LogInfo(d_.env(), "{}", line);
  return Status::Ok();
}

class TickLogKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "tick_log"; }
  void AddFlags(CLI::App* app) override {
    app->add_flag("--log-ticks", on_,
                  "log a line each tick: every GPU's phase and utilization, and who holds an "
                  "idle-held GPU (off by default)")
        ->group("Tick log (--log-ticks)");
  }
  bool enabled() const override { return on_; }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<TickLogModule>(context);
  }

 private:
  bool on_ = false;
};

}  // namespace

std::unique_ptr<DaemonModuleKind> NewTickLogModuleKind() { return std::make_unique<TickLogKind>(); }

}  // namespace cgov
