#include "policy/process_credentials.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "telemetry/procfs_pid.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

// The unsigned numbers of `text`, separated by spaces or tabs.
std::vector<uint32_t> Numbers(std::string_view text) {
  std::vector<uint32_t> out;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    uint32_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) break;
    out.push_back(v);
    p = next;
  }
  return out;
}

std::string_view Field(std::string_view status, std::string_view name) {
  for (size_t at = 0; at < status.size();) {
    const size_t eol = std::min(status.find('\n', at), status.size());
    std::string_view line = status.substr(at, eol - at);
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ':') {
      return line.substr(name.size() + 1);
    }
    at = eol + 1;
  }
  return {};
}

}  // namespace

std::vector<uint32_t> ParseStatusGids(std::string_view status) {
  std::vector<uint32_t> out;
  const std::vector<uint32_t> gid = Numbers(Field(status, "Gid"));
  if (!gid.empty()) out.push_back(gid.front());
  for (uint32_t g : Numbers(Field(status, "Groups"))) {
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  }
  return out;
}

std::map<uint32_t, std::string> ParseGroupFile(std::string_view text) {
  std::map<uint32_t, std::string> out;
  for (size_t at = 0; at < text.size();) {
    const size_t eol = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, eol - at);
    at = eol + 1;
    const size_t c1 = line.find(':');
    const size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    const size_t c3 = c2 == std::string_view::npos ? c2 : line.find(':', c2 + 1);
    if (c3 == std::string_view::npos || c1 == 0) continue;
    uint32_t gid = 0;
    auto [p, ec] = std::from_chars(line.data() + c2 + 1, line.data() + c3, gid);
    if (ec != std::errc() || p != line.data() + c3) continue;
    out.emplace(gid, std::string(line.substr(0, c1)));
  }
  return out;
}

Result<std::array<uint32_t, 3>> ParseStatusUids(std::string_view status) {
  const std::vector<uint32_t> uids = Numbers(Field(status, "Uid"));
  if (uids.size() < 3) {
    return InvalidArgument("/proc/PID/status: Uid: expected real, effective and saved uids");
  }
  return std::array<uint32_t, 3>{uids[0], uids[1], uids[2]};
}

StatusRights ParseStatusRights(std::string_view status) {
  StatusRights r;
  r.uids = Numbers(Field(status, "Uid"));
  const auto cap = [&](std::string_view key) {
    const std::string text(Trim(Field(status, key)));
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 16);
    // Unreadable counts as every capability: never signalled on a guess.
    return ec != std::errc() || end == text.data() ? ~uint64_t{0} : v;
  };
  r.cap_eff = cap("CapEff");
  r.cap_prm = cap("CapPrm");
  r.cap_amb = cap("CapAmb");
  static constexpr const char* kNames[] = {"uid", "euid", "suid", "fsuid"};
  for (size_t i = 0; i < r.uids.size() && i < 4; ++i) {
    r.text += fmt::format("{}{} {}", r.text.empty() ? "" : " ", kNames[i], r.uids[i]);
  }
  r.text += fmt::format(" CapEff {:016x} CapPrm {:016x}", r.cap_eff, r.cap_prm);
  if (r.uids.size() < 4) {
    r.root_rights = "its uids could not be read";
  } else if (std::find(r.uids.begin(), r.uids.begin() + 4, 0u) != r.uids.begin() + 4) {
    r.root_rights = "it has root's rights now (a uid of 0: it ran a setuid-root program, or su)";
  } else if ((r.cap_eff | r.cap_prm | r.cap_amb) != 0) {
    r.root_rights = "it holds capabilities now (a file capability or an inherited one)";
  }
  return r;
}

Result<ProcessCredentials> ReadCredentials(FileReader& files, uint32_t pid) {
  std::string stat, status, login;
  CGOV_RETURN_IF_ERROR(files.Read(fmt::format("/proc/{}/stat", pid), &stat));
  CGOV_RETURN_IF_ERROR(files.Read(fmt::format("/proc/{}/status", pid), &status));
  CGOV_ASSIGN_OR_RETURN(PidStat parsed, ParsePidStat(stat));
  CGOV_ASSIGN_OR_RETURN(auto uids, ParseStatusUids(status));
  ProcessCredentials c;
  c.start_ticks = parsed.start_ticks;
  c.uid = uids[0];
  c.euid = uids[1];
  c.suid = uids[2];
  c.gids = ParseStatusGids(status);
  if (files.Read(fmt::format("/proc/{}/loginuid", pid), &login).ok()) {
    if (auto l = ParseLoginuid(login); l.ok()) c.loginuid = *l;
  }
  return c;
}

namespace {

bool RootsOnly(const struct stat& st) { return st.st_uid == 0 && (st.st_mode & 022) == 0; }

}  // namespace

ProcessExecutable ReadExecutable(const std::string& proc_root, uint32_t pid) {
  ProcessExecutable out;
  const std::string dir = fmt::format("{}/{}", proc_root, pid);
  std::string target(4096, '\0');
  const ssize_t n = readlink((dir + "/exe").c_str(), target.data(), target.size());
  if (n <= 0 || static_cast<size_t>(n) >= target.size()) return out;
  target.resize(static_cast<size_t>(n));
  out.path = target;
  // A file replaced or removed since it was started reads "PATH (deleted)": not where it was.
  if (target.empty() || target.front() != '/' || target.ends_with(" (deleted)")) return out;
  struct stat file {};
  struct stat parent {};
  const std::string parent_dir = target.substr(0, std::max<size_t>(1, target.rfind('/')));
  // The file through the magic link (the inode the process runs, whatever its path now); its
  // directory through the process's own root.
  out.trusted = stat((dir + "/exe").c_str(), &file) == 0 && RootsOnly(file) &&
                stat((dir + "/root" + parent_dir).c_str(), &parent) == 0 && RootsOnly(parent);
  return out;
}

}  // namespace cgov
