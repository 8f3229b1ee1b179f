#include "notify/job_mail.h"

#include <algorithm>

#include <fmt/format.h>

#include "analysis/phases.h"
#include "core/money.h"
#include "core/text.h"
#include "core/time_format.h"
#include "notify/mail_message.h"

namespace cgov {
namespace {

std::string JobHours(int64_t ms) { return fmt::format("{:.2f}", static_cast<double>(ms) / 3.6e6); }

std::string JobGpuHours(int64_t ms) {
  return fmt::format("{:.3f}", static_cast<double>(ms) / 3.6e6);
}

double PctOf(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

}  // namespace

std::vector<std::string> JobReportAddresses(const NotifySink& sink, const Recipients* people,
                                            const std::string& owner) {
  std::vector<std::string> to = sink.to;
  if (people != nullptr && sink.to_owner) {
    for (const Recipient& r : people->Owner(owner)) {
      if (std::find(to.begin(), to.end(), r.address) == to.end()) to.push_back(r.address);
    }
  }
  return to;
}

std::string EndedJobName(const EndedJob& job) {
  return fmt::format("{} {}", job.by == HistoryBy::kPod ? "pod" : "Slurm job", SafeText(job.key));
}

DigestMail JobMail(const EndedJob& job, const WhoRow& row, const HistorySummary& window,
                   const std::string& host) {
  const int64_t gpu_ms = row.AttributedMs();
  std::string phases;
  for (size_t p = 0; p < kPhaseCount; ++p) {
    if (row.attributed_ms[p] == 0) continue;
    phases += fmt::format("{}{} {} h ({:.0f} %)", phases.empty() ? "" : ", ",
                          PhaseLabel(static_cast<Phase>(p)), JobHours(row.attributed_ms[p]),
                          PctOf(row.attributed_ms[p], gpu_ms));
  }
  const double idle_pct = PctOf(row.idle_held_cost, row.cost);
  const MailFacts rows = {
      {"ran",
       fmt::format("{} to {}", FormatMinuteUtc(job.since_ms), FormatMinuteUtc(job.until_ms))},
      {"GPU time", fmt::format("{} GPU-hours, {}", JobGpuHours(gpu_ms), FormatUsd(row.cost))},
      {"idle-held",
       fmt::format("{} hours, {} ({:.0f} % of its dollars)", JobHours(row.idle_held_ms),
                   FormatUsd(row.idle_held_cost), idle_pct)},
      {"phases", phases.empty() ? std::string("none known") : phases}};
  std::string fix = fmt::format("No idle-held stretch of {} min or more: nothing to change.",
                                window.idle_held_min_ms / 60'000);
  for (const HabitRow& h : window.habits) {  // the costliest first
    if (h.user != job.user || h.idle_held_cost == 0) continue;
    const std::string advice = SaidToItsOwner(h.advice, h.user);
    fix = fmt::format("{} ({}) on GPU {} was idle-held {} h, {}. What to do: {}",
                      SafeText(h.command), h.kind, h.gpu_index, JobHours(h.idle_held_ms),
                      FormatUsd(h.idle_held_cost), SafeText(advice));
    break;
  }
  const std::string command = fmt::format(
      "cgov report --since {} --until {} --by {}", FormatRfc3339Utc(job.since_ms * 1'000'000),
      FormatRfc3339Utc(job.until_ms * 1'000'000), job.by == HistoryBy::kPod ? "pod" : "slurm_job");
  DigestMail m;
  m.cost = row.cost;
  m.idle_held_cost = row.idle_held_cost;
  m.idle_held_ms = row.idle_held_ms;
  m.id = fmt::format("{}/job/{}/{}", host, job.by == HistoryBy::kPod ? "pod" : "slurm", job.key);
  m.who = SafeText(job.user);  // for the log
  m.subject =
      fmt::format("[cgov] Your {} on {} ended: {} GPU-hours, {} ({:.0f} % idle-held)",
                  EndedJobName(job), host, JobGpuHours(gpu_ms), FormatUsd(row.cost), idle_pct);
  const std::string title = fmt::format("Your {} on {} has ended", EndedJobName(job), host);
  m.text = title + ".\n\n" + MailFactsText(rows) + "\n" + fix + "\n\nIts whole window: `" +
           command +
           "` on this host's history.\n-- \ncgov daemon --notify (docs/notifications.md)\n";
  m.html = MailHtmlPage(title, MailFactsHtml(rows) + MailCalloutHtml(fix),
                        "Its whole window: <code>" + HtmlEscaped(command) +
                            "</code> on this host's history. cgov daemon --notify");
  return m;
}

}  // namespace cgov
