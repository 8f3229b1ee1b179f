#include "validate/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/from_chars.h"
#include "core/time_format.h"
#include "telemetry/text_scan.h"

namespace cgov::validate {
namespace {

constexpr const char* kSmiColumns[] = {"timestamp", "index", "utilization.gpu", "memory.used",
                                       "power.draw"};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// A number, or unknown for nvidia-smi's "[N/A]", "[Not Supported]", "[Unknown Error]", ...
Result<std::optional<double>> SmiNumber(std::string_view text, size_t line, size_t column) {
  if (text.starts_with("[")) return std::optional<double>();
  double value = 0;
  auto [end, ec] = FromChars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return InvalidArgument(
        fmt::format("line {}, column {}: '{}' is not a number", line, kSmiColumns[column], text));
  }
  return std::optional<double>(value);
}

Result<int64_t> SmiTimestamp(std::string_view text, size_t line) {
  std::string iso(text);  // "2026/11/22 20:01:02.123" -> "2026-11-22T20:01:02.123"
  std::replace(iso.begin(), iso.end(), '/', '-');
  if (iso.size() > 10 && iso[10] == ' ') iso[10] = 'T';
  Result<int64_t> ms = ParseTimestampMs(iso);
  if (!ms.ok()) {
    return InvalidArgument(
        fmt::format("line {}, column timestamp: '{}' is not a time", line, text));
  }
  return ms;
}

std::optional<double> Mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

std::string Pct(std::optional<double> v) { return v ? fmt::format("{:.1f} %", *v) : "no data"; }
std::string Mib(std::optional<double> v) { return v ? fmt::format("{:.0f} MiB", *v) : "no data"; }
std::string Watts(std::optional<double> v) {
  return v ? fmt::format("{:.1f} W", *v) : "not reported";
}

template <typename Row, typename Field>
std::vector<double> Values(const std::vector<Row>& rows, Field field) {
  std::vector<double> out;
  for (const Row& r : rows) {
    if (std::optional<double> v = field(r)) out.push_back(*v);
  }
  return out;
}

Check PhaseCheck(const LoadPattern& p, const std::vector<CgovGpuTick>& ticks) {
  int64_t in_phase = 0, known = 0;
  for (const CgovGpuTick& t : ticks) {
    if (!t.util_pct) continue;
    ++known;
    const std::optional<uint64_t> held =
        t.processes_known ? std::optional<uint64_t>(t.compute_memory_bytes) : std::nullopt;
    if (Classify(*t.util_pct, held, PhaseThresholds{}) == p.expected_phase) ++in_phase;
  }
  const double share =
      known > 0 ? 100.0 * static_cast<double>(in_phase) / static_cast<double>(known) : 0;
  return {fmt::format("share of ticks {}", PhaseKey(p.expected_phase)),
          fmt::format(">= {:.0f} %", p.expected_phase_min_share_pct),
          known > 0 ? fmt::format("{:.1f} %", share) : "no data", "",
          known > 0 && share >= p.expected_phase_min_share_pct};
}

Check AttributionCheck(const LoadPattern& p, const std::vector<CgovGpuTick>& ticks) {
  int64_t known = 0, matched = 0;
  for (const CgovGpuTick& t : ticks) {
    if (!t.processes_known) continue;
    ++known;
    const bool ok =
        p.context ? t.job_on_gpu && t.job_memory_bytes >= p.hold_bytes * 9 / 10 : !t.job_on_gpu;
    if (ok) ++matched;
  }
  const double share =
      known > 0 ? 100.0 * static_cast<double>(matched) / static_cast<double>(known) : 0;
  const std::string expected =
      p.context ? fmt::format("the job's pid on the GPU with >= {} MiB in >= 80 % of ticks",
                              p.hold_bytes * 9 / 10 >> 20)
                : "the job's pid never on the GPU";
  return {"process attribution", expected,
          known > 0 ? fmt::format("{:.1f} % of {} ticks", share, known) : "no process list", "",
          known > 0 && (p.context ? share >= 80 : matched == known)};
}

}  // namespace

Result<std::vector<SmiRow>> ParseSmiCsv(std::string_view text) {
  std::vector<SmiRow> rows;
  size_t line_no = 0;
  for (std::string_view line : SplitLines(text)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    std::vector<std::string_view> cols;
    for (size_t start = 0;;) {
      const size_t comma = line.find(',', start);
      cols.push_back(
          Trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start)));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (cols.size() != 5) {
      return InvalidArgument(fmt::format("line {}: {} columns, expected 5 ({})", line_no,
                                         cols.size(), fmt::join(kSmiColumns, ",")));
    }
    SmiRow row;
    CGOV_ASSIGN_OR_RETURN(row.unix_ms, SmiTimestamp(cols[0], line_no));
    CGOV_ASSIGN_OR_RETURN(std::optional<double> index, SmiNumber(cols[1], line_no, 1));
    if (!index) return InvalidArgument(fmt::format("line {}, column index: unknown", line_no));
    row.index = static_cast<int>(*index);
    CGOV_ASSIGN_OR_RETURN(row.util_pct, SmiNumber(cols[2], line_no, 2));
    CGOV_ASSIGN_OR_RETURN(row.mem_used_mib, SmiNumber(cols[3], line_no, 3));
    CGOV_ASSIGN_OR_RETURN(row.power_w, SmiNumber(cols[4], line_no, 4));
    rows.push_back(row);
  }
  return rows;
}

Result<std::vector<CgovGpuTick>> ParseCgovSamples(std::string_view jsonl, int index) {
  std::vector<CgovGpuTick> ticks;
  size_t line_no = 0;
  for (std::string_view line : SplitLines(jsonl)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      return InvalidArgument(fmt::format("line {}: not a JSON object", line_no));
    }
    if (j.value("kind", "") != "tick") continue;
    if (!j.contains("ts") || !j["ts"].is_string() || !j.contains("gpus") || !j["gpus"].is_array()) {
      return InvalidArgument(fmt::format("line {}: a tick needs \"ts\" and \"gpus\"", line_no));
    }
    CgovGpuTick t;
    Result<int64_t> ms = ParseTimestampMs(j["ts"].get<std::string>());
    if (!ms.ok())
      return InvalidArgument(fmt::format("line {}, field ts: {}", line_no, ms.status().message()));
    t.unix_ms = *ms;
    std::set<int64_t> job;
    if (j.contains("job") && j["job"].is_object() && j["job"].contains("pids")) {
      for (const auto& pid : j["job"]["pids"]) {
        if (pid.is_number_integer()) job.insert(pid.get<int64_t>());
      }
    }
    for (const auto& g : j["gpus"]) {
      if (!g.is_object() || g.value("index", -1) != index) continue;
      auto number = [&](const char* key, double scale) -> std::optional<double> {
        if (!g.contains(key) || !g[key].is_number()) return std::nullopt;
        return g[key].get<double>() * scale;
      };
      t.util_pct = number("util_gpu_pct", 1);
      t.mem_used_mib = number("mem_used_bytes", 1.0 / 1048576);
      t.power_w = number("power_mw", 1e-3);
      if (g.contains("processes") && g["processes"].is_array()) {
        t.processes_known = true;
        for (const auto& p : g["processes"]) {
          if (!p.is_object() || !p.value("compute", false)) continue;
          const uint64_t bytes =
              p.contains("used_memory_bytes") && p["used_memory_bytes"].is_number_unsigned()
                  ? p["used_memory_bytes"].get<uint64_t>()
                  : 0;
          t.compute_memory_bytes += bytes;
          if (job.count(p.value("pid", int64_t{-1}))) {
            t.job_on_gpu = true;
            t.job_memory_bytes += bytes;
          }
        }
      }
      ticks.push_back(t);
    }
  }
  return ticks;
}

std::vector<Check> ComparePattern(const LoadPattern& p, const std::vector<CgovGpuTick>& all_ticks,
                                  const std::vector<SmiRow>& all_rows,
                                  const CompareOptions& options) {
  if (all_ticks.empty()) return {{"cgov ticks", ">= 1 on the GPU", "none", "", false}};
  const int64_t from = all_ticks.front().unix_ms + options.warmup_ms;
  const int64_t to = all_ticks.back().unix_ms - options.tail_ms;
  std::vector<CgovGpuTick> ticks;
  for (const CgovGpuTick& t : all_ticks) {
    if (t.unix_ms >= from && t.unix_ms <= to) ticks.push_back(t);
  }
  std::vector<SmiRow> rows;
  for (const SmiRow& r : all_rows) {
    if (r.unix_ms >= from && r.unix_ms <= to) rows.push_back(r);
  }
  if (ticks.empty()) return {{"cgov ticks", "after the warm-up", "none (run longer)", "", false}};

  std::vector<Check> checks;
  const std::optional<double> util =
      Mean(Values(ticks, [](const CgovGpuTick& t) { return t.util_pct; }));
  const std::optional<double> smi_util =
      Mean(Values(rows, [](const SmiRow& r) { return r.util_pct; }));
  checks.push_back({"mean utilization",
                    fmt::format("{:.0f} ± {:.0f} %", p.expected_util_pct, p.util_tolerance_pct),
                    Pct(util), Pct(smi_util),
                    util && std::abs(*util - p.expected_util_pct) <= p.util_tolerance_pct});
  checks.push_back({"utilization vs nvidia-smi",
                    fmt::format("within {:.0f} points", options.util_vs_smi_pct), Pct(util),
                    Pct(smi_util),
                    util && smi_util && std::abs(*util - *smi_util) <= options.util_vs_smi_pct});
  const std::optional<double> mem =
      Mean(Values(ticks, [](const CgovGpuTick& t) { return t.mem_used_mib; }));
  const std::optional<double> smi_mem =
      Mean(Values(rows, [](const SmiRow& r) { return r.mem_used_mib; }));
  const double mem_tolerance =
      std::max(options.mem_vs_smi_mib, 0.02 * std::max(mem.value_or(0), smi_mem.value_or(0)));
  checks.push_back({"memory used vs nvidia-smi", fmt::format("within {:.0f} MiB", mem_tolerance),
                    Mib(mem), Mib(smi_mem),
                    mem && smi_mem && std::abs(*mem - *smi_mem) <= mem_tolerance});
  const std::optional<double> power =
      Mean(Values(ticks, [](const CgovGpuTick& t) { return t.power_w; }));
  const std::optional<double> smi_power =
      Mean(Values(rows, [](const SmiRow& r) { return r.power_w; }));
  const bool power_known = power && smi_power;
  checks.push_back({"power vs nvidia-smi",
                    fmt::format("within {:.0f} %", options.power_vs_smi_frac * 100), Watts(power),
                    Watts(smi_power),
                    !power_known || std::abs(*power - *smi_power) <=
                                        options.power_vs_smi_frac * std::max(*power, *smi_power)});
  checks.push_back(PhaseCheck(p, ticks));
  checks.push_back(AttributionCheck(p, ticks));
  return checks;
}

std::string MarkdownHeader() {
  return "| pattern | check | expected | cgov | nvidia-smi | result |\n"
         "| --- | --- | --- | --- | --- | --- |\n";
}

std::string MarkdownRows(const std::string& pattern, const std::vector<Check>& checks) {
  std::string out;
  for (const Check& c : checks) {
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", pattern, c.what, c.expected, c.cgov,
                       c.smi.empty() ? "—" : c.smi, c.pass ? "pass" : "**FAIL**");
  }
  return out;
}

}  // namespace cgov::validate
