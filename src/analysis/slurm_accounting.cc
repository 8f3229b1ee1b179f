#include "analysis/slurm_accounting.h"

#include <optional>
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

// A record that cannot be a Slurm job is skipped (said in *skipped), never fatal: a user names
// their own job, and one name must not make the file unreadable.
void Add(SlurmJob job, const std::string& where, SlurmJobs* jobs,
         std::vector<std::string>* skipped) {
  bool digits = !job.id.empty();
  for (char c : job.id) digits = digits && ((c >= '0' && c <= '9') || c == '_');
  if (!digits) {
    skipped->push_back(
        fmt::format("{}: JobID: expected digits (an array task: 123_4), got '{}': record skipped",
                    where, SafeText(job.id)));
    return;
  }
  (*jobs)[job.id] = std::move(job);
}

// `sacct --parsable2`: a header line of column names, then '|'-separated rows.
Result<SlurmJobs> ParseSacct(std::string_view text, const std::string& name,
                             std::vector<std::string>* skipped) {
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
        return InvalidArgument(where +
                               ": expected a header naming JobID (sacct --parsable2 "
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
      skipped->push_back(fmt::format("{}: {} fields where the header has {}: row skipped", where,
                                     cells.size(), column.size()));
      continue;
    }
    SlurmJob job{cell("JobID"), cell("User"), cell("Account"), cell("Partition")};
    if (IsStep(job.id)) continue;
    Add(std::move(job), where, &jobs, skipped);
  }
  if (column.empty()) return InvalidArgument(name + ": empty (expected sacct --parsable2 output)");
  return jobs;
}

// Keys whose value is free text a user writes (sbatch --comment, the job's command and
// directories): Slurm writes each alone on its line, so such a line is never read for fields.
bool FreeTextLine(std::string_view key) {
  static constexpr std::string_view kFree[] = {
      "Comment", "AdminComment", "SystemComment", "Command", "WorkDir",  "StdErr",
      "StdIn",   "StdOut",       "JobName",       "Reason",  "Features", "MailUser"};
  for (std::string_view k : kFree) {
    if (key == k) return true;
  }
  return false;
}

// `scontrol show job`: records separated by blank lines. Fields are read only where Slurm
// writes them: a record starts at a line that starts with JobId= (of which only JobId is read:
// JobName, the job's own text, runs to the end of that line); UserId, Account and Partition
// are read from the lines that follow, the first of each winning, and a line that starts with a
// free-text key (Comment=, Command=, ...) is not read at all. So nothing a user writes in a job's
// name or comment can name another account or make the file unreadable.
// (Only called on text that starts with JobId= or says there are no jobs: never an error.)
SlurmJobs ParseScontrol(std::string_view text, const std::string& name,
                        std::vector<std::string>* skipped) {
  SlurmJobs jobs;
  std::optional<SlurmJob> job;
  std::string job_where;
  auto flush = [&] {
    if (job) Add(std::move(*job), job_where, &jobs, skipped);
    job.reset();
  };
  auto set_once = [](std::string* field, std::string_view value) {
    if (field->empty()) *field = SafeText(value);
  };
  const std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = Trim(lines[i]);
    if (line.empty()) {
      flush();
      continue;
    }
    const std::vector<std::string_view> tokens = SplitFields(line);
    if (tokens.empty()) continue;
    const std::string_view first = tokens.front().substr(0, tokens.front().find('='));
    if (tokens.front().starts_with("JobId=")) {
      flush();
      job = SlurmJob{};
      job->id = SafeText(tokens.front().substr(6));
      job_where = fmt::format("{}:{}", name, i + 1);
      continue;
    }
    if (!job || FreeTextLine(first)) continue;
    for (std::string_view token : tokens) {
      const size_t eq = token.find('=');
      if (eq == std::string_view::npos) continue;
      const std::string_view key = token.substr(0, eq), value = token.substr(eq + 1);
      if (key == "UserId") {
        set_once(&job->user, value.substr(0, value.find('(')));  // "alice(1001)"
      } else if (key == "Account") {
        set_once(&job->account, value);
      } else if (key == "Partition") {
        set_once(&job->partition, value);
      }
    }
  }
  flush();
  return jobs;
}

}  // namespace

Result<SlurmJobs> ParseSlurmAccounting(std::string_view text, const std::string& name,
                                       std::vector<std::string>* skipped) {
  std::vector<std::string> ignored;
  if (skipped == nullptr) skipped = &ignored;
  const std::string_view head = Trim(text.substr(0, text.find('\n')));
  if (head.starts_with("JobId=") || head == "No jobs in the system") {
    return ParseScontrol(text, name, skipped);
  }
  return ParseSacct(text, name, skipped);
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
