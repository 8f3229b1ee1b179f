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
  EXPECT_EQ(ParseSlurmAccounting("JobID|User\n1|alice|extra\n", "a.txt").status().message(),
            "a.txt:2: 3 fields where the header has 2");
  EXPECT_EQ(ParseSlurmAccounting("JobID|User\n\nabc|alice\n", "a.txt").status().message(),
            "a.txt:3: JobID: expected digits (an array task: 123_4), got 'abc'");
  EXPECT_FALSE(ParseSlurmAccounting("", "a.txt").ok());
}

TEST(SlurmAccounting, IdentitiesGainAccountUserAndProjectWhereTheyHadNone) {
  auto jobs = ParseSlurmAccounting(Fixture("sacct.txt"), "sacct.txt");
  ASSERT_TRUE(jobs.ok());
  std::map<uint32_t, IdentityRecord> ids;
  ids[1].slurm_job = "4242117";             // nothing else known
  ids[2].slurm_job = "4242118";
  ids[2].user = "bob";                      // the job's user
  ids[2].project = "from-env";              // what the process said stays
  ids[3].slurm_job = "999";                 // not in the file
  ids[4].user = "dave";                     // not a Slurm job
  ids[5].slurm_job = "4242117";             // alice's job, claimed by mallory's SLURM_JOB_ID
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
