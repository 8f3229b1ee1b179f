#include "analysis/run_compare.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace cgov {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "samples" -> "sample": the unit a cost is per.
std::string Singular(const std::string& unit) {
  return unit.size() > 1 && unit.back() == 's' ? unit.substr(0, unit.size() - 1) : unit;
}

std::string Shown(CompareFigure f, double v) {
  switch (f) {
    case CompareFigure::kCostPerUnit:
      return FormatUnitCost(v);
    // Below a dollar a cent is too coarse to compare (a 3 s job): four decimals.
    case CompareFigure::kCostPerRun:
      return std::abs(v) < 1 ? fmt::format("${:.4f}", v) : fmt::format("${:.2f}", v);
    case CompareFigure::kGpuHoursPerRun:
      return fmt::format("{:.4f} GPU-hours", v);
  }
  return "";
}

}  // namespace

std::string FormatUnitCost(double usd) {
  if (usd != 0 && std::abs(usd) < 0.01) return fmt::format("${:.2f}/M", usd * 1e6);
  return fmt::format("${:.4f}", usd);
}

bool IsRunSpecificTag(const std::string& key) {
  static const std::set<std::string> kKeys = {
      "branch", "commit", "sha", "ref", "pipeline", "run", "run_id", "job", "job_id", "mr", "pr"};
  return kKeys.count(key) > 0;
}

bool SameJobTags(const Tags& a, const Tags& b) {
  auto strip = [](const Tags& t) {
    Tags out;
    for (const auto& [k, v] : t) {
      if (!IsRunSpecificTag(k)) out[k] = v;
    }
    return out;
  };
  return strip(a) == strip(b);
}

namespace {

// Waste and phases: the baselines' mean against this run.
void CompareWasteAndPhases(const std::vector<RunDigest>& baselines, const RunDigest& current,
                           RunComparison* c) {
  const double n = static_cast<double>(baselines.size());
  for (const RunDigest& b : baselines) {
    c->waste_pct_baseline += b.waste_pct / n;
    for (size_t p = 0; p < kPhaseCount; ++p) c->phase_pct_baseline[p] += b.phase_share_pct[p] / n;
  }
  c->waste_pct_current = current.waste_pct;
  c->waste_change_pp = c->waste_pct_current - c->waste_pct_baseline;
  c->phase_pct_current = current.phase_share_pct;
  for (size_t p = 0; p < kPhaseCount; ++p) {
    c->phase_change_pp[p] = c->phase_pct_current[p] - c->phase_pct_baseline[p];
  }
}

// Findings by id: new in this run, or gone from it.
void CompareFindings(const std::vector<RunDigest>& baselines, const RunDigest& current,
                     RunComparison* c) {
  std::set<std::string> before, now;
  auto in_current = [&](const FindingDigest& f) {
    return std::any_of(current.findings.begin(), current.findings.end(),
                       [&](const FindingDigest& g) { return g.id == f.id; });
  };
  for (const RunDigest& b : baselines) {
    for (const FindingDigest& f : b.findings) {
      if (before.insert(f.id).second && !in_current(f)) c->findings_gone.push_back(f);
    }
  }
  for (const FindingDigest& f : current.findings) {
    if (now.insert(f.id).second && before.count(f.id) == 0) c->findings_new.push_back(f);
  }
}

// --fail-on-regression: a rise past the threshold, above every baseline (the run-to-run
// spread) and by more than one sample interval of every GPU (the noise floor).
void Judge(size_t baselines, const std::string& from_to, double threshold_pct, RunComparison* c) {
  const bool above_threshold = c->change_pct && *c->change_pct > threshold_pct;
  const bool beyond_spread = baselines < 2 || c->current > c->baseline_max;
  const bool beyond_noise = c->current - c->baseline > c->noise_floor;
  c->regressed = above_threshold && beyond_spread && beyond_noise;
  if (c->regressed) {
    c->verdict = fmt::format("regression: {}, more than {:g} %", from_to, threshold_pct);
  } else if (above_threshold && !beyond_noise) {
    c->verdict = fmt::format(
        "within the noise floor: {}, a rise of at most one sample interval of every GPU ({})",
        from_to, Shown(c->figure, c->noise_floor));
  } else if (above_threshold) {
    c->verdict =
        fmt::format("within the run-to-run spread: {}, but not above the highest baseline ({})",
                    from_to, Shown(c->figure, c->baseline_max));
  } else {
    c->verdict = fmt::format("no regression: {}, limit {:g} %", from_to, threshold_pct);
  }
}

}  // namespace

Result<RunComparison> CompareRuns(const std::vector<RunDigest>& baselines, const RunDigest& current,
                                  std::optional<double> threshold_pct) {
  if (baselines.empty()) return InvalidArgument("no baseline run to compare with");
  RunComparison c;
  c.threshold_pct = threshold_pct;
  // The figure every run can give.
  bool per_unit = current.cost_per_unit_usd.has_value() && !current.unit.empty();
  bool priced = current.ExactTotalUsd().has_value();
  for (const RunDigest& b : baselines) {
    per_unit = per_unit && b.cost_per_unit_usd.has_value() && b.unit == current.unit &&
               b.work.value_or(0) > 0;
    priced = priced && b.ExactTotalUsd().has_value();
    if (!SameJobTags(b.tags, current.tags)) {
      c.notes.push_back(fmt::format("{}: its tags differ from this run's (beyond branch/commit)",
                                    b.path.empty() ? "a baseline" : b.path));
    }
    if (current.work && b.work && b.unit != current.unit) {
      c.notes.push_back(fmt::format("{}: work in {} where this run has {}: compared per run",
                                    b.path, b.unit, current.unit));
    }
  }
  per_unit = per_unit && current.work.value_or(0) > 0;
  // Unrounded figures: a 3 s job's $0.0145 and $0.0155 are not "$0.01 -> $0.02 (+100 %)".
  auto figure_of = [&](const RunDigest& r) {
    if (per_unit) return r.ExactTotalUsd() ? *r.ExactTotalUsd() / *r.work : *r.cost_per_unit_usd;
    return priced ? *r.ExactTotalUsd() : r.gpu_hours;
  };
  // One sample interval of every GPU of this run, in the figure's unit.
  auto noise_of = [&](const RunDigest& r) {
    const double gpu_hours = r.interval_s * static_cast<double>(r.gpu_count) / 3600;
    const double price =
        r.gpu_hours > 0 && r.ExactTotalUsd() ? *r.ExactTotalUsd() / r.gpu_hours : 0;
    if (per_unit) return gpu_hours * price / *r.work;
    return priced ? gpu_hours * price : gpu_hours;
  };
  if (per_unit) {
    c.figure = CompareFigure::kCostPerUnit;
    c.figure_name = "cost per " + Singular(current.unit);
    c.figure_key = "cost_per_unit_usd";
  } else if (priced) {
    c.figure = CompareFigure::kCostPerRun;
    c.figure_name = "cost per run";
    c.figure_key = "cost_usd";
  } else {
    c.figure = CompareFigure::kGpuHoursPerRun;
    c.figure_name = "GPU-hours per run";
    c.figure_key = "gpu_hours";
  }
  for (const RunDigest& b : baselines) c.baseline_values.push_back(figure_of(b));
  c.baseline = Median(c.baseline_values);
  c.baseline_max = *std::max_element(c.baseline_values.begin(), c.baseline_values.end());
  const double baseline_min = *std::min_element(c.baseline_values.begin(), c.baseline_values.end());
  c.current = figure_of(current);
  c.noise_floor = noise_of(current);
  if (c.baseline > 0) {
    c.change_pct = (c.current - c.baseline) / c.baseline * 100;
    if (baselines.size() >= 2) c.spread_pct = (c.baseline_max - baseline_min) / c.baseline * 100;
  }
  CompareWasteAndPhases(baselines, current, &c);
  CompareFindings(baselines, current, &c);
  // The verdict.
  const std::string change =
      c.change_pct ? fmt::format("{:+.1f} %", *c.change_pct) : std::string("no change measurable");
  std::string from_to = fmt::format(
      "{} from {} to {} ({}{})", c.figure_name, Shown(c.figure, c.baseline),
      Shown(c.figure, c.current), change,
      baselines.size() > 1 ? fmt::format(", median of {} baselines", baselines.size()) : "");
  if (!threshold_pct) {
    c.verdict = from_to;
    return c;
  }
  Judge(baselines.size(), from_to, *threshold_pct, &c);
  return c;
}

}  // namespace cgov
