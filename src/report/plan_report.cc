#include "report/plan_report.h"

#include <fmt/format.h>

#include "core/duration.h"
#include "core/json_writer.h"
#include "core/money.h"
#include "core/time_format.h"

namespace cgov {
namespace {

using nlohmann::json;

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

json Money(const PlanSummary& p, MicroUsd v) {
  return p.priced ? json(UsdNumber(v)) : json(nullptr);
}

double GpuHours(int64_t ms) { return Round3(static_cast<double>(ms) / 3.6e6); }

json BinJson(const PlanBinRow& b) {
  return {{"gpu", b.target},
          {"takes", b.sources},
          {"takes_text", Join(b.sources)},
          {"capacity_mib", b.capacity_mib},
          {"peak_memory_mib", b.peak_mem_mib},
          {"peak_compute_pct", Round3(b.peak_compute_pct)},
          {"compute_over_pct", Round3(b.compute_over_pct)}};
}

json GroupJson(const PlanSummary& p, const PlanGroupRow& g) {
  json bins = json::array();
  for (const PlanBinRow& b : g.bins) bins.push_back(BinJson(b));
  return {{"model", g.model},
          {"memory_mib", g.mem_total_mib},
          {"gpus", g.gpus},
          {"gpu_count", g.gpus.size()},
          {"gpus_planned", g.gpus_planned},
          {"freed", g.freed},
          {"freed_text", Join(g.freed)},
          {"sizing", g.sizing.empty() ? json(nullptr) : json(g.sizing)},
          {"bins", bins},
          {"refused", g.refused},
          {"usd", Money(p, g.usd)},
          {"usd_month", Money(p, g.usd_month)}};
}

json WorkloadJson(const PlanSummary& p, const PlanWorkloadRow& w) {
  auto opt = [](bool known, uint64_t v) { return known ? json(v) : json(nullptr); };
  return {{"name", w.name},
          {"identity_id", w.identity_id},
          {"command", w.command},
          {"gpu_model", w.gpu_model},
          {"memory_peak_mib", w.mem_peak_mib},
          {"memory_p99_mib", w.mem_p99_mib},
          {"compute_p50_pct", Round3(w.compute_p50_pct)},
          {"compute_p95_pct", Round3(w.compute_p95_pct)},
          {"gpus_at_once_max", w.gpus_max},
          {"gpus_at_once_p99", w.gpus_p99},
          {"held_gpu_hours", GpuHours(w.held_ms)},
          {"attributed_gpu_hours", GpuHours(w.attributed_ms)},
          {"profile", w.profile.empty() ? json(nullptr) : json(w.profile)},
          {"profile_kind", w.profile.empty() ? json(nullptr) : json(w.profile_kind)},
          {"profile_memory_mib", opt(!w.profile.empty(), w.profile_mib)},
          {"headroom_mib", opt(!w.profile.empty(), w.headroom_mib)},
          {"why", w.why},
          {"usd", Money(p, w.usd)},
          {"usd_month", Money(p, w.usd_month)}};
}

}  // namespace

std::vector<PlanColumn> PlanColumns(PlanTable table) {
  switch (table) {
    case PlanTable::kGroups:
      return {{"Model", "model"},
              {"GPUs", "gpu_count", true},
              {"Planned", "gpus_planned", true},
              {"Freed", "freed_text"},
              {"Sizing", "sizing"},
              {"$ window", "usd", true, true},
              {"$ / month", "usd_month", true, true}};
    case PlanTable::kBins:
      return {{"Model", ""},
              {"GPU", "gpu"},
              {"Takes", "takes_text"},
              {"Peak MiB", "peak_memory_mib", true},
              {"Usable MiB", "capacity_mib", true},
              {"Peak compute %", "peak_compute_pct", true},
              {"Over ceiling %", "compute_over_pct", true}};
    case PlanTable::kWorkloads:
      return {{"Workload", "name"},
              {"Command", "command"},
              {"Peak MiB", "memory_peak_mib", true},
              {"p99 MiB", "memory_p99_mib", true},
              {"Compute p50 %", "compute_p50_pct", true},
              {"Compute p95 %", "compute_p95_pct", true},
              {"GPUs at once", "gpus_at_once_max", true},
              {"GPU-h", "attributed_gpu_hours", true},
              {"Profile", "profile"},
              {"Headroom MiB", "headroom_mib", true},
              {"$ window", "usd", true, true},
              {"$ / month", "usd_month", true, true}};
  }
  return {};
}

std::vector<PlanRowRef> PlanRows(const PlanSummary& plan, PlanTable table) {
  std::vector<PlanRowRef> rows;
  if (table == PlanTable::kWorkloads) {
    for (size_t i = 0; i < plan.workloads.size(); ++i) rows.push_back({i, 0});
    return rows;
  }
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    if (table == PlanTable::kGroups) {
      rows.push_back({g, 0});
      continue;
    }
    for (size_t b = 0; b < plan.groups[g].bins.size(); ++b) rows.push_back({g, b});
  }
  return rows;
}

std::string PlanCellText(const PlanSummary& plan, PlanTable table, const PlanColumn& c,
                         const PlanRowRef& r) {
  const json row = table == PlanTable::kWorkloads ? WorkloadJson(plan, plan.workloads[r.row])
                   : table == PlanTable::kGroups  ? GroupJson(plan, plan.groups[r.row])
                                                  : BinJson(plan.groups[r.row].bins[r.bin]);
  if (c.key.empty()) return plan.groups[r.row].model;  // the bins' model column
  const json& v = row.at(c.key);
  if (v.is_null()) return "—";
  if (c.money) return FormatUsd(static_cast<MicroUsd>(std::llround(v.get<double>() * 1e6)));
  if (v.is_string()) return v.get<std::string>().empty() ? "—" : v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.1f}", v.get<double>());
  return v.dump();
}

std::string PlanCellPointer(PlanTable table, const PlanColumn& c, const PlanRowRef& r) {
  if (!c.numeric || c.key.empty()) return "";
  switch (table) {
    case PlanTable::kGroups:
      return fmt::format("/plan/groups/{}/{}", r.row, c.key);
    case PlanTable::kBins:
      return fmt::format("/plan/groups/{}/bins/{}/{}", r.row, r.bin, c.key);
    case PlanTable::kWorkloads:
      return fmt::format("/plan/workloads/{}/{}", r.row, c.key);
  }
  return "";
}

std::string PlanLead(const PlanSummary& p) {
  if (p.covered_ms <= 0) return "No samples in the window to plan from (see the notes).";
  std::string out = fmt::format(
      "Replayed over {} → {} ({:.1f} days of raw samples): the window's loads fit on {} of {} "
      "GPUs",
      FormatMinuteUtc(p.from_ms), FormatMinuteUtc(p.until_ms), p.days, p.gpus_planned, p.gpus_now);
  if (p.priced) {
    out += fmt::format(", {} in the window ({} a month at this rate)", FormatUsd(p.consolidate_usd),
                       FormatUsd(p.consolidate_usd_month));
  }
  out += fmt::format("; {} workload(s) fit a smaller MIG profile or a cheaper GPU",
                     p.workloads_fitting);
  if (p.priced) {
    out += fmt::format(", {} ({} a month)", FormatUsd(p.rightsize_usd),
                       FormatUsd(p.rightsize_usd_month));
  }
  out += fmt::format(
      ". Memory by p99 + {} % headroom (never over in the replay), compute (SM activity, else "
      "utilization) summed ≤ {} % (over it ≤ {} % of the time). Each lever's dollars are capped by "
      "the waste of the GPUs it acts on; with the other findings they combine in Savings.",
      p.options.memory_margin_pct, p.options.compute_ceiling_pct, p.options.compute_over_pct);
  return out;
}

std::string PlanText(const PlanSummary& p, const TextStyle& style) {
  if (!p.computed) return "";
  std::string out = TextHeading("Right-size plan", style);
  out += PlanLead(p) + "\n";
  for (PlanTable t : {PlanTable::kGroups, PlanTable::kBins, PlanTable::kWorkloads}) {
    const std::vector<PlanRowRef> rows = PlanRows(p, t);
    if (rows.empty()) continue;
    out += "\n" +
           DeclaredTextTable(
               PlanColumns(t), rows,
               [&](const PlanColumn& c, const PlanRowRef& r) { return PlanCellText(p, t, c, r); },
               style.markdown);
  }
  for (const PlanGroupRow& g : p.groups) {
    for (const std::string& why : g.refused) {
      out += fmt::format("\nRefused by the replay ({}): {}\n", g.model, why);
    }
  }
  for (const std::string& n : p.notes) out += "\nNote: " + n + "\n";
  out +=
      "\nNot measured: how co-located jobs slow each other. MIG needs the GPU drained and "
      "reconfigured. The plan is as good as its window.\n";
  return out;
}

json PlanJson(const PlanSummary& p) {
  json groups = json::array(), workloads = json::array();
  for (const PlanGroupRow& g : p.groups) groups.push_back(GroupJson(p, g));
  for (const PlanWorkloadRow& w : p.workloads) workloads.push_back(WorkloadJson(p, w));
  return {{"from", FormatRfc3339Utc(p.from_ms * 1'000'000)},
          {"until", FormatRfc3339Utc(p.until_ms * 1'000'000)},
          {"days", Round3(p.days)},
          {"covered_seconds", Round3(static_cast<double>(p.covered_ms) / 1e3)},
          {"options",
           {{"memory_headroom_pct", p.options.memory_margin_pct},
            {"compute_ceiling_pct", p.options.compute_ceiling_pct},
            {"compute_over_pct", p.options.compute_over_pct}}},
          {"gpus_now", p.gpus_now},
          {"gpus_planned", p.gpus_planned},
          {"workloads_fitting", p.workloads_fitting},
          {"consolidate_usd", Money(p, p.consolidate_usd)},
          {"consolidate_usd_month", Money(p, p.consolidate_usd_month)},
          {"right_size_usd", Money(p, p.rightsize_usd)},
          {"right_size_usd_month", Money(p, p.rightsize_usd_month)},
          {"groups", groups},
          {"workloads", workloads},
          {"notes", p.notes}};
}

}  // namespace cgov
