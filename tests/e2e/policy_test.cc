// The idle-held policy (issue 18), through the real binary with real child processes that the
// fake driver reports on its GPUs: a dry run names the process it would stop and signals
// nothing; enabled, it stops exactly that process (SIGTERM, ignored here, then SIGKILL after the
// grace) and leaves alone an allow-listed process, one that used its GPU, one outside the
// policy's group and a pid with no process; every step is in the history and the report.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <grp.h>

#include <chrono>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e_helpers.h"
#include "process_runner.h"
#include "webhook_receiver.h"

namespace cgov::e2e {
namespace {

using nlohmann::json;

// As root the children run as nobody:nogroup (and one as daemon:daemon, outside the policy's
// group); otherwise as the test's own user and group.
std::vector<std::string> AsChild(gid_t gid, uid_t uid, std::vector<std::string> argv) {
  if (geteuid() != 0) return argv;
  std::vector<std::string> out = {"/usr/bin/setpriv", "--reuid=" + std::to_string(uid),
                                  "--regid=" + std::to_string(gid), "--clear-groups"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

bool Running(pid_t pid) { return waitpid(pid, nullptr, WNOHANG) == 0; }

std::vector<json> ActionsOf(const json& report, int pid) {
  std::vector<json> out;
  for (const json& a : report["policy_actions"]) {
    if (a["pid"] == pid) out.push_back(a);
  }
  return out;
}

TEST(PolicyE2E, DryRunNamesTheProcessThenEnabledStopsExactlyItAfterItsGrace) {
  TempDir dir;
  const bool root = geteuid() == 0;
  const gid_t gid = root ? 65534 : getegid();
  const uid_t uid = root ? 65534 : geteuid();
  const group* g = getgrgid(gid);
  ASSERT_NE(g, nullptr);
  const std::string group_name = g->gr_name;
  // The target ignores SIGTERM (the disposition survives exec), so only SIGKILL stops it.
  Started target =
      StartProgram(AsChild(gid, uid, {"/bin/sh", "-c", "trap '' TERM; exec sleep 600"}), {});
  // The allow-listed one is sleep under another name (its command, as /proc says, is keepme).
  std::filesystem::copy_file("/bin/sleep", dir / "keepme");
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
  Started allowed = StartProgram(AsChild(gid, uid, {dir / "keepme", "601"}), {});
  Started busy = StartProgram(AsChild(gid, uid, {"/bin/sleep", "602"}), {});
  Started other;  // outside the policy's group (root only: it takes another uid and gid)
  if (root) other = StartProgram(AsChild(1, 1, {"/bin/sleep", "603"}), {});
  const int phantom = 3'999'999;  // a pid the driver reports with no process behind it
  usleep(300'000);  // the shell has exec'd sleep
  auto gpu = [](double util, std::vector<int> pids) {
    json processes = json::array();
    for (int pid : pids) {
      processes.push_back({{"pid", pid}, {"type", "compute"}, {"used_mib", 4000}});
    }
    return json{{"name", "NVIDIA A100-SXM4-80GB"}, {"memory_total_mib", 81920},
                {"timeline", {{{"t", 0}, {"util_gpu", util}, {"util_mem", 0}}}},
                {"processes", processes}};
  };
  // GPU 2 is idle-held too (under 10 %), but at 5 % it is in use: its process is never stopped.
  json gpus = {gpu(0, {target.pid, phantom}), gpu(0, {allowed.pid}), gpu(5, {busy.pid})};
  if (root) gpus.push_back(gpu(0, {other.pid}));
  WriteFile(dir / "scenario.json", json{{"driver_version", "550.54.15"}, {"gpus", gpus}}.dump());
  WriteFile(dir / "policy.toml",
            "[[policy]]\nname = \"stale\"\nidle_held_for = \"1s\"\ngrace = \"2s\"\n"
            "groups = [\"" + group_name + "\"]\nallow_commands = [\"keep*\"]\n");
  // Each step is noticed too (a notify rule of kind policy).
  auto receiver = StartReceiver(dir, "hook");
  WriteFile(dir / "notify.toml", "[[sink]]\nname = \"ops\"\nkind = \"webhook\"\nurl_file = \"" +
                                     UrlFile(dir, "ops", receiver->url + "/hook") +
                                     "\"\n[[rule]]\nkind = \"policy\"\n");
  const Env env = {{"CGOV_FAKE_NVML_SCENARIO", dir / "scenario.json"}};
  auto daemon_argv = [&](bool dry) {
    std::vector<std::string> argv = {CgovBinary(), "daemon", "--db", dir / "h.db", "--interval",
                                     "200ms", "--commit-every", "0s", "--nvml-lib",
                                     FakeNvml("full"), "--policy", dir / "policy.toml",
                                     "--notify", dir / "notify.toml"};
    if (dry) argv.push_back("--policy-dry-run");
    return argv;
  };
  const pid_t target_id = target.pid;  // WaitProgram forgets it once reaped
  const std::string target_pid = std::to_string(target_id);
  // 1. The dry run names the target, and only it, and signals nothing.
  Started daemon = StartProgram(daemon_argv(true), env);
  ASSERT_TRUE(WaitFor([&] {
    return QueryDb(dir / "h.db", "SELECT count(*) FROM policy_action") >= 1;
  }, 20));
  usleep(1'500'000);  // every other process has had its chance to be named
  kill(daemon.pid, SIGTERM);
  RunResult dry = WaitProgram(daemon, 20);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.err.find("dry run: it records what it would do and signals nothing"),
            std::string::npos) << dry.err;
  EXPECT_NE(dry.err.find("would_stop pid " + target_pid), std::string::npos) << dry.err;
  EXPECT_EQ(QueryDb(dir / "h.db", "SELECT count(*) FROM policy_action"), 1) << dry.err;
  for (pid_t pid : {target.pid, allowed.pid, busy.pid}) EXPECT_TRUE(Running(pid)) << pid;

  // 2. Enabled: SIGTERM (ignored), then SIGKILL once the 2 s grace has passed.
  daemon = StartProgram(daemon_argv(false), env);
  const auto started = std::chrono::steady_clock::now();
  RunResult stopped_target = WaitProgram(target, 30);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(stopped_target.exit_code, 128 + SIGKILL);
  EXPECT_GE(took_s, 1.0 + 2.0) << "idle_held_for 1 s, then a grace of 2 s";
  usleep(1'500'000);  // anything else it would do, it would have done by now
  kill(daemon.pid, SIGTERM);
  RunResult enabled = WaitProgram(daemon, 20);
  ASSERT_EQ(enabled.exit_code, 0) << enabled.err;
  EXPECT_NE(enabled.err.find("sigterm pid " + target_pid), std::string::npos) << enabled.err;
  EXPECT_NE(enabled.err.find("sigkill pid " + target_pid), std::string::npos) << enabled.err;
  for (pid_t pid : {allowed.pid, busy.pid}) EXPECT_TRUE(Running(pid)) << pid;
  if (root) {
    EXPECT_TRUE(Running(other.pid));
  }

  // 3. The report shows each step, for the target alone.
  const json report = ReportJson({"--db", dir / "h.db", "--since", "1h"});
  ASSERT_EQ(report["policy_actions"].size(), 3u) << report["policy_actions"].dump(1);
  const std::vector<json> steps = ActionsOf(report, target_id);
  ASSERT_EQ(steps.size(), 3u) << report["policy_actions"].dump(1);
  const char* const kinds[] = {"would_stop", "sigterm", "sigkill"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(steps[i]["action"], kinds[i]);
    EXPECT_EQ(steps[i]["policy"], "stale");
    EXPECT_EQ(steps[i]["command"], "sleep");
    EXPECT_EQ(steps[i]["gpu_index"], 0);
    EXPECT_GE(steps[i]["idle_held_seconds"].get<double>(), 1.0);
  }
  RunResult text = RunProgram({CgovBinary(), "report", "--db", dir / "h.db", "--since", "1h"}, {});
  EXPECT_NE(text.out.find("Policy actions (3)"), std::string::npos) << text.out;
  // 4. And the same three steps reached the webhook, each once.
  ASSERT_TRUE(WaitFor([&] { return receiver->Delivered().size() >= 3; }, 10));
  const std::vector<json> notices = receiver->Delivered();
  ASSERT_EQ(notices.size(), 3u) << json(notices).dump(1);
  for (size_t i = 0; i < 3; ++i) {
    const json& b = notices[i]["body"];
    EXPECT_EQ(b["kind"], "policy");
    EXPECT_EQ(b["policy"]["action"], kinds[i]);
    EXPECT_EQ(b["pid"], target_id);
    EXPECT_EQ(SchemaErrors("notice.schema.json", b), "") << b.dump(1);
  }
  for (Started* s : {&allowed, &busy, &other}) {
    if (s->pid > 0) kill(s->pid, SIGKILL);
  }
}

TEST(PolicyE2E, BadPoliciesAreRefusedBeforeAnythingIsWritten) {
  TempDir dir;
  struct Case {
    std::string file, error;
  } cases[] = {
      {"[[policy]]\nname = \"p\"\nidle_held_for = \"4h\"\n", "policy.toml:1:1: policy: give its scope"},
      {"[[policy]]\nname = \"p\"\nusers = [\"*\"]\n", "policy.toml:1:1: policy: give idle_held_for"},
      {"[[policy]]\nname = \"p\"\nidle_held_for = \"4h\"\nusers = [\"a\"]\ngrace = \"2h\"\n",
       "policy.toml:5:9: grace: 2h is out of range"},
  };
  for (const Case& c : cases) {
    WriteFile(dir / "policy.toml", c.file);
    RunResult r = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--policy",
                              dir / "policy.toml"}, {});
    EXPECT_EQ(r.exit_code, 2) << c.file;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "h.db"));
  }
  RunResult lone = RunProgram({CgovBinary(), "daemon", "--db", dir / "h.db", "--policy-dry-run"},
                              {});
  EXPECT_EQ(lone.exit_code, 2);
  EXPECT_NE(lone.err.find("--policy-dry-run goes with --policy"), std::string::npos) << lone.err;
}

}  // namespace
}  // namespace cgov::e2e
