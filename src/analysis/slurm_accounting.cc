#include "analysis/slurm_accounting.h"

#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "telemetry/text_scan.h"

namespace cgov {
namespace {

std::vector<std::string_view> Split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t at = line.find(sep); at != std::string_view::npos; at = line.find(sep, start)) {
    out.push_back(line.substr(start, at - start));
    start = at + 1;
  }
  out.push_back(line.substr(start));
  return out;
}

bool IsStep(std::string_view id) { return id.find('.') != std::string_view::npos; }

Status Add(SlurmJob job, const std::string& where, SlurmJobs* jobs) {
  if (job.id.empty()) return InvalidArgument(where + ": JobID: empty");
  for (char c : job.id) {
    if (!(c >= '0' && c <= '9') && c != '_') {
      return InvalidArgument(fmt::format("{}: JobID: expected digits (an array task: 123_4), got "
                                         "'{}'", where, SafeText(job.id)));
    }
  }
  (*jobs)[job.id] = std::move(job);
  return Status::Ok();
}

// `sacct --parsable2`: a header line of column names, then '|'-separated rows.
Result<SlurmJobs> ParseSacct(std::string_view text, const std::string& name) {
  SlurmJobs jobs;
  std::map<std::string, size_t> column;
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = Trim(lines[i]);
    const size_t line_no = i + 1;
    if (line.empty()) continue;
    const std::vector<std::string_view> cells = Split(line, '|');
    const std::string where = fmt::format("{}:{}", name, line_no);
    if (column.empty()) {
      for (size_t c = 0; c < cells.size(); ++c) column[std::string(Trim(cells[c]))] = c;
      if (!column.count("JobID")) {
        return InvalidArgument(where + ": expected a header naming JobID (sacct --parsable2 "
                                      "--format=JobID,User,Account,Partition)");
      }
      continue;
    }
    auto cell = [&](const char* key) {
      auto it = column.find(key);
      return it != column.end() && it->second < cells.size() ? SafeText(Trim(cells[it->second]))
                                                              : std::string();
    };
    if (cells.size() != column.size()) {
      return InvalidArgument(fmt::format("{}: {} fields where the header has {}", where,
                                         cells.size(), column.size()));
    }
    SlurmJob job{cell("JobID"), cell("User"), cell("Account"), cell("Partition")};
    if (IsStep(job.id)) continue;
    CGOV_RETURN_IF_ERROR(Add(std::move(job), where, &jobs));
  }
  if (column.empty()) return InvalidArgument(name + ": empty (expected sacct --parsable2 output)");
  return jobs;
}

// `scontrol show job`: records of whitespace-separated Key=Value, separated by blank lines.
Result<SlurmJobs> ParseScontrol(std::string_view text, const std::string& name) {
  SlurmJobs jobs;
  SlurmJob job;
  std::string job_where;
  auto flush = [&]() -> Status {
    if (job_where.empty()) return Status::Ok();
    Status s = Add(std::move(job), job_where, &jobs);
    job = SlurmJob{};
    job_where.clear();
    return s;
  };
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = Trim(lines[i]);
    const size_t line_no = i + 1;
    if (line.empty()) {
      CGOV_RETURN_IF_ERROR(flush());
      continue;
    }
    for (std::string_view token : SplitFields(line)) {
      const size_t eq = token.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
      if (key == "JobId") {
        CGOV_RETURN_IF_ERROR(flush());
        job.id = SafeText(value);
        job_where = fmt::format("{}:{}", name, line_no);
      } else if (key == "UserId") {
        job.user = SafeText(value.substr(0, value.find('(')));  // "alice(1001)"
      } else if (key == "Account") {
        job.account = SafeText(value);
      } else if (key == "Partition") {
        job.partition = SafeText(value);
      }
    }
  }
  CGOV_RETURN_IF_ERROR(flush());
  if (jobs.empty()) return InvalidArgument(name + ": no JobId= record (expected scontrol show job output)");
  return jobs;
}

}  // namespace

Result<SlurmJobs> ParseSlurmAccounting(std::string_view text, const std::string& name) {
  const std::string_view head = Trim(text.substr(0, text.find('\n')));
  if (head.find("JobId=") != std::string_view::npos) return ParseScontrol(text, name);
  return ParseSacct(text, name);
}

size_t ApplySlurmJobs(const SlurmJobs& jobs, std::map<uint32_t, IdentityRecord>* identities) {
  size_t matched = 0;
  for (auto& [id, r] : *identities) {
    if (r.slurm_job.empty()) continue;
    auto it = jobs.find(r.slurm_job);
    if (it == jobs.end()) continue;
    // A process of another user naming this job (SLURM_JOB_ID is the process's own to set) is
    // not charged to the job's account.
    if (!r.user.empty() && !it->second.user.empty() && r.user != it->second.user) continue;
    ++matched;
    r.slurm_account = it->second.account;
    r.slurm_partition = it->second.partition;
    if (r.user.empty()) r.user = it->second.user;
    if (r.project.empty()) r.project = it->second.account;
  }
  return matched;
}

}  // namespace cgov
