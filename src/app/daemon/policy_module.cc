// --policy: each tick's GPU processes as the policy sees them (owner, groups, executable,
// whether they hold an idle GPU), its decisions carried out and kept in the history. What it
// did goes into the tick for the notices.
#include <set>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "app/daemon/daemon_config.h"
#include "app/daemon/daemon_modules.h"
#include "os/log.h"
#include "policy/policy_executor.h"
#include "policy/policy_process.h"

namespace cgov {
namespace {

class PolicyModule : public DaemonModule {
 public:
  PolicyModule(DaemonContext* d, PolicyFile policy, bool dry_run)
      : d_(*d), policy_(std::move(policy)), dry_run_(dry_run) {}
  std::string_view name() const override { return "policy"; }
  Status Start() override;
  Status AfterWrite(DaemonTick* tick) override;

 private:
  PolicyProcess ProcessOf(const StoredProcess& sp);
  // The tick's processes by pid, each with whether it used a GPU and held only idle ones.
  std::map<uint32_t, PolicyProcess> Processes(DaemonTick* tick);

  DaemonContext& d_;
  PolicyFile policy_;
  bool dry_run_;  // --policy-dry-run
  std::unique_ptr<PolicyEngine> engine_;
  std::unique_ptr<PolicyExecutor> executor_;
  DaemonTick* tick_ = nullptr;  // the tick being enforced, for the executor's records
  Status record_failure_;       // the first record this tick could not write
  std::map<uint32_t, std::optional<ProcessCredentials>> credentials_;  // by pid, while on a GPU
  HostAccounts accounts_;                              // the host's /etc/passwd and /etc/group
  std::map<uint32_t, ProcessExecutable> executables_;  // by pid, read with its credentials
};

Status PolicyModule::Start() {
  std::vector<std::string> problems;
  accounts_ = ReadHostAccounts(d_.files(), &problems);
  for (const std::string& p : problems) LogWarning(d_.env(), "--policy: {}", p);
  engine_ = std::make_unique<PolicyEngine>(policy_);
  executor_ = std::make_unique<PolicyExecutor>(dry_run_, [this](const PolicyActionRecord& r) {
    if (tick_ != nullptr) tick_->policy_actions.push_back(r);
    if (d_.writer() == nullptr) return;
    Status s = d_.writer()->store().PutPolicyAction(r);
    if (!s.ok() && record_failure_.ok()) record_failure_ = s;
  });
  LogInfo(d_.env(), "--policy: {} polic{} from {}; {}", policy_.rules.size(),
          policy_.rules.size() == 1 ? "y" : "ies", policy_.path,
          dry_run_ ? "dry run: it records what it would do and signals nothing"
                   : "enabled: it sends SIGTERM, then SIGKILL after each grace");
  return Status::Ok();
}

PolicyProcess PolicyModule::ProcessOf(const StoredProcess& sp) {
  const std::vector<uint32_t>& gpu_ids = d_.gpu_ids();
  PolicyProcess p;
  p.pid = sp.pid;
  p.gpu_id = sp.gpu_pos < gpu_ids.size() ? gpu_ids[sp.gpu_pos] : 0;
  auto [it, fresh] = credentials_.try_emplace(sp.pid);
  if (fresh) {
    Result<ProcessCredentials> read = ReadCredentials(d_.files(), sp.pid);
    if (read.ok()) it->second = *read;
    executables_[sp.pid] = ReadExecutable(ProcRootUnder(d_.options().host_root), sp.pid);
  }
  if (it->second) ApplyCredentials(*it->second, accounts_, &p);
  if (auto e = executables_.find(sp.pid); e != executables_.end()) {
    p.exe = e->second.path;
    p.exe_trusted = e->second.trusted;
  }
  p.command = d_.CommandOf(sp.command_id);
  p.idle_held = true;
  return p;
}

std::map<uint32_t, PolicyProcess> PolicyModule::Processes(DaemonTick* tick) {
  const std::vector<GpuPoint>& points = tick->points();
  const std::vector<std::optional<Phase>>& phases = tick->phases();
  std::map<uint32_t, PolicyProcess> by_pid;
  std::set<uint32_t> computing;  // held compute memory somewhere
  for (const StoredProcess& sp : tick->stored.processes) {
    if (sp.gpu_pos >= points.size()) continue;
    const GpuPoint& g = points[sp.gpu_pos];
    auto it = by_pid.find(sp.pid);
    if (it == by_pid.end()) it = by_pid.emplace(sp.pid, ProcessOf(sp)).first;
    PolicyProcess& p = it->second;
    // Unknown utilization counts as use: a guard that cannot be checked holds.
    p.used_gpu = p.used_gpu || g.util_pct.value_or(1) > 0 || sp.sm_util_pct.value_or(0) > 0;
    if (!sp.compute) continue;
    computing.insert(sp.pid);
    p.idle_held = p.idle_held && phases[sp.gpu_pos] == Phase::kIdleHeld;
  }
  for (auto& [pid, p] : by_pid) p.idle_held = p.idle_held && computing.count(pid) > 0;
  return by_pid;
}

Status PolicyModule::AfterWrite(DaemonTick* tick) {
  if (!tick->built || d_.writer() == nullptr) return Status::Ok();
  const int64_t now_ms = tick->sample.wall_ns / 1'000'000;
  // A pid whose process exited may name another now: its credentials are read again.
  for (uint32_t pid : d_.attributor()->exited()) {
    credentials_.erase(pid);
    executables_.erase(pid);
  }
  std::map<uint32_t, PolicyProcess> by_pid = Processes(tick);
  std::vector<PolicyProcess> processes;
  std::set<uint32_t> used;
  for (auto& [pid, p] : by_pid) {
    if (p.used_gpu) used.insert(pid);
    processes.push_back(p);
  }
  tick_ = tick;
  record_failure_ = Status::Ok();
  for (const PolicyDecision& d : engine_->Evaluate(now_ms, processes)) executor_->Act(d, now_ms);
  executor_->Tick(now_ms, used);
  tick_ = nullptr;
  for (auto it = credentials_.begin(); it != credentials_.end();) {
    it = by_pid.count(it->first) > 0 ? std::next(it) : credentials_.erase(it);
  }
  for (auto it = executables_.begin(); it != executables_.end();) {
    it = credentials_.count(it->first) > 0 ? std::next(it) : executables_.erase(it);
  }
  return record_failure_;
}

class PolicyKind : public DaemonModuleKind {
 public:
  std::string_view name() const override { return "policy"; }
  void AddFlags(CLI::App* app) override {
    app->add_option("--policy", path_,
                    "a policy file (TOML, docs/policy.md): stop processes that have held idle "
                    "GPUs too long (SIGTERM, then SIGKILL after a grace), for the users and "
                    "groups it names; every action is kept in the history database")
        ->group("Policy (--policy)");
    app->add_flag(
           "--policy-dry-run", dry_run_,
           "with --policy: decide and record what it would do (action would_stop), signal nothing")
        ->group("Policy (--policy)");
  }
  Status Configure(const CLI::App& /*app*/, const DaemonOptions& /*core*/) override {
    if (path_.empty()) {
      if (dry_run_) return InvalidArgument("cgov daemon: --policy-dry-run goes with --policy");
      return Status::Ok();
    }
    CGOV_ASSIGN_OR_RETURN(std::string text, ReadDaemonFile(*Env::Default(), path_, "--policy"));
    Result<PolicyFile> file = ParsePolicyFile(text, path_);
    if (!file.ok()) return file.status().WithContext("cgov daemon: --policy");
    policy_ = std::move(file).value();
    return Status::Ok();
  }
  bool enabled() const override { return !path_.empty(); }
  std::unique_ptr<DaemonModule> Make(DaemonContext* context) override {
    return std::make_unique<PolicyModule>(context, std::move(policy_), dry_run_);
  }

 private:
  std::string path_;
  bool dry_run_ = false;
  PolicyFile policy_;
};

}  // namespace

std::unique_ptr<DaemonModuleKind> NewPolicyModuleKind() { return std::make_unique<PolicyKind>(); }

}  // namespace cgov
