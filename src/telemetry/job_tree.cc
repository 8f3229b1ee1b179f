#include "telemetry/job_tree.h"

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

JobTreeReader::JobTreeReader(FileReader* files, int root, long ticks_per_second, long page_size,
                             int full_rescan_every)
    : files_(files),
      root_(root),
      ticks_per_second_(ticks_per_second),
      page_size_(page_size),
      full_rescan_every_(full_rescan_every) {}

JobTreeSample JobTreeReader::Read(int64_t mono_ns) {
  if (full_rescan_every_ > 0 && ticks_++ % full_rescan_every_ == 0) outside_.clear();
  JobTreeSample sample;
  std::map<int, PidStat> candidates;
  if (files_->ListDir("/proc", &names_).ok()) {
    std::set<int> alive;
    for (const std::string& name : names_) {
      uint64_t pid = 0;
      if (!ParseU64(name, &pid)) continue;
      alive.insert(static_cast<int>(pid));
      if (static_cast<int>(pid) == root_ || outside_.count(static_cast<int>(pid))) continue;
      if (!files_->Read("/proc/" + name + "/stat", &buffer_).ok()) continue;  // vanished
      if (Result<PidStat> stat = ParsePidStat(buffer_); stat.ok()) candidates[stat->pid] = *stat;
    }
    // Forget pids that exited, so the set stays the size of the process table.
    for (auto it = outside_.begin(); it != outside_.end();) {
      it = alive.count(*it) ? std::next(it) : outside_.erase(it);
    }
  }
  // Members are the candidates whose parent chain reaches the root; parents may be listed after
  // their children, so grow the set until it stops changing.
  std::set<int> in_tree = {root_};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, stat] : candidates) {
      if (pid != root_ && !in_tree.count(pid) && in_tree.count(stat.ppid)) {
        in_tree.insert(pid);
        grew = true;
      }
    }
  }
  std::map<int, PidStat> members;
  uint64_t rss_pages = 0;
  for (auto& [pid, stat] : candidates) {
    if (!in_tree.count(pid)) {
      outside_.insert(pid);
      continue;
    }
    rss_pages += stat.rss_pages;
    sample.pids.push_back(pid);
    members.emplace(pid, std::move(stat));
  }
  if (prev_ns_ > 0) {
    sample.cpu_pct = TreeCpuPct(members_, members, static_cast<double>(mono_ns - prev_ns_) * 1e-9,
                                ticks_per_second_);
  }
  sample.rss_bytes = rss_pages * static_cast<uint64_t>(page_size_);
  members_ = std::move(members);
  prev_ns_ = mono_ns;
  return sample;
}

}  // namespace cgov
