#include "policy/policy_executor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/duration.h"
#include "core/time_format.h"
#include "os/env.h"
#include "os/log.h"
#include "policy/process_credentials.h"
#include "telemetry/procfs_pid.h"

namespace cgov {
namespace {

int PidfdOpen(uint32_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSignal(int pidfd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}

std::optional<std::string> Slurp(const std::string& path) {
  std::string text;
  if (!Env::Default()->NewFileReader("/")->Read(path, &text).ok()) return std::nullopt;
  return text;
}

// The pidfd became readable: the process has exited.
bool Exited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

std::string Duration(int64_t ms) { return FormatDuration(std::chrono::milliseconds(ms)); }

}  // namespace

PolicyExecutor::~PolicyExecutor() {
  for (const Pending& p : pending_) close(p.pidfd);
}

void PolicyExecutor::Record(PolicyActionRecord r, std::string action, std::string outcome,
                            int64_t now_ms) {
  r.ts_ms = now_ms;
  r.action = std::move(action);
  r.outcome = std::move(outcome);
  LogInfo("{}: --policy {:?}: {} pid {} ({}'s {}, {}, idle-held for {}): {}",
          FormatRfc3339Utc(now_ms * 1'000'000), r.policy, r.action, r.pid, r.user, r.command,
          r.uids, Duration(r.idle_held_ms), r.outcome);
  record_(r);
}

int PolicyExecutor::OpenVerified(const PolicyProcess& p, std::string* why,
                                 std::string* read) const {
  const int pidfd = PidfdOpen(p.pid);
  if (pidfd < 0) {
    *why = errno == ESRCH ? "it had exited already"
                          : fmt::format("pidfd_open: {}", std::strerror(errno));
    return -1;
  }
  // Read after the pidfd is held: if these still describe the sampled process, the pidfd does.
  const std::string dir = fmt::format("{}/{}", proc_root_, p.pid);
  std::optional<std::string> stat = Slurp(dir + "/stat");
  std::optional<std::string> status = Slurp(dir + "/status");
  Result<PidStat> parsed = stat ? ParsePidStat(*stat) : Result<PidStat>(NotFound("no stat"));
  Result<uint32_t> uid = status ? ParseStatusUid(*status) : Result<uint32_t>(NotFound("no status"));
  if (!parsed.ok() || !uid.ok() || parsed->start_ticks != p.start_ticks || *uid != *p.uid) {
    close(pidfd);
    *why =
        "the pid no longer names the process that was sampled (it exited and the pid was reused, "
        "or the GPU driver sees another pid namespace)";
    return -1;
  }
  // Its rights now, not when it was sampled: a process that ran a setuid-root program since is
  // root's, and never signalled.
  const StatusRights rights = ParseStatusRights(*status);
  *read = rights.text;
  if (!rights.root_rights.empty()) {
    close(pidfd);
    *why = rights.root_rights;
    return -1;
  }
  return pidfd;
}

std::string PolicyExecutor::RootRightsNow(const Pending& p, std::string* read) const {
  const std::string dir = fmt::format("{}/{}", proc_root_, p.record.pid);
  std::optional<std::string> stat = Slurp(dir + "/stat");
  std::optional<std::string> status = Slurp(dir + "/status");
  Result<PidStat> parsed = stat ? ParsePidStat(*stat) : Result<PidStat>(NotFound("no stat"));
  // Read while the pidfd is held: the same start time means the same process.
  if (!status || !parsed.ok() || parsed->start_ticks != p.start_ticks) {
    return "its status could not be read again";
  }
  const StatusRights rights = ParseStatusRights(*status);
  *read = rights.text;
  return rights.root_rights;
}

void PolicyExecutor::Act(const PolicyDecision& d, int64_t now_ms) {
  PolicyActionRecord r;
  r.policy = d.rule->name;
  r.gpu_id = d.process.gpu_id;
  r.pid = d.process.pid;
  r.user = d.process.user;
  r.command = d.process.command;
  r.uids = UidsText(d.process);
  r.idle_held_ms = now_ms - d.idle_since_ms;
  if (d.kind == PolicyDecision::Kind::kRefused) {
    Record(std::move(r), "refused", d.why, now_ms);
    return;
  }
  if (dry_run_) {
    Record(std::move(r), "would_stop",
           fmt::format("dry run: SIGTERM, then SIGKILL after {} if it still runs",
                       Duration(d.rule->grace_ms)),
           now_ms);
    return;
  }
  std::string why, read;
  const int pidfd = OpenVerified(d.process, &why, &read);
  if (!read.empty()) r.uids = read;  // what was read at the decision
  if (pidfd < 0) {
    Record(std::move(r), "refused", why, now_ms);
    return;
  }
  if (PidfdSignal(pidfd, SIGTERM) != 0) {
    const int err = errno;
    close(pidfd);
    Record(std::move(r), "refused",
           err == ESRCH ? "it had exited already" : fmt::format("SIGTERM: {}", std::strerror(err)),
           now_ms);
    return;
  }
  Record(r, "sigterm",
         fmt::format("sent; SIGKILL after {} if it still runs", Duration(d.rule->grace_ms)),
         now_ms);
  pending_.push_back(
      {pidfd, now_ms, now_ms + d.rule->grace_ms, d.process.start_ticks, std::move(r)});
}

void PolicyExecutor::Tick(int64_t now_ms, const std::set<uint32_t>& used_gpu) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = *it;
    if (Exited(p.pidfd)) {
      Record(p.record, "exited",
             fmt::format("it exited within {} of SIGTERM", Duration(now_ms - p.term_ms)), now_ms);
    } else if (now_ms < p.kill_at_ms) {
      ++it;
      continue;
    } else if (used_gpu.count(p.record.pid) > 0) {
      Record(p.record, "withheld", "SIGKILL withheld: it used a GPU in the last sample", now_ms);
    } else if (std::string read, root = RootRightsNow(p, &read); !root.empty()) {
      PolicyActionRecord r = p.record;
      if (!read.empty()) r.uids = read;
      Record(std::move(r), "refused", "SIGKILL withheld: " + root, now_ms);
    } else if (PidfdSignal(p.pidfd, SIGKILL) != 0) {
      const int err = errno;
      Record(p.record, err == ESRCH ? "exited" : "refused",
             err == ESRCH ? "it exited as the grace ended"
                          : fmt::format("SIGKILL: {}", std::strerror(err)),
             now_ms);
    } else {
      Record(p.record, "sigkill",
             fmt::format("sent: it still ran {} after SIGTERM", Duration(now_ms - p.term_ms)),
             now_ms);
    }
    close(p.pidfd);
    it = pending_.erase(it);
  }
}

}  // namespace cgov
