// End-to-end: a Slurm node. The daemon records a shared box whose GPU processes run in Slurm
// jobs (cgroup job_<id>, or only SLURM_JOB_ID in the environment); `cgov report --slurm-accounting`
// with recorded `sacct` output names their accounts, and `--by account` / `--by slurm_job` split
// the GPU time by them.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

// The shared box's /proc, with alice's trainer (41000) in Slurm job 4242117 (its cgroup says so)
// and bob's notebook (42000) in job 4242118 (only its SLURM_JOB_ID says so: a node without
// Slurm's cgroup plugin), neither naming a project in its environment.
std::string SlurmBox(const TempDir& dir) {
  const std::string root = dir / "root";
  std::filesystem::copy(Fixture("proc/shared-box"), root, std::filesystem::copy_options::recursive);
  const std::map<std::string, std::string> jobs = {{"41000", "4242117"}, {"42000", "4242118"}};
  for (const auto& [pid, job] : jobs) {
    const std::string proc = root + "/proc/" + pid;
    std::filesystem::remove(proc + "/cgroup");
    std::filesystem::remove(proc + "/environ");
    if (pid == "41000") {
      std::ofstream(proc + "/cgroup")
          << "0::/system.slice/slurmstepd.scope/job_" << job << "/step_0/user/task_0\n";
    } else {
      std::ofstream(proc + "/cgroup") << "0::/user.slice/user-1001.slice/session-3.scope\n";
    }
    std::ofstream(proc + "/environ") << "PATH=/usr/bin" << '\0' << "SLURM_JOB_ID=" << job << '\0';
  }
  return root;
}

json Report(const std::string& db, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--db", db, "--since", "1h"};
  args.insert(args.end(), extra.begin(), extra.end());
  return ReportJson(args);
}

TEST(SlurmE2E, AccountsFromRecordedSacctSplitTheGpuTime) {
  TempDir dir;
  const std::string db = dir / "h.db";
  const std::string sacct = Fixture("slurm/sacct.txt");
  const int port = FreePort();
  Started daemon =
      StartProgram({CgovBinary(), "daemon", "--db", db, "--interval", "1s", "--commit-every", "1s",
                    "--nvml-lib", FakeNvml("full"), "--host-root", SlurmBox(dir),
                    "--slurm-accounting", sacct, "--listen", "127.0.0.1:" + std::to_string(port)},
                   {{"CGOV_FAKE_NVML_SCENARIO", Scenario("shared_box")}});
  ASSERT_TRUE(WaitFor([&] { return QueryDb(db, "SELECT count(*) FROM tick") >= 4; }, 30));
  const std::string metrics = Curl("http://127.0.0.1:" + std::to_string(port) + "/metrics");
  ASSERT_EQ(kill(daemon.pid, SIGTERM), 0);
  ASSERT_EQ(WaitProgram(daemon, 15).exit_code, 0);
  // Issue 47: /metrics names each identity's Slurm job, and with --slurm-accounting its account
  // and partition.
  EXPECT_NE(metrics.find("slurm_job=\"4242117\",slurm_account=\"llm-research\","
                         "slurm_partition=\"gpu\"}"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("slurm_job=\"4242118\",slurm_account=\"notebooks-lab\","
                         "slurm_partition=\"interactive\"}"),
            std::string::npos);
  RunResult alone = RunProgram(
      {CgovBinary(), "daemon", "--db", dir / "x.db", "--slurm-accounting", sacct}, {}, 10);
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("--slurm-accounting labels /metrics"), std::string::npos) << alone.err;

  const json by_user = Report(db, {"--slurm-accounting", sacct});
  const json by_account = Report(db, {"--by", "account", "--slurm-accounting", sacct});
  const json by_job = Report(db, {"--by", "slurm_job"});
  const json by_project = Report(db, {"--by", "project", "--slurm-accounting", sacct});
  std::map<std::string, double> user = HeldByKey(by_user), account = HeldByKey(by_account),
                                job = HeldByKey(by_job), project = HeldByKey(by_project);
  ASSERT_GT(user["alice"], 0) << by_user["who"].dump(1);
  // Each job's account holds exactly what its user held.
  EXPECT_DOUBLE_EQ(account["llm-research"], user["alice"]) << by_account["who"].dump(1);
  EXPECT_DOUBLE_EQ(account["notebooks-lab"], user["bob"]) << by_account["who"].dump(1);
  EXPECT_DOUBLE_EQ(job["4242117"], user["alice"]) << by_job["who"].dump(1);
  EXPECT_DOUBLE_EQ(job["4242118"], user["bob"]);
  // The account is the project of processes that named none; the pod's own project stays.
  EXPECT_DOUBLE_EQ(project["llm-research"], user["alice"]) << by_project["who"].dump(1);
  EXPECT_GT(project["vision"], 0);
  // The totals do not move.
  EXPECT_EQ(by_account["held_gpu_seconds"], by_user["held_gpu_seconds"]);
  EXPECT_NE(by_account["notes"].dump().find("3 job(s) read, 2 process identities matched"),
            std::string::npos)
      << by_account["notes"];

  // --sacct runs Slurm's sacct for the window: here a recorder on PATH that checks it was asked
  // for every user's jobs in parsable form and answers with the recorded output.
  const std::string bin = dir / "bin";
  std::filesystem::create_directories(bin);
  std::ofstream(bin + "/sacct") << "#!/bin/sh\n"
                                   "echo \"$@\" > \"$(dirname \"$0\")/args\"\n"
                                   "case \" $* \" in *' --allusers '*) ;; *) exit 9;; esac\n"
                                   "case \" $* \" in *' --parsable2 '*) ;; *) exit 9;; esac\n"
                                   "exec cat '"
                                << sacct << "'\n";
  std::filesystem::permissions(bin + "/sacct", std::filesystem::perms::owner_all);
  const std::string path = bin + ":" + std::getenv("PATH");
  RunResult from_sacct = RunProgram({CgovBinary(), "report", "--db", db, "--since", "1h",
                                     "--format", "json", "--by", "account", "--sacct"},
                                    {{"PATH", path}});
  ASSERT_EQ(from_sacct.exit_code, 0) << from_sacct.err;
  const json by_sacct = json::parse(from_sacct.out);
  EXPECT_EQ(HeldByKey(by_sacct), account) << "the same accounts as from the file";
  const std::string args = ReadFile(bin + "/args");
  EXPECT_NE(args.find("--format=JobID,User,Account,Partition --starttime="), std::string::npos)
      << args;
  EXPECT_NE(args.find("--endtime="), std::string::npos) << args;
  EXPECT_NE(by_sacct["notes"].dump().find("--sacct (sacct --starttime="), std::string::npos)
      << by_sacct["notes"];
  std::ofstream(bin + "/sacct", std::ios::trunc)
      << "#!/bin/sh\necho 'sacct: error: Problem talking to the database: Connection refused' "
         ">&2\nexit 1\n";
  RunResult down = RunProgram({CgovBinary(), "report", "--db", db, "--by", "account", "--sacct"},
                              {{"PATH", path}});
  EXPECT_EQ(down.exit_code, 1) << down.err;
  EXPECT_NE(down.err.find("--sacct: sacct: exited 1: sacct: error: Problem talking to the "
                          "database"),
            std::string::npos)
      << down.err;

  RunResult no_file = RunProgram({CgovBinary(), "report", "--db", db, "--by", "account"}, {});
  EXPECT_EQ(no_file.exit_code, 2);
  EXPECT_NE(no_file.err.find("--slurm-accounting FILE"), std::string::npos) << no_file.err;
  std::ofstream(dir / "bad.txt") << "JobID|User\nnot-a-job|x\n";
  RunResult bad =
      RunProgram({CgovBinary(), "report", "--db", db, "--slurm-accounting", dir / "bad.txt"}, {});
  // A row that cannot be a job is one job's problem: skipped and said, the report made.
  EXPECT_EQ(bad.exit_code, 0) << bad.err;
  EXPECT_NE((bad.out + bad.err).find("bad.txt:2: JobID: expected digits"), std::string::npos)
      << bad.out << bad.err;
  std::ofstream(dir / "worse.txt") << "nothing of Slurm's\n";
  RunResult worse =
      RunProgram({CgovBinary(), "report", "--db", db, "--slurm-accounting", dir / "worse.txt"}, {});
  EXPECT_EQ(worse.exit_code, 1) << worse.err;  // as a bad --billing file: the input
  EXPECT_NE(worse.err.find("worse.txt:1: expected a header naming JobID"), std::string::npos)
      << worse.err;
}

}  // namespace
}  // namespace cgov::e2e
