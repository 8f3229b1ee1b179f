#include "telemetry/job_tree.h"

#include <fmt/format.h>

#include "telemetry/text_scan.h"

namespace cgov {

std::optional<double> TreeCpuPct(const std::map<int, PidStat>& prev,
                                 const std::map<int, PidStat>& cur, double seconds,
                                 long ticks_per_second) {
  if (seconds <= 0 || ticks_per_second <= 0) return std::nullopt;
  uint64_t ticks = 0;
  for (const auto& [pid, now] : cur) {
    auto it = prev.find(pid);
    if (it == prev.end() || it->second.start_ticks != now.start_ticks) continue;
    const uint64_t before = it->second.utime_ticks + it->second.stime_ticks;
    const uint64_t after = now.utime_ticks + now.stime_ticks;
    if (after >= before) ticks += after - before;
  }
  return 100.0 * static_cast<double>(ticks) / static_cast<double>(ticks_per_second) / seconds;
}

std::vector<int> ListPids(FileReader& files) {
  std::vector<std::string> names;
  std::vector<int> pids;
  if (!files.ListDir("/proc", &names).ok()) return pids;
  for (const std::string& name : names) {
    uint64_t pid = 0;
    if (ParseU64(name, &pid)) pids.push_back(static_cast<int>(pid));
  }
  return pids;
}

JobTreeReader::JobTreeReader(FileReader* files, int root, JobTreeOptions options,
                             const std::vector<int>& preexisting)
    : files_(files),
      root_(root),
      options_(options),
      outside_(preexisting.begin(), preexisting.end()) {
  outside_.erase(root);
}

std::optional<PidStat> JobTreeReader::ReadStat(int pid, bool hot) {
  const std::string path = fmt::format("/proc/{}/stat", pid);
  Status status = hot ? files_->ReadHot(path, &buffer_) : files_->Read(path, &buffer_);
  if (status.ok()) {
    if (Result<PidStat> stat = ParsePidStat(buffer_); stat.ok()) return *stat;
  }
  if (hot) files_->CloseHot(path);  // exited: let its file go
  return std::nullopt;
}

void JobTreeReader::Discover(std::optional<int64_t> last_pid, std::map<int, PidStat>* candidates) {
  const bool rescan =
      options_.full_rescan_every > 0 && ++discoveries_ % options_.full_rescan_every == 0;
  if (rescan) outside_.clear();
  const bool nothing_new = last_pid && last_pid_ && *last_pid == *last_pid_;
  last_pid_ = last_pid;
  if (nothing_new && !rescan) return;
  if (!files_->ListDirHot("/proc", &names_).ok()) return;
  std::set<int> alive;
  for (const std::string& name : names_) {
    uint64_t value = 0;
    if (!ParseU64(name, &value)) continue;
    const int pid = static_cast<int>(value);
    alive.insert(pid);
    if (pid == root_ || outside_.count(pid) || members_.count(pid)) continue;
    if (std::optional<PidStat> stat = ReadStat(pid, /*hot=*/false)) candidates->emplace(pid, *stat);
  }
  // Forget pids that exited, so the set stays the size of the process table.
  for (auto it = outside_.begin(); it != outside_.end();) {
    it = alive.count(*it) ? std::next(it) : outside_.erase(it);
  }
}

JobTreeSample JobTreeReader::Read(int64_t mono_ns, std::optional<int64_t> last_pid) {
  std::map<int, PidStat> current;
  for (const auto& [pid, old] : members_) {
    if (std::optional<PidStat> stat = ReadStat(pid, /*hot=*/true)) current.emplace(pid, *stat);
  }
  std::map<int, PidStat> candidates;
  if (last_discovery_ns_ == 0 || mono_ns - last_discovery_ns_ >= options_.discover_interval_ns) {
    last_discovery_ns_ = mono_ns;
    Discover(last_pid, &candidates);
  }
  // A candidate belongs if its parent does; parents may be listed after their children, so grow
  // the set until it stops changing. Members stay members while they live (reparenting of an
  // orphan goes to cgov, the subreaper, so it never leaves the tree).
  std::set<int> in_tree = {root_};
  for (const auto& [pid, stat] : current) in_tree.insert(pid);
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, stat] : candidates) {
      if (!in_tree.count(pid) && in_tree.count(stat.ppid)) {
        in_tree.insert(pid);
        grew = true;
      }
    }
  }
  for (auto& [pid, stat] : candidates) {
    if (in_tree.count(pid)) {
      current.emplace(pid, std::move(stat));
    } else {
      outside_.insert(pid);
    }
  }
  JobTreeSample sample;
  uint64_t rss_pages = 0;
  for (const auto& [pid, stat] : current) {
    sample.pids.push_back(pid);
    rss_pages += stat.rss_pages;
  }
  if (prev_ns_ > 0) {
    sample.cpu_pct = TreeCpuPct(members_, current, static_cast<double>(mono_ns - prev_ns_) * 1e-9,
                                options_.ticks_per_second);
  }
  sample.rss_bytes = rss_pages * static_cast<uint64_t>(options_.page_size);
  members_ = std::move(current);
  prev_ns_ = mono_ns;
  return sample;
}

}  // namespace cgov
