// `cgov top`'s frame from a daemon's history database (read-only, safe beside the writer): the
// day's figures from the same load and summary `cgov report --db` makes for the UTC day so far
// (so the two agree to the cent), and the GPUs now from the last ticks.
#ifndef CGOV_APP_TOP_TOP_SOURCE_H_
#define CGOV_APP_TOP_TOP_SOURCE_H_

#include <cstddef>
#include <string>

#include <map>
#include <memory>
#include <optional>

#include "analysis/history_summary.h"
#include "core/status.h"
#include "policy/policy_engine.h"
#include "policy/policy_file.h"
#include "policy/policy_process.h"
#include "report/top_view.h"
#include "store/history_store.h"

namespace cgov {

struct TopSourceOptions {
  std::string db;
  size_t history_ticks = 20;  // the utilization sparkline's length
  // How often the day's figures are summarized again (the GPUs now are read every frame): the
  // day's load and summary are most of a frame's cost (docs/benchmarks.md, "cgov top").
  int64_t day_refresh_ms = 10'000;
  // `--policy FILE`: the verdict of the daemon's policy file for each idle-held process the
  // daemon recorded no step for, read from the host's /proc under `host_root`.
  std::optional<PolicyFile> policy;
  std::string host_root = "/";
  std::string source_name = "database";  // the frame's `source`: "database", "live"
};

// The words for a policy's verdict on an idle-held process, idle for `idle_for_ms` (the
// caller's PolicyEngine::RuleFor gave `rule`): "stale-notebooks in 1h12m", "stale-notebooks:
// due", "no policy", "never: root's rights", "never: owner unknown".
std::string PolicyVerdict(const PolicyProcess& p, const PolicyRule* rule, int64_t idle_for_ms);
// A step the daemon's policy recorded: "would_stop 14:02 (stale-notebooks)".
std::string PolicyStepText(const PolicyActionRecord& a);

// Where `cgov top`'s frames come from: a database (TopSource) or a fleet's Prometheus
// (FleetTopSource, app/top/fleet_top_source.h).
class TopFrames {
 public:
  virtual ~TopFrames() = default;
  // The frame now; `now_mono_ms` (a steady clock) paces the slower parts.
  virtual Result<TopFrame> Frame(int64_t now_mono_ms) = 0;
};

// Frames from one database, kept open between them.
class TopSource : public TopFrames {
 public:
  static Result<std::unique_ptr<TopSource>> Open(const TopSourceOptions& options);
  // The frame at the data's end now; the day's figures from a summary at most day_refresh_ms
  // old (idle-held stretches advanced to the frame's time).
  Result<TopFrame> Frame(int64_t now_mono_ms) override;

 private:
  TopSourceOptions options_;
  std::unique_ptr<HistoryStore> store_;
  PriceCatalog catalog_;
  HistoryOptions history_options_;
  std::optional<HistoryInput> day_input_;
  std::optional<HistorySummary> day_;
  int64_t day_end_ms_ = 0, day_read_mono_ms_ = 0;
  // With the day summary (with --policy): the idle-held processes as the policy sees them, by
  // pid. The verdicts: the day's recorded steps (day_input_), else the policy's.
  void ReadPolicy();
  void AddPolicyVerdicts(TopFrame* frame) const;
  std::unique_ptr<PolicyEngine> policy_;
  HostAccounts accounts_;
  std::map<uint32_t, PolicyProcess> policy_processes_;
};

// One frame with the day summarized now (cgov top --once).
Result<TopFrame> LoadTopFrame(const TopSourceOptions& options);

}  // namespace cgov

#endif  // CGOV_APP_TOP_TOP_SOURCE_H_
