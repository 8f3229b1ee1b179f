#include "telemetry/environ_access.h"

#include <fmt/format.h>

#include "telemetry/text_scan.h"

namespace cgov {

EnvironAccess EnvironAccessOf(std::string_view status) {
  EnvironAccess a;
  std::optional<uint64_t> caps;
  for (std::string_view line : SplitLines(status)) {
    std::vector<std::string_view> f = SplitFields(line);
    uint64_t v = 0;
    if (f.size() == 5 && f[0] == "Uid:" && ParseU64(f[4], &v)) a.fs_uid = static_cast<uint32_t>(v);
    if (f.size() == 2 && f[0] == "CapEff:") {
      // 16 hex digits; anything else leaves the capabilities unknown.
      uint64_t bits = 0;
      bool hex = !f[1].empty() && f[1].size() <= 16;
      for (char c : f[1]) {
        const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) hex = false;
        bits = bits << 4 | static_cast<uint64_t>(d < 0 ? 0 : d);
      }
      if (hex) caps = bits;
    }
  }
  if (!a.fs_uid || !caps) return a;  // unknown: nothing to say
  if (*a.fs_uid == 0 || (*caps >> kCapSysPtrace & 1) != 0) return a;
  a.others_readable = false;
  a.warning = fmt::format(
      "running as uid {} without CAP_SYS_PTRACE: other users' /proc/PID/environ cannot be read, "
      "so the CGOV_PROJECT, CGOV_TEAM and CGOV_TAGS of their processes are unknown and their "
      "project and team show as (unknown); grant CAP_SYS_PTRACE (the shipped systemd unit's "
      "AmbientCapabilities=CAP_SYS_PTRACE) or run as root (docs/daemon.md)",
      *a.fs_uid);
  return a;
}

}  // namespace cgov
