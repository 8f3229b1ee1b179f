#include "report/ci_export.h"

#include <fmt/format.h>

namespace cgov {
namespace {

// Workflow command data: % CR LF escaped; properties also : and ,.
std::string GithubData(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string GithubProperty(std::string_view text) {
  std::string out;
  for (char c : GithubData(text)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

const char* GithubLevel(Severity s) {
  return s == Severity::kCritical ? "error" : s == Severity::kWarning ? "warning" : "notice";
}

std::string Money(const std::optional<double>& usd) {
  return usd ? fmt::format("${:.2f}", *usd) : std::string("unpriced");
}

// A metric name's label value: \ " and newline escaped.
std::string LabelValue(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// FNV-1a, 64-bit, as 16 hex digits: a stable fingerprint, not a security feature.
std::string Fingerprint(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

std::string GithubAnnotations(const RunDigest& run) {
  std::string out =
      fmt::format("::notice title={}::{}\n",
                  GithubProperty(fmt::format("cgov: {:.3f} GPU-hours, {}", run.gpu_hours,
                                             Money(run.total_usd))),
                  GithubData(fmt::format("{:.1f} % of GPU capacity unused; {} finding(s)",
                                         run.waste_pct, run.findings.size())));
  for (const FindingDigest& f : run.findings) {
    out += fmt::format(
        "::{} title={}::{}\n", GithubLevel(f.severity), GithubProperty(f.title),
        GithubData(f.evidence.empty() ? f.recommendation : f.evidence + ". " + f.recommendation));
  }
  if (!run.baseline_verdict.empty()) {
    out +=
        fmt::format("::{} title=cgov baseline::{}\n", run.baseline_regressed ? "error" : "notice",
                    GithubData(run.baseline_verdict));
  }
  return out;
}

std::string GitlabMetrics(const RunDigest& run) {
  std::string out;
  auto gauge = [&](std::string_view name, std::string_view help, double v,
                   std::string_view labels = "") {
    out +=
        fmt::format("# TYPE {} gauge\n# HELP {} {}\n{}{} {}\n", name, name, help, name, labels, v);
  };
  gauge("cgov_gpu_seconds", "GPU time the run held, in GPU-seconds.", run.gpu_hours * 3600);
  if (run.total_usd) gauge("cgov_cost_usd", "Cost of the run in USD (estimate).", *run.total_usd);
  gauge("cgov_waste_pct", "Percent of GPU capacity unused.", run.waste_pct);
  if (run.cost_per_unit_usd) {
    gauge("cgov_cost_per_unit_usd", "USD per unit of work (estimate).", *run.cost_per_unit_usd,
          fmt::format("{{unit=\"{}\"}}", LabelValue(run.unit)));
  }
  out +=
      "# TYPE cgov_phase_share_pct gauge\n# HELP cgov_phase_share_pct Percent of GPU-time by "
      "phase.\n";
  for (size_t p = 0; p < kPhaseCount; ++p) {
    out += fmt::format("cgov_phase_share_pct{{phase=\"{}\"}} {}\n", PhaseKey(static_cast<Phase>(p)),
                       run.phase_share_pct[p]);
  }
  int counts[3] = {0, 0, 0};
  for (const FindingDigest& f : run.findings) ++counts[static_cast<int>(f.severity)];
  out += "# TYPE cgov_findings gauge\n# HELP cgov_findings Findings by severity.\n";
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kCritical}) {
    out += fmt::format("cgov_findings{{severity=\"{}\"}} {}\n", SeverityName(s),
                       counts[static_cast<int>(s)]);
  }
  if (run.baseline_change_pct) {
    gauge("cgov_baseline_change_pct", "Change of the gated figure against the baseline, percent.",
          *run.baseline_change_pct,
          fmt::format("{{figure=\"{}\"}}", LabelValue(run.baseline_figure)));
  }
  return out + "# EOF\n";
}

nlohmann::json GitlabCodeQuality(const RunDigest& run, const std::string& path) {
  std::string job;
  for (const auto& [k, v] : run.tags) {
    if (!IsRunSpecificTag(k)) job += k + "=" + v + ";";
  }
  nlohmann::json out = nlohmann::json::array();
  for (const FindingDigest& f : run.findings) {
    const char* severity = f.severity == Severity::kCritical  ? "critical"
                           : f.severity == Severity::kWarning ? "major"
                                                              : "info";
    std::string description = "cgov: " + f.title;
    if (!f.evidence.empty()) description += " — " + f.evidence;
    out.push_back({{"description", description},
                   {"check_name", "cgov/" + f.id},
                   {"fingerprint", Fingerprint(job + "|" + f.id)},
                   {"severity", severity},
                   {"content", {{"body", f.recommendation}}},
                   {"location", {{"path", path}, {"lines", {{"begin", 1}}}}}});
  }
  return out;
}

}  // namespace cgov
