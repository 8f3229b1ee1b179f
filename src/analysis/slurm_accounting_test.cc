#include "analysis/slurm_accounting.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace cgov {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(CGOV_FIXTURES_DIR) + "/slurm/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SlurmAccounting, SacctParsable2ByHeaderStepsSkipped) {
  auto jobs = ParseSlurmAccounting(Fixture("sacct.txt"), "sacct.txt");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 3u) << "steps belong to their job";
  EXPECT_EQ(jobs->at("4242117").user, "alice");
  EXPECT_EQ(jobs->at("4242117").account, "llm-research");
  EXPECT_EQ(jobs->at("4242118").partition, "interactive");
  EXPECT_EQ(jobs->at("4242119_3").account, "vision") << "an array task";
  // Any column order; only JobID is required.
  auto crlf = ParseSlurmAccounting("JobID|Account\r\n8|ml\r\n", "x");
  ASSERT_TRUE(crlf.ok()) << crlf.status().message();
  EXPECT_EQ(crlf->at("8").account, "ml") << "CRLF line ends";
  auto reordered = ParseSlurmAccounting("Account|JobID\nml|7\n", "x");
  ASSERT_TRUE(reordered.ok());
  EXPECT_EQ(reordered->at("7").account, "ml");
  EXPECT_EQ(reordered->at("7").user, "");
}

TEST(SlurmAccounting, ScontrolShowJobRecords) {
  auto jobs = ParseSlurmAccounting(Fixture("scontrol-show-job.txt"), "show.txt");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ(jobs->at("4242117").user, "alice") << "UserId=alice(1001)";
  EXPECT_EQ(jobs->at("4242117").account, "llm-research");
  EXPECT_EQ(jobs->at("4242118").partition, "interactive");
}

TEST(SlurmAccounting, ErrorsNameTheFileLineAndField) {
  EXPECT_EQ(ParseSlurmAccounting("User|Account\nalice|x\n", "a.txt").status().message(),
            "a.txt:1: expected a header naming JobID (sacct --parsable2 "
            "--format=JobID,User,Account,Partition)");
  EXPECT_FALSE(ParseSlurmAccounting("", "a.txt").ok());
  EXPECT_FALSE(ParseSlurmAccounting("hello\n", "a.txt").ok());
  // A malformed row is skipped and said, the others kept.
  std::vector<std::string> skipped;
  auto jobs =
      ParseSlurmAccounting("JobID|User\n1|alice|extra\n\nabc|alice\n2|bob\n", "a.txt", &skipped);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ(jobs->size(), 1u);
  EXPECT_EQ(jobs->at("2").user, "bob");
  ASSERT_EQ(skipped.size(), 2u);
  EXPECT_EQ(skipped[0], "a.txt:2: 3 fields where the header has 2: row skipped");
  EXPECT_EQ(skipped[1],
            "a.txt:4: JobID: expected digits (an array task: 123_4), got 'abc': record skipped");
}

// Issue 58, 7: every Key=Value counted and the last won, so a user's own comment relabelled the
// job, and a JobName holding "JobId=oops" made the whole file invalid (the daemon exited 2).
TEST(SlurmAccounting, AUsersNameOrCommentCannotForgeOrBreakTheFile) {
  const std::string text =
      "JobId=4242117 JobName=train UserId=mallory(1) Account=finance Partition=vip JobId=oops\n"
      "   UserId=alice(1001) GroupId=alice(1001) MCS_label=N/A\n"
      "   Priority=4294901759 Nice=0 Account=llm-research QOS=normal\n"
      "   Partition=gpu AllocNode:Sid=login1:4242\n"
      "   Comment=pay Account=finance UserId=root(0) Partition=vip\n"
      "   Command=/bin/train Account=finance\n"
      "   WorkDir=/home/alice Account=finance\n"
      "\n"
      "JobId=oops JobName=x\n"
      "   UserId=bob(1002) Account=bobs\n"
      "\n"
      "JobId=4242118 JobName=notebook\n"
      "   UserId=bob(1002) GroupId=bob(1002) MCS_label=N/A\n"
      "   Account=notebooks-lab QOS=normal\n"
      "   Partition=interactive\n";
  std::vector<std::string> skipped;
  auto jobs = ParseSlurmAccounting(text, "show.txt", &skipped);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  const SlurmJob& job = jobs->at("4242117");
  EXPECT_EQ(job.user, "alice");
  EXPECT_EQ(job.account, "llm-research");
  EXPECT_EQ(job.partition, "gpu");
  EXPECT_EQ(jobs->at("4242118").account, "notebooks-lab");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("show.txt:9: JobID"), std::string::npos) << skipped[0];
  EXPECT_TRUE(ParseSlurmAccounting("No jobs in the system\n", "s.txt").ok());
}

TEST(SlurmAccounting, IdentitiesGainAccountUserAndProjectWhereTheyHadNone) {
  auto jobs = ParseSlurmAccounting(Fixture("sacct.txt"), "sacct.txt");
  ASSERT_TRUE(jobs.ok());
  std::map<uint32_t, IdentityRecord> ids;
  ids[1].slurm_job = "4242117";  // nothing else known
  ids[2].slurm_job = "4242118";
  ids[2].user = "bob";           // the job's user
  ids[2].project = "from-env";   // what the process said stays
  ids[3].slurm_job = "999";      // not in the file
  ids[4].user = "dave";          // not a Slurm job
  ids[5].slurm_job = "4242117";  // alice's job, claimed by mallory's SLURM_JOB_ID
  ids[5].user = "mallory";
  EXPECT_EQ(ApplySlurmJobs(*jobs, &ids), 2u);
  EXPECT_EQ(ids[1].user, "alice");
  EXPECT_EQ(ids[1].project, "llm-research");
  EXPECT_EQ(ids[1].slurm_account, "llm-research");
  EXPECT_EQ(ids[1].slurm_partition, "gpu");
  EXPECT_EQ(ids[2].user, "bob");
  EXPECT_EQ(ids[2].project, "from-env");
  EXPECT_EQ(ids[2].slurm_account, "notebooks-lab");
  EXPECT_EQ(ids[3].slurm_account, "");
  EXPECT_EQ(ids[4].slurm_account, "");
  EXPECT_EQ(ids[5].slurm_account, "") << "not charged to another user's job";
  EXPECT_EQ(ids[5].project, "");
}

}  // namespace
}  // namespace cgov
