#include "policy/policy_process.h"

#include "telemetry/procfs_pid.h"

namespace cgov {

std::string ProcRootUnder(const std::string& host_root) {
  return host_root.empty() || host_root == "/" ? "/proc" : host_root + "/proc";
}

HostAccounts ReadHostAccounts(FileReader& files, std::vector<std::string>* problems) {
  HostAccounts out;
  std::string text;
  if (Status s = files.Read("/etc/passwd", &text); s.ok()) {
    out.users = ParsePasswd(text);
  } else if (problems != nullptr) {
    problems->push_back(s.message() + "; policies scoped by user match no one");
  }
  text.clear();
  if (Status s = files.Read("/etc/group", &text); s.ok()) {
    out.groups = ParseGroupFile(text);
  } else if (problems != nullptr) {
    problems->push_back(s.message() + "; policies scoped by group match no one");
  }
  return out;
}

void ApplyCredentials(const ProcessCredentials& c, const HostAccounts& accounts, PolicyProcess* p) {
  p->start_ticks = c.start_ticks;
  p->uid = c.uid;
  p->euid = c.euid;
  p->suid = c.suid;
  p->loginuid = c.loginuid;
  // Scope is by the owner, the real uid: not the login user (carol logged in as alice is still
  // carol), whom the reports name.
  if (auto u = accounts.users.find(c.uid); u != accounts.users.end()) p->user = u->second;
  p->groups.clear();
  for (uint32_t gid : c.gids) {
    if (auto g = accounts.groups.find(gid); g != accounts.groups.end()) {
      p->groups.push_back(g->second);
    }
  }
}

PolicyProcess ReadPolicyProcess(FileReader& files, const std::string& proc_root, uint32_t pid,
                                const HostAccounts& accounts) {
  PolicyProcess p;
  p.pid = pid;
  if (Result<ProcessCredentials> c = ReadCredentials(files, pid); c.ok()) {
    ApplyCredentials(*c, accounts, &p);
  }
  const ProcessExecutable exe = ReadExecutable(proc_root, pid);
  p.exe = exe.path;
  p.exe_trusted = exe.trusted;
  return p;
}

}  // namespace cgov
