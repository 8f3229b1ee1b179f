#include "telemetry/environ_access.h"

#include <charconv>

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
    if (f.size() == 2 && f[0] == "CapEff:") {  // hex; anything else leaves them unknown
      uint64_t bits = 0;
      auto [end, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), bits, 16);
      if (ec == std::errc() && end == f[1].data() + f[1].size()) caps = bits;
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
