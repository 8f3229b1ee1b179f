// `cgov top`: what a shared GPU box is doing now and what its waste has cost today, as one frame:
// the data (TopFrame, filled by app/top from a daemon's database) and its two renderings, the
// terminal's (aligned columns, the reports' phase glyphs and colours, fitted to a width) and
// JSON (`cgov top --once --format json`, schema `cgov.top` version 1: docs/top.md).
#ifndef CGOV_REPORT_TOP_VIEW_H_
#define CGOV_REPORT_TOP_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/phases.h"
#include "core/money.h"
#include "report/text_style.h"

namespace cgov {

struct TopHolder {
  uint32_t pid = 0;
  std::string user, project, where;  // where: "namespace/pod", a container, or ""
  std::string command;
  std::optional<uint32_t> mem_used_mib;
};

struct TopGpu {
  int64_t index = -1;
  std::string label;  // as the reports name it: "0", "0 MIG 3g.40gb GI 1"
  std::string name;
  std::optional<Phase> phase;  // at the last tick; nullopt: utilization unknown
  std::optional<double> util_pct, mem_used_mib, mem_total_mib, power_w;
  std::vector<std::optional<double>> util_history;  // oldest first, one a tick, the last is now
  std::optional<MicroUsd> price_per_hour;
  std::vector<TopHolder> holders;
};

struct TopIdleHeld {
  std::string user, command;
  uint32_t pid = 0;
  int64_t gpu_index = -1;
  std::string kind;                   // "notebook", "batch job", ... (the report's habit kinds)
  int64_t idle_for_ms = 0;            // the idle-held stretch running now
  MicroUsd idle_held_cost_today = 0;  // its idle-held time in today's window, priced
  std::string advice;                 // the report's advice for that kind of holder
  // The policy's verdict: what the daemon's --policy recorded for this process today (its last
  // step), else with `cgov top --policy FILE` what that file would do; "" when neither.
  std::string policy;
};

// A node of a fleet (cgov top --prometheus): its GPUs now and its idle time today.
struct TopNode {
  std::string host;
  // Each GPU's phase now (the one it spent most of the last minutes in), by GPU index; nullopt
  // where no phase counter grew.
  std::vector<std::optional<Phase>> phases;
  std::optional<double> mean_util_pct;  // of its GPUs' utilization gauges
  std::optional<double> power_w;        // their sum
  MicroUsd cost_per_hour = 0;           // its GPUs' prices
  MicroUsd waste_per_hour = 0;          // the prices of its GPUs idle now
  int64_t idle_ms_today = 0;            // the day summary's idle_by_host
  MicroUsd idle_cost_today = 0;
  std::optional<double> sample_age_s;  // since its daemon's last tick, as last scraped
};

// A user wasting GPU time in a fleet today (idle-held), with what they hold idle now.
struct TopWaster {
  std::string user;
  double idle_held_gpus_now = 0;   // GPUs held idle now (idle-held GPU-seconds a second)
  std::vector<std::string> hosts;  // where, now
  int64_t idle_held_ms_today = 0;  // the day summary's Who row
  MicroUsd idle_held_cost_today = 0;
};

struct TopFrame {
  std::string source = "database";  // "database", "live" or "prometheus" (a fleet)
  std::string host;
  int64_t at_ms = 0;         // the last tick's time
  int64_t day_start_ms = 0;  // today (UTC) began
  bool priced = false;
  MicroUsd cost_per_hour = 0;   // every GPU's price
  MicroUsd waste_per_hour = 0;  // the price of the GPUs idle (truly idle or idle-held) now
  double idle_share_pct = 0;    // waste_per_hour / cost_per_hour (0 when nothing is priced)
  int64_t idle_ms_today = 0;    // truly idle + idle-held GPU time since day_start_ms
  MicroUsd idle_cost_today = 0;
  std::vector<TopGpu> gpus;
  std::vector<TopIdleHeld> idle_held;  // by dollars today, then time
  // A fleet (source "prometheus"): a row per node instead of per GPU, and the users wasting
  // most today instead of the processes idle-held now (Prometheus keeps no sessions).
  std::vector<TopNode> nodes;      // by host name
  std::vector<TopWaster> wasters;  // by idle-held dollars today, then time
  size_t GpuCount() const;
  // The power drawn now (issue 62): every GPU's (a fleet: every node's sum), and of it the GPUs'
  // idle now (truly idle or idle-held; unknown for a fleet, whose nodes' power is summed).
  // nullopt when no GPU reports power.
  std::optional<double> PowerNowW() const;
  std::optional<double> IdlePowerNowW() const;
  // idle_share_pct from cost_per_hour and waste_per_hour, once they are set.
  void SetIdleShare();
};

// How the terminal view is laid out.
struct TopLayout {
  size_t width = 100;  // columns (at least 60 are used)
  enum class Sort { kGpu, kWaste, kUser } sort = Sort::kGpu;
  std::string filter;     // only GPUs and idle-held rows whose holders' user or project
                          // contains it ("" = all)
  bool processes = true;  // a line per holder under each GPU
  TextStyle style;
};

std::string RenderTopText(const TopFrame& frame, const TopLayout& layout);
std::string RenderTopJson(const TopFrame& frame);

// "▁▂▃▄▅▆▇█" of utilizations 0-100 (a space where unknown).
std::string Sparkline(const std::vector<std::optional<double>>& values);

}  // namespace cgov

#endif  // CGOV_REPORT_TOP_VIEW_H_
