#include "telemetry/process_reader.h"

#include <fmt/format.h>

#include "core/text.h"
#include "telemetry/text_scan.h"

namespace cgov {

Result<ProcessIdentity> ProcessReader::Read(int pid) {
  const std::string dir = fmt::format("/proc/{}/", pid);
  CGOV_RETURN_IF_ERROR(files_->Read(dir + "stat", &buffer_));
  Result<PidStat> stat = ParsePidStat(buffer_);
  if (!stat.ok()) return stat.status().WithContext(dir + "stat");
  ProcessIdentity id;
  id.stat = std::move(stat).value();
  if (files_->Read(dir + "status", &buffer_).ok()) {
    if (Result<uint32_t> uid = ParseStatusUid(buffer_); uid.ok()) id.uid = *uid;
    if (Result<uint32_t> gid = ParseStatusGid(buffer_); gid.ok()) id.gid = *gid;
  }
  if (files_->Read(dir + "loginuid", &buffer_).ok()) {
    if (auto login = ParseLoginuid(buffer_); login.ok()) id.loginuid = *login;
  }
  if (files_->Read(dir + "cgroup", &buffer_).ok()) id.cgroup = ParseCgroup(buffer_);
  if (id.loginuid) {
    id.user = UserName(*id.loginuid);
  } else if (id.uid) {
    id.user = UserName(*id.uid);
  }
  return id;
}

std::vector<PidStat> ProcessReader::ScanAll() {
  std::vector<PidStat> table;
  std::vector<std::string> names;
  if (!files_->ListDir("/proc", &names).ok()) return table;
  for (const std::string& name : names) {
    uint64_t pid = 0;
    if (!ParseU64(name, &pid)) continue;
    if (!files_->Read("/proc/" + name + "/stat", &buffer_).ok()) continue;  // vanished
    if (Result<PidStat> stat = ParsePidStat(buffer_); stat.ok()) table.push_back(*stat);
  }
  return table;
}

std::string ProcessReader::UserName(uint32_t uid) {
  if (!passwd_) {
    std::string text;
    passwd_ = files_->Read("/etc/passwd", &text).ok() ? ParsePasswd(text)
                                                      : std::map<uint32_t, std::string>{};
  }
  auto it = passwd_->find(uid);
  return it != passwd_->end() ? SafeText(it->second) : std::to_string(uid);
}

}  // namespace cgov
