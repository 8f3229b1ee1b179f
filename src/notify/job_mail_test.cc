#include "notify/job_mail.h"

#include <gtest/gtest.h>

#include "core/money.h"

namespace cgov {
namespace {

constexpr int64_t kJobHourMs = 3'600'000;

TEST(JobMail, StatesTheJobsRowItsPhasesAndItsOwnersCostliestHabitSaidToThem) {
  WhoRow row;
  row.key = "4242";
  row.cost = 31'204'999;  // $31.20
  row.idle_held_cost = 7'800'000;
  row.idle_held_ms = 3 * kJobHourMs;
  row.attributed_ms[static_cast<size_t>(Phase::kProductive)] = 9 * kJobHourMs;
  row.attributed_ms[static_cast<size_t>(Phase::kIdleHeld)] = 3 * kJobHourMs;
  HistorySummary window;
  window.idle_held_min_ms = 30 * 60'000;
  HabitRow other, theirs;
  other.user = "carol";
  other.idle_held_cost = 50'000'000;
  other.advice = "ask carol to stop";
  theirs.user = "bob";
  theirs.command = "python\x1b[2J";
  theirs.kind = "batch job";
  theirs.gpu_index = 2;
  theirs.idle_held_ms = 3 * kJobHourMs;
  theirs.idle_held_cost = 7'800'000;
  theirs.advice = "ask bob to checkpoint and exit";
  window.habits = {other, theirs};
  const EndedJob job{HistoryBy::kSlurmJob, "4242", "bob", 1'794'787'200'000,
                     1'794'787'200'000 + 12 * kJobHourMs};
  const DigestMail m = JobMail(job, row, window, "gpu-box-7");
  EXPECT_EQ(
      m.subject,
      "[cgov] Your Slurm job 4242 on gpu-box-7 ended: 12.000 GPU-hours, $31.20 (25 % idle-held)");
  EXPECT_EQ(m.cost, row.cost);
  EXPECT_NE(m.text.find("ran        2026-11-16T00:00Z to 2026-11-16T12:00Z"), std::string::npos)
      << m.text;
  EXPECT_NE(m.text.find("idle, memory held 3.00 h (25 %)"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("productive 9.00 h (75 %)"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("What to do: checkpoint and exit"), std::string::npos)
      << "his own habit, said to him:\n"
      << m.text;
  EXPECT_EQ(m.text.find("carol"), std::string::npos) << "another user's habit";
  EXPECT_EQ(m.text.find('\x1b'), std::string::npos) << "an escape sequence from a command";
  EXPECT_NE(m.text.find("--by slurm_job"), std::string::npos);
  EXPECT_EQ(m.html.find("\x1b"), std::string::npos);
  const DigestMail pod =
      JobMail({HistoryBy::kPod, "ml/<train>", "bob", 0, kJobHourMs}, row, HistorySummary{}, "box");
  EXPECT_NE(pod.subject.find("Your pod ml/<train> on box"), std::string::npos);
  EXPECT_NE(pod.html.find("pod ml/&lt;train&gt;"), std::string::npos) << pod.html;
  EXPECT_NE(pod.text.find("No idle-held stretch"), std::string::npos);
  EXPECT_NE(pod.text.find("--by pod"), std::string::npos);
}

}  // namespace
}  // namespace cgov
